// SPDX-License-Identifier: Apache-2.0
/// Internals of orch/locality.hpp: the locality-first balancing heuristic behind
/// orch::locality_balance (per-node placement, repair, crossing nodes).
#pragma once

#include <orch/config.hpp>
#include <orch/detail/checked.hpp>
#include <orch/detail/locality_input.hpp>
#include <orch/detail/packing.hpp>
#include <orch/detail/sparse_assignment.hpp>
#include <orch/topology.hpp>
#include <orch/types.hpp>

#include <algorithm>
#include <cstddef>
#include <span>
#include <utility>
#include <vector>

namespace orch::detail {

/// Where the items of one node go: a rank of the node, or -1 (they must leave the node).
struct node_placement {
  std::vector<rank_t> rank;                // per node item
  bytes_t leaving = 0;                     // bytes of the items with rank -1
  bytes_t moving = 0;                      // bytes kept on the node but not on their rank
  bool differs_from_largest_first = false; // some rank kept a set other than largest-first's
};

/// The items of one node and the quantities every candidate placement needs.
struct node_problem {
  std::span<const cost_t> costs;
  std::span<const bytes_t> bytes;
  std::span<const rank_t> current; // per item
  std::span<const rank_t> ranks;   // of the node, by local index
  std::span<const rank_t> local;   // local index of every rank of the topology
  std::vector<std::size_t> items;  // item ids of the node
  cost_t target = 0;

  [[nodiscard]] node_placement finish(std::vector<rank_t> rank) const {
    node_placement out;
    for (std::size_t j = 0; j < items.size(); ++j) {
      const std::size_t i = items[j];
      if (rank[j] < 0) {
        out.leaving += bytes[i];
      } else if (rank[j] != current[i]) {
        out.moving += bytes[i];
      }
    }
    out.rank = std::move(rank);
    return out;
  }
};

/// Repairs a node placement whose items `left` (rank -1, largest first) fit no rank: the
/// room is there but fragmented. For each such item x, in order of preference:
///  1. move one kept item y (fewest bytes) from a rank A to another rank B with room for it,
///     when that frees enough room on A for x (y moves inside the node, x stays on the node);
///  2. let a kept item y with fewer bytes than x leave instead, when that frees room for x.
/// Work is bounded by a budget of scanned items (deterministic, never wall-clock).
inline void repair(const node_problem& np, std::span<const std::size_t> position,
                   std::vector<rank_t>& rank, std::vector<std::size_t>& left) {
  if (left.empty()) {
    return;
  }
  const auto g = np.ranks.size();
  const std::size_t m = np.items.size();
  // Node-local copies (cost, bytes, local rank or -1): the scans below stay in cache.
  std::vector<cost_t> cost(m);
  std::vector<bytes_t> size(m);
  std::vector<std::ptrdiff_t> at(m, -1);
  std::vector<cost_t> room(g, np.target);
  for (std::size_t j = 0; j < m; ++j) {
    cost[j] = np.costs[np.items[j]];
    size[j] = np.bytes[np.items[j]];
    if (rank[j] >= 0) {
      at[j] = np.local[static_cast<std::size_t>(rank[j])];
      room[static_cast<std::size_t>(at[j])] -= cost[j];
    }
  }
  std::size_t budget = 16 * m + 1024;
  for (std::size_t q = 0; q < left.size() && budget > 0; ++q) {
    const std::size_t px = position[left[q]];
    const cost_t cx = cost[px];
    // The two largest rooms, so "another rank with room for y" is an O(1) test.
    std::size_t top = 0;
    std::size_t second = g; // none
    for (std::size_t l = 1; l < g; ++l) {
      if (room[l] > room[top]) {
        second = top;
        top = l;
      } else if (second == g || room[l] > room[second]) {
        second = l;
      }
    }
    const cost_t elsewhere_top = second == g ? -1 : room[second];
    std::size_t move_y = m; // candidate for 1
    std::size_t shed_y = m; // candidate for 2
    for (std::size_t j = 0; j < m; ++j) {
      const std::ptrdiff_t a = at[j];
      if (a < 0 || room[static_cast<std::size_t>(a)] + cost[j] < cx) {
        continue; // y is not kept, or taking it off its rank does not make room for x
      }
      const cost_t elsewhere = static_cast<std::size_t>(a) != top ? room[top] : elsewhere_top;
      if (elsewhere >= cost[j] && (move_y == m || size[j] < size[move_y])) {
        move_y = j;
      }
      if (size[j] < size[px] && (shed_y == m || size[j] < size[shed_y])) {
        shed_y = j;
      }
    }
    budget = budget > m ? budget - m : 0;
    const std::size_t j = move_y != m ? move_y : shed_y;
    if (j == m) {
      continue;
    }
    const auto a = static_cast<std::size_t>(at[j]);
    room[a] += cost[j] - cx;
    at[px] = static_cast<std::ptrdiff_t>(a);
    rank[px] = np.ranks[a];
    if (j == move_y) {
      // y goes to the rank with the least room that still fits it (not A).
      std::size_t b = g;
      for (std::size_t l = 0; l < g; ++l) {
        if (l != a && room[l] >= cost[j] && (b == g || room[l] < room[b])) {
          b = l;
        }
      }
      ORCH_ASSERT(b != g);
      room[b] -= cost[j];
      at[j] = static_cast<std::ptrdiff_t>(b);
      rank[j] = np.ranks[b];
    } else {
      at[j] = -1;
      rank[j] = -1;
      left.push_back(np.items[j]); // smaller than x: it may still find room in this loop
    }
  }
}

/// Placement of one node's items: every rank keeps what fits of its own items (the better of
/// two greedy orders — most bytes per cost first, largest first — or largest first only), the
/// rest goes best-fit, largest first, to the node's ranks with room, then repair(); what fits
/// nowhere leaves the node.
[[nodiscard]] inline node_placement
place_staying(const node_problem& np, std::span<const std::size_t> position, bool largest_first) {
  const auto keep = [&](std::size_t a, std::size_t b) {
    return keep_before(a, b, np.costs, np.bytes);
  };
  const auto pack = [&](std::size_t a, std::size_t b) {
    return pack_before(a, b, np.costs, np.bytes);
  };
  std::vector<rank_t> rank(np.items.size(), -1);
  std::vector<std::vector<std::size_t>> own(np.ranks.size());
  for (const std::size_t i : np.items) {
    own[static_cast<std::size_t>(np.local[static_cast<std::size_t>(np.current[i])])].push_back(i);
  }
  best_fit fit;
  std::vector<std::size_t> pool;
  std::vector<std::size_t> by_size;
  std::vector<std::size_t> by_density;
  bool differs = false;
  // Greedy filling of a rank's own items in `order`: the kept items, their load and bytes.
  struct filling {
    std::vector<std::size_t> kept;
    cost_t load = 0;
    bytes_t bytes = 0;
  };
  const auto fill = [&](const std::vector<std::size_t>& order) {
    filling f;
    for (const std::size_t i : order) {
      if (np.costs[i] <= np.target - f.load) {
        f.load += np.costs[i];
        f.bytes += np.bytes[i];
        f.kept.push_back(i);
      }
    }
    std::sort(f.kept.begin(), f.kept.end());
    return f;
  };
  for (std::size_t l = 0; l < np.ranks.size(); ++l) {
    cost_t total = 0;
    for (const std::size_t i : own[l]) {
      total += np.costs[i]; // ≤ Σ costs, checked by the caller
    }
    if (total <= np.target) {
      for (const std::size_t i : own[l]) {
        rank[position[i]] = np.ranks[l];
      }
      fit.add(np.ranks[l], np.target - total);
      continue;
    }
    // Two greedy fillings (largest first, most bytes per cost first): the one keeping more
    // bytes wins. Neither alone is good: density-first can shed one huge item that no other
    // rank can take, largest-first sheds more bytes when items differ in bytes per cost.
    by_size = own[l];
    std::sort(by_size.begin(), by_size.end(), pack);
    filling chosen = fill(by_size);
    if (!largest_first) {
      by_density = own[l];
      std::sort(by_density.begin(), by_density.end(), keep);
      filling other = fill(by_density);
      if (other.bytes >= chosen.bytes && other.kept != chosen.kept) {
        chosen = std::move(other);
        differs = true;
      }
    }
    for (const std::size_t i : chosen.kept) {
      rank[position[i]] = np.ranks[l];
    }
    for (const std::size_t i : own[l]) {
      if (rank[position[i]] < 0) {
        pool.push_back(i);
      }
    }
    fit.add(np.ranks[l], np.target - chosen.load);
  }
  std::sort(pool.begin(), pool.end(), pack);
  std::vector<std::size_t> left;
  for (const std::size_t i : pool) {
    rank[position[i]] = fit.take(np.costs[i]);
    if (rank[position[i]] < 0) {
      left.push_back(i);
    }
  }
  repair(np, position, rank, left);
  auto out = np.finish(std::move(rank));
  out.differs_from_largest_first = differs;
  return out;
}

/// How a rank chooses what to keep of its own items.
enum class keep_mode {
  most_bytes,   ///< the better of "most bytes per cost first" and "largest first"
  largest_first ///< largest first only: sheds small items, which are easy to place elsewhere
};

/// The locality-first heuristic behind orch::locality_balance (see there). Returns the new
/// rank of every item; the largest load may exceed `target` when the items that must leave
/// their node do not fit the room left elsewhere (the caller checks, retries, settles or
/// falls back).
[[nodiscard]] inline std::vector<rank_t> keep_local(std::span<const cost_t> costs,
                                                    std::span<const rank_t> current_rank,
                                                    std::span<const bytes_t> item_bytes,
                                                    const topology& topo, cost_t target,
                                                    keep_mode mode) {
  const std::size_t n = costs.size();
  const auto ranks = static_cast<std::size_t>(topo.ranks());
  const auto node = topo.node_of_ranks();
  std::vector<rank_t> rank_of(n, -1);
  std::vector<cost_t> load(ranks, 0);
  std::vector<rank_t> node_of_item(n);
  for (std::size_t i = 0; i < n; ++i) {
    node_of_item[i] = node[static_cast<std::size_t>(current_rank[i])];
  }
  const auto by_node = items_by_key(node_of_item, static_cast<std::size_t>(topo.nodes()));
  std::vector<std::size_t> position(n, 0); // index of an item within its node's list
  std::vector<std::size_t> leaving;

  // Per node: ranks keep what fits, the rest goes to ranks of the same node with room, and a
  // repair pass unblocks fragmented room; only what still fits nowhere leaves the node. A
  // node whose ranks are all at or under the target moves nothing.
  for (rank_t nd = 0; nd < topo.nodes(); ++nd) {
    node_problem np{costs, item_bytes, current_rank, topo.ranks_on(nd), topo.local_indices(),
                    {},    target};
    const auto nb = static_cast<std::size_t>(nd);
    for (auto x = static_cast<std::size_t>(by_node.first[nb]);
         x < static_cast<std::size_t>(by_node.first[nb + 1]); ++x) {
      const auto i = static_cast<std::size_t>(by_node.order[x]);
      position[i] = np.items.size();
      np.items.push_back(i);
    }
    // Per-rank "most bytes" choices are myopic (a rank may keep many small items and shed one
    // huge item that then has to leave the node), so the node also tries "largest first"
    // everywhere and keeps whichever sends fewer bytes off the node, then moves fewer.
    auto placed = place_staying(np, position, mode == keep_mode::largest_first);
    if (placed.differs_from_largest_first && placed.leaving + placed.moving > 0) {
      auto other = place_staying(np, position, true);
      if (other.leaving < placed.leaving ||
          (other.leaving == placed.leaving && other.moving < placed.moving)) {
        placed = std::move(other);
      }
    }
    for (std::size_t j = 0; j < np.items.size(); ++j) {
      const std::size_t i = np.items[j];
      rank_of[i] = placed.rank[j];
      if (placed.rank[j] >= 0) {
        load[static_cast<std::size_t>(placed.rank[j])] += costs[i];
      } else {
        leaving.push_back(i);
      }
    }
  }
  if (leaving.empty()) {
    return rank_of;
  }

  // The rest crosses nodes, largest cost first, best fit over all ranks. An item that fits
  // nowhere goes to the rank with the most room; the caller sees the target exceeded and
  // settles (detail::settle) or falls back.
  std::sort(leaving.begin(), leaving.end(),
            [&](std::size_t a, std::size_t b) { return pack_before(a, b, costs, item_bytes); });
  best_fit fit;
  for (std::size_t r = 0; r < ranks; ++r) {
    fit.add(static_cast<rank_t>(r), target - load[r]);
  }
  for (const std::size_t i : leaving) {
    rank_t r = fit.take(costs[i]);
    if (r < 0) {
      r = fit.take_most_room(costs[i]);
    }
    rank_of[i] = r;
  }
  return rank_of;
}

} // namespace orch::detail
