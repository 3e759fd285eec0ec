// SPDX-License-Identifier: Apache-2.0
/// LPT under per-bin constraints (item counts, a second resource): the greedy that honours
/// them, the feasible start every constrained algorithm begins from, and constrained_lpt.
#pragma once

#include <orch/config.hpp>
#include <orch/detail/primitives/checked.hpp>
#include <orch/partition/bounds.hpp>
#include <orch/partition/constraints.hpp>
#include <orch/partition/order.hpp>
#include <orch/partition/result.hpp>
#include <orch/types.hpp>

#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <set>
#include <span>
#include <utility>
#include <vector>

namespace orch {

namespace detail {

/// Greedy under rules: items in `order`, each to the bin that finishes it first (the least
/// loaded one for equal speeds; ties: lower bin index) among those whose count and resource
/// limits admit it. When the items left are exactly what the bins below min_items still
/// need, only those bins are eligible. With `first_fit`, the lowest-index eligible bin is
/// taken instead (first-fit packing, blind to cost). Returns false if an item found no bin.
/// Complexity: O(n · (d log k + s)), d the distinct speeds, s the bins skipped for lack of
/// resource room (0 without a resource limit).
[[nodiscard]] inline bool constrained_greedy(std::span<const cost_t> costs, rank_t bins,
                                             const bin_rules& rules,
                                             std::span<const std::uint32_t> order,
                                             std::vector<rank_t>& bin_of, bool first_fit = false) {
  const auto k = static_cast<std::size_t>(bins);
  bin_of.assign(costs.size(), 0);
  std::vector<cost_t> load(k, 0);
  std::vector<cost_t> res(k, 0);
  std::vector<index_t> count(k, 0);
  // Bins grouped by speed; within a class the least-loaded bin finishes any item first.
  std::vector<cost_t> class_speed;
  std::vector<std::size_t> class_of(k, 0);
  for (std::size_t b = 0; b < k; ++b) {
    const cost_t s = rules.speed(static_cast<rank_t>(b));
    const auto it = std::find(class_speed.begin(), class_speed.end(), s);
    class_of[b] = static_cast<std::size_t>(it - class_speed.begin());
    if (it == class_speed.end()) {
      class_speed.push_back(s);
    }
  }
  using entry = std::pair<cost_t, rank_t>;
  std::vector<std::set<entry>> open(class_speed.size());    // bins below max_items
  std::vector<std::set<entry>> deficit(class_speed.size()); // bins below min_items
  for (std::size_t b = 0; b < k; ++b) {
    open[class_of[b]].insert({0, static_cast<rank_t>(b)});
    if (rules.min_items > 0) {
      deficit[class_of[b]].insert({0, static_cast<rank_t>(b)});
    }
  }
  index_t need = rules.min_items * static_cast<index_t>(k); // Σ max(0, min − count)
  auto remaining = static_cast<index_t>(order.size());
  for (const std::uint32_t item : order) {
    const cost_t c = costs[item];
    const cost_t r = rules.res(item);
    auto& pool = remaining <= need ? deficit : open;
    rank_t best = -1;
    cost_t best_load = 0;
    if (first_fit) {
      const bool only_deficit = remaining <= need;
      for (std::size_t b = 0; b < k && best < 0; ++b) {
        const bool room = rules.max_items == 0 || count[b] < rules.max_items;
        const bool short_of_min = count[b] < rules.min_items;
        if ((only_deficit ? short_of_min : room) &&
            (!rules.has_resource() || res[b] + r <= rules.resource_capacity)) {
          best = static_cast<rank_t>(b);
        }
      }
    }
    for (std::size_t cls = 0; cls < pool.size() && !first_fit; ++cls) {
      for (const auto& [l, b] : pool[cls]) {
        if (rules.has_resource() &&
            res[static_cast<std::size_t>(b)] + r > rules.resource_capacity) {
          continue;
        }
        const cost_t sb = class_speed[cls];
        if (best < 0 || time_less(l + c, sb, best_load + c, rules.speed(best)) ||
            (!time_less(best_load + c, rules.speed(best), l + c, sb) && b < best)) {
          best = b;
          best_load = l;
        }
        break; // later bins of this class are loaded at least as much
      }
    }
    if (best < 0) {
      return false;
    }
    const auto bb = static_cast<std::size_t>(best);
    const std::size_t cls = class_of[bb];
    open[cls].erase({load[bb], best});
    const bool was_deficit = count[bb] < rules.min_items;
    if (was_deficit) {
      deficit[cls].erase({load[bb], best});
      --need;
    }
    load[bb] += c;
    res[bb] += r;
    ++count[bb];
    --remaining;
    bin_of[item] = best;
    if (rules.max_items == 0 || count[bb] < rules.max_items) {
      open[cls].insert({load[bb], best});
    }
    if (count[bb] < rules.min_items) {
      deficit[cls].insert({load[bb], best});
    }
  }
  return true;
}

/// A first assignment that meets the rules: the greedy by cost; if it strands an item and a
/// second resource is set, by that resource descending (heaviest first, least loaded), then
/// first-fit-decreasing on the resource (pure packing). False if all three strand an item.
[[nodiscard]] inline bool feasible_start(std::span<const cost_t> costs, rank_t bins,
                                         const bin_rules& rules,
                                         std::span<const std::uint32_t> order,
                                         std::vector<rank_t>& bin_of) {
  if (constrained_greedy(costs, bins, rules, order, bin_of)) {
    return true;
  }
  if (!rules.has_resource()) {
    return false;
  }
  std::vector<std::uint32_t> by_res(order.begin(), order.end());
  std::stable_sort(by_res.begin(), by_res.end(),
                   [&](std::uint32_t a, std::uint32_t b) { return rules.res(a) > rules.res(b); });
  return constrained_greedy(costs, bins, rules, by_res, bin_of) ||
         constrained_greedy(costs, bins, rules, by_res, bin_of, true);
}

} // namespace detail

/// LPT under constraints: items by cost descending, each to the least-loaded bin whose item
/// count and second-resource room admit it (with equal counts, bins short of ⌊n/k⌋ items are
/// served first once the items left are just enough for them). If that greedy strands an
/// item, it retries with items by second resource descending (least loaded, then
/// first-fit-decreasing on the resource), which packs tight capacities far more often.
///
/// Complexity: O(n log n + n · s log k), s the bins skipped for lack of resource room.
/// Guarantee: none in general (constraints can make greedy arbitrarily bad); with only
/// max_items_per_bin it is the cardinality-constrained LPT of Babel, Kellerer and Kotov.
/// Throws: orch::invalid_argument (malformed input), orch::infeasible (a limit no assignment
/// can meet, or — message says so — no assignment found by the greedy).
[[nodiscard]] inline partition_result constrained_lpt(std::span<const cost_t> costs, rank_t bins,
                                                      const bin_constraints& constraints) {
  detail::check_bins(bins, "constrained_lpt");
  const cost_t total = detail::total_cost(costs, "constrained_lpt");
  const auto rules = detail::make_rules(costs.size(), bins, constraints, {}, "constrained_lpt");
  std::vector<rank_t> bin_of;
  const auto order = detail::order_desc(costs);
  const bool ok = detail::feasible_start(costs, bins, rules, order, bin_of);
  if (!ok) {
    throw_infeasible("constrained_lpt: greedy found no assignment of ", costs.size(), " items to ",
                     bins, " bins within max_items_per_bin = ", rules.max_items,
                     ", second_capacity = ", rules.resource_capacity,
                     " (no proof that none exists)");
  }
  const auto sorted = detail::sorted_desc(costs);
  const cost_t bound = std::max(detail::pcmax_bound_sorted(sorted, bins, total),
                                detail::cardinality_bound(sorted, rules.min_items));
  auto r = detail::make_result(costs, std::move(bin_of), bins, "constrained_lpt");
  r.lower_bound = std::max(r.lower_bound, bound);
  r.time_lower_bound = static_cast<double>(r.lower_bound);
  r.proven_optimal = r.max_load <= r.lower_bound;
  return r;
}

} // namespace orch
