// SPDX-License-Identifier: Apache-2.0
/// Local search that improves any assignment: moves and swaps out of the critical bin.
#pragma once

#include <orch/config.hpp>
#include <orch/detail/primitives/checked.hpp>
#include <orch/partition/bounds.hpp>
#include <orch/partition/budget.hpp>
#include <orch/partition/constraints.hpp>
#include <orch/partition/improver.hpp>
#include <orch/partition/result.hpp>
#include <orch/quality.hpp>
#include <orch/types.hpp>

#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <span>
#include <string>
#include <utility>
#include <vector>

namespace orch {

/// What local search may try and how long.
struct local_search_options {
  /// Work units: one per evaluated move or swap candidate, one per bisection, one per pair
  /// of items indexed for pair swaps.
  std::int64_t work_budget = 2'000'000;
  /// A proven lower bound on the largest bin: search stops once it is reached, and the result
  /// reports it. 0: orch::lower_bound of the costs.
  cost_t target = 0;
  /// Also try moves of two items and 2–1, 1–2 and 2–2 swaps (else moves and 1–1 swaps only).
  bool pair_moves = true;
  /// Per critical bin, try at most this many partner bins, least loaded first (0: all). At
  /// thousands of bins the least-loaded few almost always hold the improving move.
  rank_t partners = 0;
  /// When moves and swaps are exhausted: the best split of the critical bin's and a
  /// partner's items together, over all 2^m subsets, for pairs of bins holding m ≤ this many
  /// items (0: off; at most 24). Covers every k-for-l swap between the two bins.
  int repartition_items = 10;
  /// Opt-in wall-clock limit for offline use (0: none). Makes the result machine-dependent.
  double time_limit_ms = 0;
};

namespace detail {

/// Validates an assignment given as a starting point: one bin in [0, k) per item.
inline void check_assignment(std::span<const cost_t> costs, std::span<const rank_t> bin_of,
                             rank_t bins, const char* where) {
  if (bin_of.size() != costs.size()) {
    throw_invalid_argument(where, ": ", costs.size(), " costs but ", bin_of.size(),
                           " bin assignments");
  }
  for (std::size_t i = 0; i < bin_of.size(); ++i) {
    if (bin_of[i] < 0 || bin_of[i] >= bins) {
      throw_invalid_argument(where, ": item ", i, " is assigned to bin ", bin_of[i],
                             " outside [0, ", bins, ")");
    }
  }
}

/// Which neighbourhoods the engine explores (see local_search_options).
struct search_plan {
  bool pair_moves = true;
  rank_t partners = 0;
  int repartition_items = 0;
};

/// Local search under rules from a valid start; `bound` (cost units) and `tb` (time) are
/// proven lower bounds: the search stops when the critical bin reaches tb. `order` (items by
/// cost descending, index ascending; computed when empty) and, when `start` is LPT's
/// assignment, its trace (`order_cost`, `order_bin`) only save work: the result is the same.
[[nodiscard]] inline partition_result
improve(std::span<const cost_t> costs, rank_t bins, std::span<const rank_t> start,
        const bin_rules& rules, cost_t bound, time_bound tb, work_meter& meter,
        const search_plan& plan, std::string algorithm, std::span<const std::uint32_t> order = {},
        std::span<const cost_t> order_cost = {}, std::span<const rank_t> order_bin = {}) {
  const std::int64_t before = meter.used();
  improver engine(costs, bins, start, rules, order, order_cost, order_bin);
  engine.run(meter, tb.num, tb.den, plan.pair_moves, plan.partners, plan.repartition_items);
  improver_state& state = engine.state();
  const cost_t simple = state.simple_bound();
  auto r = finish_result_with_loads(state.take_bin_of(), state.take_loads(), simple, rules, bound,
                                    tb, std::move(algorithm));
  r.work = meter.used() - before;
  return r;
}

/// orch::local_search for internal callers that run many searches on input they validated
/// themselves (node_first: one per node, a few dozen items each): no checks, no result
/// object, and one engine whose buffers every call reuses. On valid input the assignment and
/// largest load are exactly local_search's.
class local_searcher {
public:
  /// Improves `start` as local_search(costs, bins, start, options) does; returns the largest
  /// load, the assignment is in bin_of(). Costs non-negative with a representable sum, bins
  /// ≥ 1, `start` within [0, bins) (callers validate).
  /// Complexity: as local_search, plus O(n + bins) set-up without allocations once the
  /// buffers have grown.
  /// Throws: nothing but std::bad_alloc (no validation: invalid input is undefined).
  cost_t run(std::span<const cost_t> costs, rank_t bins, std::span<const rank_t> start,
             const local_search_options& options) {
    engine_.state().reset(costs, bins, start, bin_rules{});
    return search(options);
  }

  /// run() from an assignment the caller hands over (no copy of it is made).
  cost_t run(std::span<const cost_t> costs, rank_t bins, std::vector<rank_t>&& start,
             const local_search_options& options) {
    engine_.state().reset(costs, bins, std::move(start), bin_rules{});
    return search(options);
  }

  /// The assignment of the last run() (valid until the next one).
  [[nodiscard]] const std::vector<rank_t>& bin_of() const noexcept {
    return engine_.state().bin_of();
  }
  /// Moves the assignment of the last run() out.
  [[nodiscard]] std::vector<rank_t> take_bin_of() { return engine_.state().take_bin_of(); }

private:
  cost_t search(const local_search_options& options) {
    // local_search's bound max(target, ⌈Σ/k⌉, max cost), from the engine's loads and lists.
    const cost_t bound = std::max(options.target, engine_.state().simple_bound());
    work_meter meter(options.work_budget, options.time_limit_ms);
    engine_.run(meter, bound, 1, options.pair_moves, options.partners, options.repartition_items);
    return engine_.state().max_load();
  }

  improver engine_;
};

} // namespace detail

/// Improves an assignment by moves and swaps out of the critical (largest) bin: moving one or
/// two items, and 1–1, 2–1, 1–2 and 2–2 swaps with a less-loaded bin, each step lowering the
/// critical bin and keeping its partner below the old maximum (so the number of bins at the
/// maximum, or the maximum, drops). Among a partner's candidates the one that best balances
/// the two bins wins; partners are tried least loaded first.
///
/// Stops at `options.target` (a proven lower bound), at a local optimum, or when the work
/// budget is spent. Never returns a worse assignment than `start`.
/// Complexity: per step O(a·log b) for moves and 1–1 swaps and O(a²·log b² + b² log b) for
/// pair operations, a and b the item counts of the two bins, times the partners tried.
/// Guarantee: max load ≤ that of `start`.
/// Determinism: total tie-breaks everywhere; the budget counts work, not time.
/// Throws: orch::invalid_argument (k ≤ 0, negative cost, `start` malformed), orch::overflow.
[[nodiscard]] inline partition_result local_search(std::span<const cost_t> costs, rank_t bins,
                                                   std::span<const rank_t> start,
                                                   const local_search_options& options = {}) {
  detail::check_bins(bins, "local_search");
  const cost_t total = detail::total_cost(costs, "local_search");
  detail::check_assignment(costs, start, bins, "local_search");
  const cost_t largest = costs.empty() ? 0 : *std::max_element(costs.begin(), costs.end());
  const cost_t bound = std::max({options.target, detail::ceil_div(total, bins), largest});
  work_meter meter(options.work_budget, options.time_limit_ms);
  return detail::improve(costs, bins, start, detail::bin_rules{}, bound, {bound, 1}, meter,
                         {options.pair_moves, options.partners, options.repartition_items},
                         "local_search");
}

} // namespace orch
