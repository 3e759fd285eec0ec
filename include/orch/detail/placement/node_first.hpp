// SPDX-License-Identifier: Apache-2.0
/// Internals of the placement engine (orch/placement/engine.hpp): the "node first"
/// candidate, for targets so tight that packing leftovers into other ranks' room fails.
#pragma once

#include <orch/config.hpp>
#include <orch/detail/placement/locality_input.hpp>
#include <orch/detail/placement/packing.hpp>
#include <orch/detail/placement/shed_cover.hpp>
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

/// What node_first produced: the new rank of every item, and whether some node could not
/// bring all its ranks under the target (the caller then finishes across nodes: settle,
/// repartition_nodes).
struct node_first_result {
  std::vector<rank_t> rank_of;
  bool short_of_target = false;
};

/// Candidate "node first": fix the node totals first, then each node's ranks.
///  1. Every node holding more than ranks_per_node × target sheds a knapsack cover of the
///     excess (shed_cover) — the fewest bytes it can, which is what the lower bound counts.
///  2. Shed items go, largest first, to the node with the most spare capacity.
///  3. Inside every node, own items start on their rank and received items on the least
///     loaded rank; local search (moves and swaps between the node's ranks only, budgeted in
///     work units) then brings every rank under the target.
/// If a node cannot be balanced inside itself (or received more than its room), the result
/// says so and keeps that node's best try.
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
  return {std::move(rank_of), short_of_target};
}

} // namespace orch::detail
