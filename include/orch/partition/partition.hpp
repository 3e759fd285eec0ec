// SPDX-License-Identifier: Apache-2.0
/// orch::partition, the entry point: picks and chains the partitioners by regime.
#pragma once

#include <orch/config.hpp>
#include <orch/detail/primitives/checked.hpp>
#include <orch/partition/algorithm.hpp>
#include <orch/partition/budget.hpp>
#include <orch/partition/constraints.hpp>
#include <orch/partition/groups.hpp>
#include <orch/partition/options.hpp>
#include <orch/partition/portfolio.hpp>
#include <orch/partition/result.hpp>
#include <orch/types.hpp>

#include <algorithm>
#include <bit>
#include <cstddef>
#include <cstdint>
#include <span>
#include <string>
#include <vector>

namespace orch {

namespace detail {

/// Item indices are 32-bit inside the algorithms; checked before any pass over the items.
inline void check_item_count(std::size_t n) {
  if (n >= (std::size_t{1} << 32)) {
    throw_invalid_argument("partition: at most 2^32 − 1 items, got ", n);
  }
}

/// orch::partition without groups (options.groups is ignored).
[[nodiscard]] inline partition_result
partition_ungrouped(std::span<const cost_t> costs, rank_t bins, const partition_options& options) {
  check_bins(bins, "partition");
  check_item_count(costs.size());
  const cost_t total = total_cost(costs, "partition");
  if (static_cast<std::uint8_t>(options.algorithm) >
      static_cast<std::uint8_t>(partition_algorithm::exact)) {
    throw_invalid_argument(
        "partition: unknown algorithm value ", static_cast<int>(options.algorithm),
        " (expected 0 to 6: auto, lpt, lpt+ls, kk, multifit, subset_sum, exact)");
  }
  if (options.work_budget < 0) {
    throw_invalid_argument("partition: work_budget must be ≥ 0, got ", options.work_budget);
  }
  const bin_constraints constraints{options.max_items_per_bin, options.equal_counts,
                                    options.second_resource, options.second_capacity};
  const auto rules = make_rules(costs.size(), bins, constraints, options.speeds, "partition");
  work_meter meter(options.work_budget, options.time_limit_ms);
  const std::int64_t before = meter.used();
  auto r = rules.has_limits() || rules.has_speeds()
               ? ruled_partition(costs, bins, total, rules, options, meter)
               : plain_partition(costs, bins, total, options, meter);
  r.work = std::max(r.work, meter.used() - before);
  apply_common_speed(r, rules);
  return r;
}

/// orch::partition with keep-together groups: the groups as super-items, then back to items.
[[nodiscard]] inline partition_result grouped_partition(std::span<const cost_t> costs, rank_t bins,
                                                        const partition_options& options) {
  check_bins(bins, "partition");
  check_item_count(costs.size());
  static_cast<void>(total_cost(costs, "partition"));
  const auto g = contract_groups(costs, options.groups, options.second_resource, "partition");
  const auto limits = limits_for_groups(g, bins, options.max_items_per_bin, options.equal_counts,
                                        options.second_capacity, "partition");
  partition_options inner = options;
  inner.groups = {};
  inner.max_items_per_bin = limits.max_items;
  inner.equal_counts = limits.equal_counts;
  inner.second_resource = g.resource;
  if (!limits.count_resource.empty()) {
    inner.second_resource = limits.count_resource;
    inner.second_capacity = options.max_items_per_bin;
  }
  partition_result r;
  try {
    r = partition_ungrouped(g.cost, bins, inner);
  } catch (const infeasible& e) {
    if (limits.count_resource.empty()) {
      std::string why = e.what();
      why.erase(0, why.rfind("partition: ", 0) == 0 ? 11 : 0);
      throw_infeasible("partition: with ", g.count(), " groups (", costs.size(), " items), ", why);
    }
    throw_infeasible("partition: no assignment of ", g.count(), " groups (", costs.size(),
                     " items) to ", bins,
                     " bins found within max_items_per_bin = ", options.max_items_per_bin,
                     " items (greedy by cost, by group size and first-fit all failed; no proof"
                     " that none exists)");
  }
  r.bin_of = g.expand(r.bin_of);
  return r;
}

} // namespace detail

/// Balances item costs over `bins` bins, minimising the largest bin (P||Cmax), under the
/// constraints in `options`. The default ("auto") chains algorithms by regime:
/// - trivial cases (k = 1, n ≤ k, LPT at the bound): LPT, which is then optimal;
/// - many items per bin (n ≥ 8k): LPT, then local search (moves and swaps out of the
///   critical bin, least-loaded partners first) until the bound, a local optimum or the
///   budget;
/// - few items per bin: LPT, Karmarkar–Karp and MULTIFIT, local search from each (with
///   pair swaps and exact two-bin repartitions), then branch and bound (bin completion
///   over capacities between the bound and the incumbent) with what is left of the budget;
/// - constraints or speeds: a greedy that honours them (least finish time among admissible
///   bins), then local search under them.
/// With `groups`, the groups are contracted into super-items (orch::contract_groups),
/// partitioned as above under the item-level limits, and expanded: every group in one bin.
/// Returns the best assignment with its loads, the strongest lower bound proven,
/// `proven_optimal`, `algorithm` naming the chain ("kk+ls+exact", "lpt+ls", ...) and the
/// work spent.
///
/// Complexity: O(n log n) for the greedy stages plus at most `work_budget` work units.
/// Guarantee: never worse than LPT ((4/3 − 1/(3k))·OPT without constraints; (2 − 2/(k+1))
/// with speeds); with constraints, no general ratio. With groups, guarantees and bounds refer
/// to the grouped instance (whose optimum may exceed the ungrouped one).
/// Determinism: the same input gives the same result on every rank and compiler (integer
/// arithmetic, total tie-breaks, work-counted budgets); only an explicit time_limit_ms can
/// break that.
/// Throws: orch::invalid_argument (k ≤ 0, a negative cost, malformed constraints or speeds,
/// an unknown algorithm, constraints with an algorithm that ignores them; with groups: wrong
/// size, an id below −1, equal_counts with unequal group sizes, max_items_per_bin with
/// second_resource and unequal group sizes), orch::infeasible (a limit no assignment can
/// meet, naming it — with groups, the group and the limit), orch::overflow (Σ costs or Σ
/// speeds).
[[nodiscard]] inline partition_result partition(std::span<const cost_t> costs, rank_t bins,
                                                const partition_options& options = {}) {
  return options.groups.empty() ? detail::partition_ungrouped(costs, bins, options)
                                : detail::grouped_partition(costs, bins, options);
}

} // namespace orch
