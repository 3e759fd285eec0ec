// SPDX-License-Identifier: Apache-2.0
/// Exact P||Cmax for small instances: bin completion on the decision problem, budgeted.
#pragma once

#include <orch/config.hpp>
#include <orch/detail/primitives/checked.hpp>
#include <orch/partition/bin_completion.hpp>
#include <orch/partition/bounds.hpp>
#include <orch/partition/budget.hpp>
#include <orch/partition/lpt.hpp>
#include <orch/partition/result.hpp>
#include <orch/quality.hpp>
#include <orch/types.hpp>

#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <numeric>
#include <span>
#include <vector>

namespace orch {

/// Options of the exact solver.
struct exact_options {
  /// Work units: one per search node (a partial bin extended by one item), plus one per 8
  /// items scanned when a bin is opened.
  std::int64_t work_budget = 2'000'000;
  /// Opt-in wall-clock limit for offline use (0: none). Makes results machine-dependent.
  double time_limit_ms = 0;
  /// An assignment to improve on (empty: LPT's). Its max load is the first upper bound.
  std::span<const rank_t> start = {};
};

namespace detail {

/// Branch and bound over capacities: bisection between the proven lower bound and the
/// incumbent, each capacity decided by bin completion under a slice of the budget. A
/// capacity proven infeasible raises the lower bound; a feasible one lowers the incumbent;
/// an undecided one is skipped upwards (no proof). `best` is improved in place.
inline void exact_search(std::span<const cost_t> costs, rank_t bins, std::vector<rank_t>& best,
                         cost_t& best_max, cost_t& proven, work_meter& meter) {
  bin_completion bc(costs, bins);
  proven = std::max(proven, pcmax_bound_sorted(bc.sorted(), bins, bc.total()));
  if (best_max > proven) {
    proven = lift_lower_bound(bc.sorted(), bins, proven, best_max);
  }
  std::vector<rank_t> trial;
  cost_t lo = proven;
  bool first = true;
  while (lo < best_max && !meter.exhausted()) {
    // First the bound itself (tight capacities prune hard and are often optimal), then
    // bisection on what is left.
    const cost_t c = first ? lo : lo + (best_max - 1 - lo) / 2;
    auto slice = meter.slice(first ? meter.left() / 2 : meter.left() / 2 + 1);
    first = false;
    const auto o = bc.decide(c, slice, trial);
    meter.absorb(slice);
    if (o == bin_completion::outcome::feasible) {
      const auto loads = bin_loads(costs, trial, bins);
      best_max = *std::max_element(loads.begin(), loads.end());
      best.swap(trial);
    } else {
      if (o == bin_completion::outcome::infeasible) {
        proven = std::max(proven, c + 1);
      }
      lo = c + 1;
    }
  }
}

} // namespace detail

/// Exact solver for P||Cmax: proves optimality when it finishes within its work budget.
/// Starts from `options.start` (or LPT), raises the lower bound max(⌈Σ/k⌉, p_max,
/// p_k + p_{k+1}, …) with bin-packing bounds (L2) of the decision problem, then decides
/// capacities between bound and incumbent by bin completion (see detail::bin_completion).
///
/// Complexity: exponential in the worst case; bounded by the work budget (one unit per
/// search node). Guarantee: `proven_optimal` is true only with a proof (max load equal to a
/// proven lower bound); otherwise the result is the best found, never worse than the start.
/// Determinism: work-counted budget, total tie-breaks; a time limit only when asked for.
/// Throws: orch::invalid_argument (k ≤ 0, negative cost, malformed start), orch::overflow.
[[nodiscard]] inline partition_result exact(std::span<const cost_t> costs, rank_t bins,
                                            const exact_options& options = {}) {
  detail::check_bins(bins, "exact");
  const cost_t total = detail::total_cost(costs, "exact");
  std::vector<rank_t> best;
  if (options.start.empty()) {
    best = detail::lpt_unchecked(costs, bins, total).bin_of;
  } else {
    if (options.start.size() != costs.size()) {
      throw_invalid_argument("exact: ", costs.size(), " costs but ", options.start.size(),
                             " start assignments");
    }
    best.assign(options.start.begin(), options.start.end());
  }
  const auto loads = bin_loads(costs, best, bins); // validates the start's bins
  cost_t best_max = loads.empty() ? 0 : *std::max_element(loads.begin(), loads.end());
  cost_t proven = 0;
  work_meter meter(options.work_budget, options.time_limit_ms);
  detail::exact_search(costs, bins, best, best_max, proven, meter);
  auto r = detail::make_result(costs, std::move(best), bins, "exact");
  r.lower_bound = std::max(r.lower_bound, proven);
  r.time_lower_bound = static_cast<double>(r.lower_bound);
  r.proven_optimal = r.max_load <= r.lower_bound;
  r.work = meter.used();
  return r;
}

} // namespace orch
