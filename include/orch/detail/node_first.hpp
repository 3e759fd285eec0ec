// SPDX-License-Identifier: Apache-2.0
/// Internals of orch/locality.hpp: the "node first" candidate of locality_balance, for
/// targets so tight that packing leftovers into other ranks' room fails.
#pragma once

#include <orch/config.hpp>
#include <orch/detail/checked.hpp>
#include <orch/detail/locality_input.hpp>
#include <orch/detail/packing.hpp>
#include <orch/partition/local_search.hpp>
#include <orch/topology.hpp>
#include <orch/types.hpp>

#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <set>
#include <span>
#include <utility>
#include <vector>

namespace orch::detail {

/// The items a node over its capacity sheds: their cost must cover `need`; the fewest bytes
/// is a knapsack-cover problem, solved greedily: cheapest bytes per cost first (the reverse of
/// keep_before: smaller cost, then higher index, among equals), each item only if it does not
/// overshoot what is still needed; then,
/// if something is still needed, the single remaining item with the fewest bytes that covers
/// it. Items above `largest` (the most room any other node has) are not shed when the others
/// can cover the need. `items` are the node's items; returns the shed ones.
[[nodiscard]] inline std::vector<std::size_t> shed_cover(std::span<const index_t> items,
                                                         cost_t need, cost_t largest,
                                                         std::span<const cost_t> costs,
                                                         std::span<const bytes_t> item_bytes) {
  std::vector<std::size_t> shed;
  // Items costing more than `largest` could go nowhere; they stay unless nothing else covers.
  cost_t placeable = 0;
  for (const auto x : items) {
    const auto i = static_cast<std::size_t>(x);
    placeable += costs[i] <= largest ? costs[i] : 0; // ≤ Σ costs, checked by the caller
  }
  // Shed order: the reverse of the keep order (fewest bytes per cost first, then smaller
  // cost, then higher index), on contiguous records. For values below 2^53 the double
  // quotient is the correctly rounded ratio, so it never decreases as the exact ratio grows:
  // where two quotients differ they order the items as the exact ratios do, and only equal
  // quotients need the exact products.
  struct record {
    double ratio;
    cost_t cost;
    bytes_t bytes;
    std::size_t index;
  };
  constexpr std::int64_t exact = std::int64_t{1} << 53;
  bool doubles = true;
  std::vector<record> pool; // the items that may be shed
  pool.reserve(items.size());
  for (const auto x : items) {
    const auto i = static_cast<std::size_t>(x);
    if (costs[i] != 0 && (placeable < need || costs[i] <= largest)) {
      doubles = doubles && costs[i] < exact && item_bytes[i] < exact;
      pool.push_back({static_cast<double>(item_bytes[i]) / static_cast<double>(costs[i]), costs[i],
                      item_bytes[i], i});
    }
  }
  std::sort(pool.begin(), pool.end(), [doubles](const record& a, const record& b) {
    if (doubles && a.ratio != b.ratio) {
      return a.ratio < b.ratio;
    }
    const int128 lhs = int128{b.bytes} * a.cost;
    const int128 rhs = int128{a.bytes} * b.cost;
    if (lhs != rhs) {
      return lhs > rhs;
    }
    return a.cost != b.cost ? a.cost < b.cost : a.index > b.index;
  });
  std::vector<char> taken(pool.size(), 0);
  for (std::size_t x = 0; x < pool.size() && need > 0; ++x) {
    if (pool[x].cost <= need) {
      need -= pool[x].cost;
      taken[x] = 1;
      shed.push_back(pool[x].index);
    }
  }
  if (need > 0) {
    // Every item not taken costs more than what is still needed (it was skipped when the
    // need was at least as large), so any of them covers it: take the one with fewest bytes.
    const record* best = nullptr;
    for (std::size_t x = 0; x < pool.size(); ++x) {
      const record& r = pool[x];
      const bool better = best == nullptr || (r.bytes != best->bytes ? r.bytes < best->bytes
                                              : r.cost != best->cost ? r.cost < best->cost
                                                                     : r.index < best->index);
      best = taken[x] == 0 && better ? &r : best;
    }
    ORCH_ASSERT(best != nullptr);
    shed.push_back(best->index);
  }
  return shed;
}

/// Last resort for an assignment with ranks above `target`: orch::local_search over all ranks
/// (moves and swaps out of the largest rank, least-loaded partners first), budgeted in work
/// units. Returns the improved assignment, or an empty vector if it is still above target.
[[nodiscard]] inline std::vector<rank_t> settle(std::span<const cost_t> costs, rank_t ranks,
                                                std::span<const rank_t> start, cost_t target) {
  local_search_options options;
  options.target = target;
  options.partners = 64; // at thousands of ranks the least-loaded few hold the good moves
  options.work_budget = 16 * static_cast<std::int64_t>(costs.size()) + 200'000;
  local_searcher search; // the input was validated by the caller
  if (search.run(costs, ranks, start, options) > target) {
    return {};
  }
  return search.take_bin_of();
}

/// Candidate "node first": fix the node totals first, then each node's ranks.
///  1. Every node holding more than ranks_per_node × target sheds a knapsack cover of the
///     excess (shed_cover) — the fewest bytes it can, which is what the lower bound counts.
///  2. Shed items go, largest first, to the node with the most spare capacity.
///  3. Inside every node, own items start on their rank and received items on the least
///     loaded rank; local search (moves and swaps between the node's ranks only, budgeted in
///     work units) then brings every rank under the target.
/// If a node cannot be balanced inside itself (or received more than its room), settle()
/// finishes across nodes. Returns the new rank of every item, or an empty vector when that
/// fails too.
/// What node_first produced: the new rank of every item (empty on failure) and whether
/// settle() had to move items across nodes to reach the target.
struct node_first_result {
  std::vector<rank_t> rank_of;
  bool settled = false;
};

[[nodiscard]] inline node_first_result node_first(std::span<const cost_t> costs,
                                                  std::span<const rank_t> current_rank,
                                                  std::span<const bytes_t> item_bytes,
                                                  const topology& topo, cost_t target) {
  const std::size_t n = costs.size();
  const auto nodes = static_cast<std::size_t>(topo.nodes());
  const auto node = topo.node_of_ranks();
  const auto local = topo.local_indices();
  std::vector<rank_t> node_of_item(n);
  for (std::size_t i = 0; i < n; ++i) {
    node_of_item[i] = node[static_cast<std::size_t>(current_rank[i])];
  }
  const auto by_node = items_by_key(node_of_item, nodes);
  // A node's items, in increasing index: a slice of by_node.order.
  const auto members = [&](std::size_t nd) {
    const auto first = static_cast<std::size_t>(by_node.first[nd]);
    const auto last = static_cast<std::size_t>(by_node.first[nd + 1]);
    return std::span<const index_t>(by_node.order).subspan(first, last - first);
  };
  std::vector<int128> spare(nodes);
  for (std::size_t nd = 0; nd < nodes; ++nd) {
    spare[nd] = int128{topo.ranks_per_node(static_cast<rank_t>(nd))} * target;
    for (const index_t i : members(nd)) {
      spare[nd] -= costs[static_cast<std::size_t>(i)];
    }
  }

  // 1. Node totals: over-capacity nodes shed.
  int128 most_spare = 0;
  for (std::size_t nd = 0; nd < nodes; ++nd) {
    most_spare = spare[nd] > most_spare ? spare[nd] : most_spare;
  }
  const auto largest = static_cast<cost_t>(most_spare); // ≤ ranks_per_node · target
  std::vector<std::size_t> leaving;
  std::vector<char> gone(n, 0);
  for (std::size_t nd = 0; nd < nodes; ++nd) {
    if (spare[nd] >= 0) {
      continue;
    }
    for (const std::size_t i :
         shed_cover(members(nd), static_cast<cost_t>(-spare[nd]), largest, costs, item_bytes)) {
      gone[i] = 1;
      leaving.push_back(i);
      spare[nd] += costs[i];
    }
  }
  // 2. Receivers: most spare first (ties: lower node).
  std::sort(leaving.begin(), leaving.end(),
            [&](std::size_t a, std::size_t b) { return pack_before(a, b, costs, item_bytes); });
  std::set<std::pair<int128, std::size_t>> by_spare; // (−spare, node)
  for (std::size_t nd = 0; nd < nodes; ++nd) {
    by_spare.emplace(-spare[nd], nd);
  }
  std::vector<std::vector<std::size_t>> received(nodes);
  for (const std::size_t i : leaving) {
    // When no node has room left the item still goes to the one with the most: its ranks
    // then cannot all reach the target and settle() finishes across nodes.
    const auto [neg, nd] = *by_spare.begin();
    by_spare.erase(by_spare.begin());
    spare[nd] -= costs[i];
    by_spare.emplace(-spare[nd], nd);
    received[nd].push_back(i);
  }

  // 3. Inside every node: start where items are, then local search between its ranks.
  std::vector<rank_t> rank_of(n, -1);
  bool short_of_target = false;
  std::vector<std::size_t> items;
  std::vector<cost_t> sub_costs;
  std::vector<rank_t> start;
  std::vector<cost_t> load;
  local_searcher search; // one engine for every node: its buffers are reused
  for (std::size_t nd = 0; nd < nodes; ++nd) {
    const auto ranks = topo.ranks_on(static_cast<rank_t>(nd));
    const auto g = ranks.size();
    items.clear();
    start.clear();
    load.assign(g, 0);
    for (const index_t x : members(nd)) {
      const auto i = static_cast<std::size_t>(x);
      if (gone[i] == 0) {
        const rank_t l = local[static_cast<std::size_t>(current_rank[i])];
        items.push_back(i);
        start.push_back(l);
        load[static_cast<std::size_t>(l)] += costs[i];
      }
    }
    for (const std::size_t i : received[nd]) { // largest first, to the least loaded rank
      const auto l =
          static_cast<std::size_t>(std::min_element(load.begin(), load.end()) - load.begin());
      items.push_back(i);
      start.push_back(static_cast<rank_t>(l));
      load[l] += costs[i];
    }
    if (*std::max_element(load.begin(), load.end()) > target) {
      sub_costs.resize(items.size());
      for (std::size_t j = 0; j < items.size(); ++j) {
        sub_costs[j] = costs[items[j]];
      }
      local_search_options options;
      options.target = target;
      options.work_budget = 64 * static_cast<std::int64_t>(items.size()) + 20'000;
      const cost_t top = search.run(sub_costs, static_cast<rank_t>(g), start, options);
      start.assign(search.bin_of().begin(), search.bin_of().end());
      short_of_target = short_of_target || top > target;
    }
    for (std::size_t j = 0; j < items.size(); ++j) {
      rank_of[items[j]] = ranks[static_cast<std::size_t>(start[j])];
    }
  }
  if (short_of_target) {
    // Some node could not be balanced inside itself: let items cross nodes where needed.
    return {settle(costs, topo.ranks(), rank_of, target), true};
  }
  return {std::move(rank_of), false};
}

} // namespace orch::detail
