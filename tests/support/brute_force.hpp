// SPDX-License-Identifier: Apache-2.0
// Brute-force references for small instances: the exact optimum of P||Cmax by enumeration.
#pragma once

#include <orch/types.hpp>

#include <algorithm>
#include <cstddef>
#include <span>
#include <vector>

namespace orch::test {

/// Minimal largest bin over all k^n assignments (with the first item fixed to bin 0 and
/// symmetric empty bins skipped, which removes only equivalent assignments). For n <= ~12.
inline cost_t brute_force_optimum(std::span<const cost_t> costs, rank_t bins) {
  const std::size_t n = costs.size();
  std::vector<cost_t> load(static_cast<std::size_t>(bins), 0);
  cost_t best = 0;
  for (const auto c : costs) {
    best += c; // everything in one bin is always feasible
  }
  auto rec = [&](auto&& self, std::size_t i, rank_t used) -> void {
    const cost_t current = *std::max_element(load.begin(), load.end());
    if (current >= best) {
      return;
    }
    if (i == n) {
      best = current;
      return;
    }
    const rank_t limit = std::min<rank_t>(bins, used + 1); // bins ≥ used are all empty: try one
    for (rank_t b = 0; b < limit; ++b) {
      load[static_cast<std::size_t>(b)] += costs[i];
      self(self, i + 1, std::max<rank_t>(used, b + 1));
      load[static_cast<std::size_t>(b)] -= costs[i];
    }
  };
  rec(rec, 0, 0);
  return best;
}

} // namespace orch::test
