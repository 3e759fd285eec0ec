// SPDX-License-Identifier: Apache-2.0
/// What every peer checks before it runs, written on orch's public API only: k > 0, costs
/// non-negative, their sum within int64. Each error names the peer.
#pragma once

#include <orch/config.hpp>
#include <orch/types.hpp>

#include <cstddef>
#include <span>

namespace orch_bench::peers {

/// Throws orch::invalid_argument (k ≤ 0, a negative cost naming the item) or orch::overflow
/// (Σ costs past 2^63 − 1), each message starting with `name`.
inline void check_input(std::span<const orch::cost_t> costs, orch::rank_t bins, const char* name) {
  if (bins <= 0) {
    orch::throw_invalid_argument(name, ": number of bins must be positive, got ", bins);
  }
  orch::cost_t total = 0;
  for (std::size_t i = 0; i < costs.size(); ++i) {
    if (costs[i] < 0) {
      orch::throw_invalid_argument(name, ": item ", i, " has negative cost ", costs[i]);
    }
    if (__builtin_add_overflow(total, costs[i], &total)) {
      orch::throw_overflow(name, ": the sum of the costs passes 2^63 - 1 at item ", i);
    }
  }
}

/// ⌈a / b⌉ for a ≥ 0, b > 0.
[[nodiscard]] constexpr orch::index_t ceil_div(orch::index_t a, orch::index_t b) noexcept {
  return a / b + (a % b != 0 ? 1 : 0);
}

} // namespace orch_bench::peers
