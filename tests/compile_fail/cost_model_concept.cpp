// SPDX-License-Identifier: Apache-2.0
// orch::cost_model must reject a model whose call does not return cost_t (a float here): a
// floating-point cost could decide different plans on different ranks.
#include <orch/cost.hpp>

namespace {

struct float_cost {
#ifdef ORCH_COMPILE_FAIL_CONTROL
  orch::cost_t operator()(orch::length_t l) const {
    return l;
  }
#else
  double operator()(orch::length_t l) const {
    return static_cast<double>(l) * 1.5;
  }
#endif
};

template <orch::cost_model Model>
orch::cost_t use(const Model& m) {
  return m(3);
}

} // namespace

orch::cost_t compile_fail_probe() {
  return use(float_cost{});
}
