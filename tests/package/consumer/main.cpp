// SPDX-License-Identifier: Apache-2.0
// A consumer of the installed / embedded orch: balances a few lengths and checks the result.
#include <orch/orch.hpp>

#include <cstdio>
#include <vector>

int main() {
  const std::vector<orch::length_t> lengths{700, 20, 500, 300, 300, 200, 100, 900};
  const auto costs = orch::compute_costs(orch::attention_cost{1, 1, 0}, lengths);
  const auto result = orch::lpt(costs, 3);
  if (result.bin_of.size() != lengths.size() || result.max_load < result.lower_bound) {
    std::puts("orch consumer: wrong result");
    return 1;
  }
  std::printf("orch %d: max load %lld, lower bound %lld\n", orch::version,
              static_cast<long long>(result.max_load), static_cast<long long>(result.lower_bound));
  return 0;
}
