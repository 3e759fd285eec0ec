// SPDX-License-Identifier: Apache-2.0
/// LPT on uniform machines: bins with integer speeds, minimising the largest load / speed.
#pragma once

#include <orch/config.hpp>
#include <orch/partition/bounds.hpp>
#include <orch/partition/constrained_lpt.hpp>
#include <orch/partition/constraints.hpp>
#include <orch/partition/lpt.hpp>
#include <orch/partition/order.hpp>
#include <orch/partition/result.hpp>
#include <orch/quality.hpp>
#include <orch/types.hpp>

#include <cstddef>
#include <cstdint>
#include <span>
#include <vector>

namespace orch {

/// LPT for uniform machines (Q||Cmax): bin r runs at integer speed s_r, so a load L takes
/// L / s_r; items by cost descending (ties: lower index) each go to the bin where they would
/// finish first, min over r of (L_r + c) / s_r (ties: lower bin index). Times are compared as
/// fractions by cross-multiplication in 128 bits, never rounded. Straggler-aware balancing:
/// give a slow rank a smaller speed.
///
/// The result's `max_time` is max_r L_r / s_r, `time_lower_bound` the bound of Q||Cmax
/// (for every j, the j largest items over the j fastest speeds, and Σc / Σs), and
/// `proven_optimal` says max_time equals it. `max_load` / `lower_bound` stay in cost units.
/// With all speeds equal this is exactly orch::lpt.
///
/// Complexity: O(n log n + n · d log k), d the number of distinct speeds.
/// Guarantee: max time ≤ (2 − 2/(k + 1)) · OPT (Gonzalez, Ibarra and Sahni 1977).
/// Throws: orch::invalid_argument (no speeds, a speed ≤ 0, negative cost), orch::overflow
/// (Σ costs or Σ speeds).
[[nodiscard]] inline partition_result lpt_speeds(std::span<const cost_t> costs,
                                                 std::span<const cost_t> speeds) {
  if (speeds.empty() || speeds.size() > static_cast<std::size_t>(INT32_MAX)) {
    throw_invalid_argument("lpt_speeds: need between 1 and 2^31 − 1 speeds, got ", speeds.size());
  }
  const auto bins = static_cast<rank_t>(speeds.size());
  const cost_t total = detail::total_cost(costs, "lpt_speeds");
  const auto rules = detail::make_rules(costs.size(), bins, {}, speeds, "lpt_speeds");
  if (!rules.has_speeds()) {
    auto r = detail::lpt_unchecked(costs, bins, total);
    detail::apply_common_speed(r, rules);
    return r;
  }
  const auto order = detail::order_desc(costs);
  std::vector<rank_t> bin_of;
  const bool ok = detail::constrained_greedy(costs, bins, rules, order, bin_of);
  ORCH_ASSERT(ok); // without limits every bin is always eligible
  static_cast<void>(ok);
  const auto sorted = detail::sorted_desc(costs);
  return detail::finish_result(costs, std::move(bin_of), bins, rules,
                               detail::pcmax_bound_sorted(sorted, bins, total),
                               detail::speed_time_bound(sorted, rules.speeds), "lpt_speeds");
}

} // namespace orch
