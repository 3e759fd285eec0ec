// SPDX-License-Identifier: Apache-2.0
/// The algorithm chains behind orch::partition, by instance: few items per bin (LPT, KK and
/// MULTIFIT, each improved, then the exact search), many items per bin (plain_partition's
/// greedy and local search), and per-bin constraints or speeds (ruled_partition).
#pragma once

#include <orch/config.hpp>
#include <orch/detail/primitives/checked.hpp>
#include <orch/detail/tuning.hpp>
#include <orch/partition/algorithm.hpp>
#include <orch/partition/bounds.hpp>
#include <orch/partition/budget.hpp>
#include <orch/partition/constrained_lpt.hpp>
#include <orch/partition/constraints.hpp>
#include <orch/partition/exact.hpp>
#include <orch/partition/groups.hpp>
#include <orch/partition/kk.hpp>
#include <orch/partition/local_search.hpp>
#include <orch/partition/lpt.hpp>
#include <orch/partition/lpt_speeds.hpp>
#include <orch/partition/multifit.hpp>
#include <orch/partition/options.hpp>
#include <orch/partition/order.hpp>
#include <orch/partition/result.hpp>
#include <orch/partition/subset_sum.hpp>
#include <orch/quality.hpp>
#include <orch/types.hpp>

#include <algorithm>
#include <bit>
#include <cstddef>
#include <cstdint>
#include <span>
#include <string>
#include <vector>

namespace orch::detail {

// many_items_per_bin, pair_moves_items_per_bin, exact_max_items, wide_bins: orch/detail/tuning.hpp.

/// Keeps the best assignment seen and the name of the chain that produced it.
struct incumbent {
  std::vector<rank_t> bin_of;
  cost_t max_load = -1;
  std::string name;

  void offer(const partition_result& r, const std::string& chain) {
    if (max_load < 0 || r.max_load < max_load) {
      bin_of = r.bin_of;
      max_load = r.max_load;
      name = chain;
    }
  }
};

/// Few items per bin (or "exact"): best of LPT, KK and MULTIFIT, local search from each,
/// then the exact search with what is left of the budget. `trace`: LPT's visit (its order
/// and costs are the order and the sorted costs every stage here starts from).
[[nodiscard]] inline partition_result few_items_chain(std::span<const cost_t> costs, rank_t bins,
                                                      cost_t total, work_meter& meter,
                                                      std::size_t exact_limit,
                                                      const partition_result& lpt_start,
                                                      const lpt_trace& trace) {
  // The exact stage runs when n ≤ exact_limit (its nodes cost O(n) each).
  const bool exact_stage = costs.size() <= exact_limit;
  const std::vector<std::uint32_t>& order = trace.order;
  const std::vector<cost_t>& sorted = trace.cost;
  const cost_t bound = pcmax_bound_sorted(sorted, bins, total);
  const std::int64_t budget = meter.left();
  search_plan plan;
  plan.partners = bins > wide_bins ? 16 : 0;
  plan.repartition_items = 10;
  incumbent best;
  std::vector<partition_result> starts;
  starts.push_back(lpt_start);
  {
    auto slice = meter.slice(budget / 4);
    differencing kk(costs, order, bins);
    if (kk.run(slice)) {
      starts.push_back(make_result(costs, kk.assignment(), bins, "kk"));
    }
    meter.absorb(slice);
  }
  // MULTIFIT's bisection: one FFD pass of n log k per halving of [bound, max(2Σ/k, p_max)];
  // charged n units per pass, and only run when that fits in what is left (a failed charge
  // would end the whole chain).
  const cost_t start = multifit_start_capacity(total, bins, sorted.empty() ? 0 : sorted.front());
  const auto passes = 1 + static_cast<std::int64_t>(std::bit_width(
                              static_cast<std::uint64_t>(std::max<cost_t>(0, start - bound))));
  const auto multifit_cost = passes * static_cast<std::int64_t>(costs.size());
  if (meter.left() >= multifit_cost) {
    meter.spend(multifit_cost);
    starts.push_back(multifit_with(costs, bins, order, total, bound, 0));
  }
  for (const auto& s : starts) {
    best.offer(s, s.algorithm);
  }
  for (const auto& s : starts) {
    if (best.max_load <= bound || meter.exhausted()) {
      break;
    }
    // Without an exact stage to follow (large n), local search gets the budget.
    auto slice = meter.slice(exact_stage ? budget / 8 : budget / 3);
    const auto r =
        improve(costs, bins, s.bin_of, bin_rules{}, bound, {bound, 1}, slice, plan, "ls", order);
    meter.absorb(slice);
    best.offer(r, s.algorithm + "+ls");
  }
  cost_t proven = bound;
  if (exact_stage && best.max_load > bound && !meter.exhausted()) {
    const cost_t before = best.max_load;
    exact_search(costs, bins, best.bin_of, best.max_load, proven, meter);
    if (best.max_load < before || best.max_load <= proven) {
      best.name += "+exact";
    }
  }
  auto r = make_result(costs, std::move(best.bin_of), bins, std::move(best.name));
  r.lower_bound = std::max(r.lower_bound, proven);
  r.time_lower_bound = static_cast<double>(r.lower_bound);
  r.proven_optimal = r.max_load <= r.lower_bound;
  return r;
}

/// Unconstrained, equal speeds.
[[nodiscard]] inline partition_result plain_partition(std::span<const cost_t> costs, rank_t bins,
                                                      cost_t total,
                                                      const partition_options& options,
                                                      work_meter& meter) {
  const partition_algorithm algo = options.algorithm;
  const auto n = costs.size();
  if (algo == partition_algorithm::kk) {
    kk_options o;
    o.work_budget = options.work_budget;
    return karmarkar_karp(costs, bins, o);
  }
  if (algo == partition_algorithm::multifit) {
    return multifit(costs, bins);
  }
  if (algo == partition_algorithm::subset_sum) {
    subset_sum_options o;
    o.work_budget = options.work_budget;
    return subset_sum_partition(costs, bins, o);
  }
  // The later stages start from LPT's visit (order, sorted costs, start bins); plain LPT
  // does not need it recorded.
  lpt_trace trace;
  auto start =
      lpt_unchecked(costs, bins, total, algo == partition_algorithm::lpt ? nullptr : &trace);
  const std::vector<std::uint32_t>& order = trace.order;
  if (algo == partition_algorithm::lpt) {
    return start;
  }
  // LPT is optimal with one bin, with at most one item per bin, and at the bound.
  const bool trivial =
      bins == 1 || n <= static_cast<std::size_t>(bins) || start.max_load <= start.lower_bound;
  if (algo == partition_algorithm::exact) {
    if (trivial) {
      start.algorithm = "exact";
      return start;
    }
    // Asked for explicitly: the exact stage runs at any size.
    auto r = few_items_chain(costs, bins, total, meter, SIZE_MAX, start, trace);
    r.algorithm = "exact(" + r.algorithm + ")";
    return r;
  }
  if (trivial) {
    return start;
  }
  if (algo == partition_algorithm::lpt_ls ||
      n >= many_items_per_bin * static_cast<std::size_t>(bins)) {
    search_plan plan;
    plan.partners = bins > wide_bins ? 16 : 0;
    plan.repartition_items = 0;
    // Pair operations index a partner's pairs (quadratic in its items): worth it only while
    // bins are small; with many items per bin, moves and 1–1 swaps find enough.
    plan.pair_moves = n <= pair_moves_items_per_bin * static_cast<std::size_t>(bins);
    // Stop within tolerance_ppm of the bound (the reported bound stays the proven one).
    const cost_t stop = static_cast<cost_t>(
        start.lower_bound + static_cast<int128>(start.lower_bound) *
                                std::max<std::int64_t>(options.tolerance_ppm, 0) / 1'000'000);
    if (start.max_load <= stop) {
      return start;
    }
    auto r = improve(costs, bins, start.bin_of, bin_rules{}, start.lower_bound, {stop, 1}, meter,
                     plan, "lpt+ls", order, trace.cost, trace.bin);
    // Short of the target: first-fit-decreasing into bins of exactly the target often packs
    // many small items perfectly where moves stall (one O(n log k) pass, charged n units).
    std::vector<rank_t> packed;
    if (r.max_load > stop && meter.spend(static_cast<std::int64_t>(n)) &&
        ffd(costs, order, bins, stop, packed, trace.cost)) {
      auto f = make_result(costs, std::move(packed), bins, "lpt+ls+ffd");
      f.work = meter.used();
      return f;
    }
    return r;
  }
  return few_items_chain(costs, bins, total, meter, exact_max_items, start, trace);
}

/// With constraints or speeds: a greedy that honours them, then local search under them.
[[nodiscard]] inline partition_result ruled_partition(std::span<const cost_t> costs, rank_t bins,
                                                      cost_t total, const bin_rules& rules,
                                                      const partition_options& options,
                                                      work_meter& meter) {
  const partition_algorithm algo = options.algorithm;
  if (algo != partition_algorithm::automatic && algo != partition_algorithm::lpt &&
      algo != partition_algorithm::lpt_ls) {
    throw_invalid_argument("partition: algorithm \"", to_string(algo),
                           "\" does not support constraints or speeds (use auto, lpt or lpt+ls)");
  }
  const auto order = order_desc(costs);
  std::vector<rank_t> bin_of;
  const bool ok = feasible_start(costs, bins, rules, order, bin_of);
  if (!ok) {
    throw_infeasible("partition: no assignment of ", costs.size(), " items to ", bins,
                     " bins found within max_items_per_bin = ", rules.max_items,
                     rules.min_items > 0 ? " (equal counts)" : "",
                     " and second_capacity = ", rules.resource_capacity,
                     " (greedy by cost, by second resource and first-fit all failed; no proof"
                     " that none exists)");
  }
  const auto sorted = sorted_desc(costs);
  const cost_t bound =
      std::max(pcmax_bound_sorted(sorted, bins, total), cardinality_bound(sorted, rules.min_items));
  const time_bound tb =
      rules.has_speeds() ? speed_time_bound(sorted, rules.speeds) : time_bound{bound, 1};
  const std::string base =
      rules.has_speeds() && !rules.has_limits() ? "lpt_speeds" : "constrained_lpt";
  if (algo == partition_algorithm::lpt) {
    return finish_result(costs, std::move(bin_of), bins, rules, bound, tb, base);
  }
  search_plan plan;
  plan.partners = bins > wide_bins ? 8 : 0;
  plan.repartition_items =
      costs.size() < many_items_per_bin * static_cast<std::size_t>(bins) ? 10 : 0;
  return improve(costs, bins, bin_of, rules, bound, tb, meter, plan, base + "+ls", order);
}

} // namespace orch::detail
