// SPDX-License-Identifier: Apache-2.0
// orch::pack_items must reject an item callable that does not return bytes (a span of ints
// here): packing would otherwise copy items of the wrong size and type without a diagnostic.
#include <orch/exchange/payload.hpp>

#include <cstddef>
#include <span>

namespace {

struct ints_source {
#ifdef ORCH_COMPILE_FAIL_CONTROL
  std::span<const std::byte> operator()(orch::index_t) const {
    return {};
  }
#else
  std::span<const int> operator()(orch::index_t) const {
    return {};
  }
#endif
};

} // namespace

void compile_fail_probe(const orch::rank_view& view, std::span<std::byte> send) {
  orch::pack_items(view, ints_source{}, send);
}
