// SPDX-License-Identifier: Apache-2.0
/// Internals of orch/locality.hpp: the "node first" candidate of locality_balance, for
/// targets so tight that packing leftovers into other ranks' room fails.
#pragma once

#include <orch/config.hpp>
#include <orch/detail/placement/locality_input.hpp>
#include <orch/detail/placement/packing.hpp>
#include <orch/detail/primitives/checked.hpp>
#include <orch/detail/primitives/group_by_key.hpp>
#include <orch/detail/tuning.hpp>
#include <orch/partition/local_search.hpp>
#include <orch/topology.hpp>
#include <orch/types.hpp>

#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <span>
#include <utility>
#include <vector>

namespace orch::detail {

/// Buffers of shed_cover, reused across the nodes of one node_first call.
struct shed_scratch {
  struct record {
    double ratio; // bytes / cost, correctly rounded
    cost_t cost;
    bytes_t bytes;
    std::size_t index;
  };
  std::vector<record> pool;        // the items that may be shed
  std::vector<std::uint32_t> live; // positions in pool that may still be taken
};

/// The items a node over its capacity sheds: their cost must cover `need`; the fewest bytes
/// is a knapsack-cover problem, solved greedily: cheapest bytes per cost first (the reverse of
/// keep_before: smaller cost, then higher index, among equals), each item only if it does not
/// overshoot what is still needed; then,
/// if something is still needed, the single remaining item with the fewest bytes that covers
/// it. Items above `largest` (the most room any other node has) are not shed when the others
/// can cover the need. `items` are the node's items, none of them marked in `gone`; the shed
/// ones are marked in `gone` and appended to `shed`.
inline void shed_cover(std::span<const index_t> items, cost_t need, cost_t largest,
                       std::span<const cost_t> costs, std::span<const bytes_t> item_bytes,
                       std::span<char> gone, std::vector<std::size_t>& shed,
                       shed_scratch& scratch) {
  using record = shed_scratch::record;
  // Shed order: the reverse of the keep order (fewest bytes per cost first, then smaller
  // cost, then higher index), on contiguous records. For values below 2^53 the double
  // quotient is the correctly rounded ratio, so it never decreases as the exact ratio grows:
  // where two quotients differ they order the items as the exact ratios do, and only equal
  // quotients need the exact products.
  auto& pool = scratch.pool;
  pool.clear();
  cost_t placeable = 0;
  bool too_large = false; // some item costs more than `largest`
  for (const auto x : items) {
    const auto i = static_cast<std::size_t>(x);
    placeable += costs[i] <= largest ? costs[i] : 0; // ≤ Σ costs, checked by the caller
    too_large = too_large || costs[i] > largest;
    if (costs[i] != 0) {
      pool.push_back({static_cast<double>(item_bytes[i]) / static_cast<double>(costs[i]), costs[i],
                      item_bytes[i], i});
    }
  }
  // Items costing more than `largest` could go nowhere; they stay unless nothing else covers.
  if (too_large && placeable >= need) {
    std::erase_if(pool, [largest](const record& r) { return r.cost > largest; });
  }
  cost_t top_cost = 0;
  bytes_t top_bytes = 0;
  for (const record& r : pool) {
    top_cost = std::max(top_cost, r.cost);
    top_bytes = std::max(top_bytes, r.bytes);
  }
  constexpr std::int64_t exact = std::int64_t{1} << 53;
  const bool doubles = top_cost < exact && top_bytes < exact;
  const auto exact_before = [](const record& a, const record& b) {
    const int128 lhs = int128{b.bytes} * a.cost;
    const int128 rhs = int128{a.bytes} * b.cost;
    if (lhs != rhs) {
      return lhs > rhs;
    }
    return a.cost != b.cost ? a.cost < b.cost : a.index > b.index;
  };
  const auto take = [&](const record& r) {
    need -= r.cost;
    gone[r.index] = 1;
    shed.push_back(r.index);
  };
  const auto sheds_before = [doubles, &exact_before](const record& a, const record& b) {
    return doubles && a.ratio != b.ratio ? a.ratio < b.ratio : exact_before(a, b);
  };
  // The greedy in shed order takes an item when its cost fits what is still needed. A node
  // takes its few items among the first in shed order, so only those are sorted (after a
  // selection that puts them in front). Items skipped cost more than the need, which only
  // shrinks, so they are never taken later: after the head, the next item taken is always
  // the first in shed order among the untaken ones that fit, found by scans of the items that
  // still fit (the others drop out for good); after many takes the rest is sorted and
  // finished in order. Each way takes exactly the items the greedy over a full sort takes.
  const std::size_t head = std::min(pool.size(), shed_head);
  if (head < pool.size()) {
    std::nth_element(pool.begin(), pool.begin() + static_cast<std::ptrdiff_t>(head), pool.end(),
                     sheds_before);
  }
  std::sort(pool.begin(), pool.begin() + static_cast<std::ptrdiff_t>(head), sheds_before);
  for (std::size_t x = 0; x < head && need > 0; ++x) {
    if (pool[x].cost <= need) {
      take(pool[x]);
    }
  }
  auto& live = scratch.live;
  live.clear();
  for (std::size_t x = head; x < pool.size() && need > 0; ++x) {
    if (pool[x].cost <= need) {
      live.push_back(static_cast<std::uint32_t>(x));
    }
  }
  std::size_t alive = live.size();
  for (int round = 0; need > 0 && alive > 0; ++round) {
    if (round == shed_scans) {
      std::sort(live.begin(), live.begin() + static_cast<std::ptrdiff_t>(alive),
                [&](std::uint32_t a, std::uint32_t b) { return sheds_before(pool[a], pool[b]); });
      for (std::size_t x = 0; x < alive && need > 0; ++x) {
        if (pool[live[x]].cost <= need) {
          take(pool[live[x]]);
        }
      }
      break;
    }
    std::size_t best = 0;
    for (std::size_t x = 1; x < alive; ++x) {
      best = sheds_before(pool[live[x]], pool[live[best]]) ? x : best;
    }
    take(pool[live[best]]);
    live[best] = live[--alive];
    std::size_t kept = 0;
    for (std::size_t x = 0; x < alive; ++x) {
      if (pool[live[x]].cost <= need) {
        live[kept++] = live[x];
      }
    }
    alive = kept;
  }
  if (need > 0) {
    // Every item not taken costs more than what is still needed (it was skipped when the
    // need was at least as large), so any of them covers it: take the one with fewest bytes.
    const record* best = nullptr;
    for (const record& r : pool) {
      const bool better = best == nullptr || (r.bytes != best->bytes ? r.bytes < best->bytes
                                              : r.cost != best->cost ? r.cost < best->cost
                                                                     : r.index < best->index);
      best = gone[r.index] == 0 && better ? &r : best;
    }
    ORCH_ASSERT(best != nullptr);
    // Never null (the need is positive, so some item is left); the test keeps release builds,
    // where the assertion is gone, from dereferencing what the compiler cannot prove set.
    if (best != nullptr) {
      take(*best);
    }
  }
}

/// settle() (below) from an assignment the caller no longer needs: the search works in it in
/// place.
[[nodiscard]] inline std::vector<rank_t> settle(std::span<const cost_t> costs, rank_t ranks,
                                                std::vector<rank_t>&& start, cost_t target) {
  local_search_options options;
  options.target = target;
  options.partners = settle_partners;
  options.work_budget =
      settle_work_per_item * static_cast<std::int64_t>(costs.size()) + settle_work_base;
  local_searcher search; // the input was validated by the caller
  if (search.run(costs, ranks, std::move(start), options) > target) {
    return {};
  }
  return search.take_bin_of();
}

/// Last resort for an assignment with ranks above `target`: orch::local_search over all ranks
/// (moves and swaps out of the largest rank, least-loaded partners first), budgeted in work
/// units. Returns the improved assignment, or an empty vector if it is still above target.
[[nodiscard]] inline std::vector<rank_t> settle(std::span<const cost_t> costs, rank_t ranks,
                                                std::span<const rank_t> start, cost_t target) {
  return settle(costs, ranks, std::vector<rank_t>(start.begin(), start.end()), target);
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
  // The node quotas the inter-node lower bound is computed from: what each node must shed
  // (excess > 0) or may receive (spare = -excess).
  auto quotas = quotas_at(costs, current_rank, topo, target);
  // Every node's items in increasing index.
  const auto by_node = group_by(
      n, nodes, [&](std::size_t i) { return node[static_cast<std::size_t>(current_rank[i])]; });
  const auto members = [&](std::size_t nd) { return by_node.group(nd); };
  std::vector<int128> spare(nodes);
  int128 most_spare = 0;
  for (std::size_t nd = 0; nd < nodes; ++nd) {
    spare[nd] = -quotas.excess[nd];
    most_spare = spare[nd] > most_spare ? spare[nd] : most_spare;
  }

  // 1. Node totals: over-capacity nodes shed.
  const auto largest = static_cast<cost_t>(most_spare); // ≤ ranks_per_node · target
  std::vector<std::size_t> leaving;
  std::vector<char> gone(n, 0);
  {
    shed_scratch scratch;
    for (std::size_t nd = 0; nd < nodes; ++nd) {
      if (spare[nd] >= 0) {
        continue;
      }
      const std::size_t from = leaving.size();
      shed_cover(members(nd), static_cast<cost_t>(-spare[nd]), largest, costs, item_bytes, gone,
                 leaving, scratch);
      for (std::size_t x = from; x < leaving.size(); ++x) {
        spare[nd] += costs[leaving[x]];
      }
    }
  }
  // 2. Receivers: most spare first (ties: lower node), from a binary heap of the nodes whose
  // top only ever loses spare (so it only sifts down).
  // Shed items in pack_before order. They all cost something (shed_cover never sheds a free
  // item), where pack_before is: larger cost, then more bytes, then lower index; sorted as
  // contiguous records instead of through the item arrays.
  {
    struct leaver {
      cost_t cost;
      bytes_t bytes;
      std::size_t index;
    };
    std::vector<leaver> by_pack(leaving.size());
    for (std::size_t x = 0; x < leaving.size(); ++x) {
      const std::size_t i = leaving[x];
      ORCH_ASSERT(costs[i] != 0);
      by_pack[x] = {costs[i], item_bytes[i], i};
    }
    std::sort(by_pack.begin(), by_pack.end(), [](const leaver& a, const leaver& b) {
      return a.cost != b.cost     ? a.cost > b.cost
             : a.bytes != b.bytes ? a.bytes > b.bytes
                                  : a.index < b.index;
    });
    for (std::size_t x = 0; x < leaving.size(); ++x) {
      leaving[x] = by_pack[x].index;
    }
  }
  const auto first_in_line = [&](std::size_t a, std::size_t b) {
    return spare[a] != spare[b] ? spare[a] > spare[b] : a < b;
  };
  std::vector<std::size_t> heap(nodes);
  for (std::size_t nd = 0; nd < nodes; ++nd) {
    heap[nd] = nd;
  }
  std::make_heap(heap.begin(), heap.end(),
                 [&](std::size_t a, std::size_t b) { return first_in_line(b, a); });
  std::vector<rank_t> receiver(leaving.size());
  for (std::size_t x = 0; x < leaving.size(); ++x) {
    // When no node has room left the item still goes to the one with the most: its ranks
    // then cannot all reach the target and settle() finishes across nodes.
    const std::size_t nd = heap[0];
    spare[nd] -= costs[leaving[x]];
    receiver[x] = static_cast<rank_t>(nd);
    for (std::size_t at = 0;;) { // sift the top down
      const std::size_t l = 2 * at + 1;
      if (l >= nodes) {
        break;
      }
      const std::size_t c = l + 1 < nodes && first_in_line(heap[l + 1], heap[l]) ? l + 1 : l;
      if (!first_in_line(heap[c], nd)) {
        break;
      }
      heap[at] = heap[c];
      heap[c] = nd;
      at = c;
    }
  }
  // Every node's received items, largest first (grouped by receiver, stably).
  const auto by_receiver = group_by_key(std::span<const rank_t>(receiver), nodes);

  // 3. Inside every node: start where items are, then local search between its ranks.
  std::vector<rank_t> rank_of(n); // every item is written below: kept or received by a node
  bool short_of_target = false;
  std::vector<std::size_t> items;
  std::vector<cost_t> sub_costs;
  std::vector<rank_t> start;
  std::vector<cost_t> load;
  local_searcher search; // one engine for every node: its buffers are reused
  for (std::size_t nd = 0; nd < nodes; ++nd) {
    const auto ranks = topo.ranks_on(static_cast<rank_t>(nd));
    const auto g = ranks.size();
    const auto own = members(nd);
    const auto in = by_receiver.group(nd); // positions in `leaving`
    const std::size_t most = own.size() + in.size();
    if (items.size() < most) {
      items.resize(most);
      sub_costs.resize(most);
      start.resize(most);
    }
    load.assign(g, 0);
    std::size_t m = 0;
    for (const index_t x : own) {
      const auto i = static_cast<std::size_t>(x);
      if (gone[i] == 0) {
        const rank_t l = local[static_cast<std::size_t>(current_rank[i])];
        items[m] = i;
        sub_costs[m] = costs[i];
        start[m] = l;
        load[static_cast<std::size_t>(l)] += costs[i];
        ++m;
      }
    }
    for (const index_t x : in) { // largest first, to the least loaded rank
      const std::size_t i = leaving[static_cast<std::size_t>(x)];
      const auto l =
          static_cast<std::size_t>(std::min_element(load.begin(), load.end()) - load.begin());
      items[m] = i;
      sub_costs[m] = costs[i];
      start[m] = static_cast<rank_t>(l);
      load[l] += costs[i];
      ++m;
    }
    const auto placed = std::span<const std::size_t>(items).first(m);
    if (*std::max_element(load.begin(), load.end()) > target) {
      local_search_options options;
      options.target = target;
      options.work_budget = node_work_per_item * static_cast<std::int64_t>(m) + node_work_base;
      const cost_t top =
          search.run(std::span<const cost_t>(sub_costs).first(m), static_cast<rank_t>(g),
                     std::span<const rank_t>(start).first(m), options);
      short_of_target = short_of_target || top > target;
      const auto& bin_of = search.bin_of();
      for (std::size_t j = 0; j < m; ++j) {
        rank_of[placed[j]] = ranks[static_cast<std::size_t>(bin_of[j])];
      }
    } else {
      for (std::size_t j = 0; j < m; ++j) {
        rank_of[placed[j]] = ranks[static_cast<std::size_t>(start[j])];
      }
    }
  }
  if (short_of_target) {
    // Some node could not be balanced inside itself: let items cross nodes where needed.
    return {settle(costs, topo.ranks(), std::move(rank_of), target), true};
  }
  return {std::move(rank_of), false};
}

} // namespace orch::detail
