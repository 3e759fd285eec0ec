// SPDX-License-Identifier: Apache-2.0
/// Internals of orch/locality.hpp: keep and pack orders, best-fit packing and the per-node shed
/// lower bound.
#pragma once

#include <orch/config.hpp>
#include <orch/detail/checked.hpp>
#include <orch/detail/locality_input.hpp>
#include <orch/detail/sparse_assignment.hpp>
#include <orch/topology.hpp>
#include <orch/types.hpp>

#include <algorithm>
#include <cstddef>
#include <iterator>
#include <set>
#include <span>
#include <utility>
#include <vector>

namespace orch::detail {

/// True when item a should be kept before item b: zero cost first, then more bytes per cost,
/// then larger cost, then lower index (a total order).
[[nodiscard]] inline bool keep_before(std::size_t a, std::size_t b, std::span<const cost_t> costs,
                                      std::span<const bytes_t> item_bytes) {
  const cost_t ca = costs[a];
  const cost_t cb = costs[b];
  if ((ca == 0) != (cb == 0)) {
    return ca == 0;
  }
  if (ca != 0) {
    const int128 lhs = int128{item_bytes[a]} * cb;
    const int128 rhs = int128{item_bytes[b]} * ca;
    if (lhs != rhs) {
      return lhs > rhs;
    }
  }
  if (ca != cb) {
    return ca > cb;
  }
  return a < b;
}

/// Larger cost first, then the keep order: the order that packs well (big items first).
[[nodiscard]] inline bool pack_before(std::size_t a, std::size_t b, std::span<const cost_t> costs,
                                      std::span<const bytes_t> item_bytes) {
  return costs[a] != costs[b] ? costs[a] > costs[b] : keep_before(a, b, costs, item_bytes);
}

/// Best-fit packing state over some ranks: the rank with the least room that still fits.
class best_fit {
public:
  void add(rank_t rank, cost_t room) { rooms_.emplace(room, rank); }
  /// The rank the item goes to (its room shrinks), or -1 when it fits nowhere.
  rank_t take(cost_t cost) {
    const auto it = rooms_.lower_bound({cost, -1});
    if (it == rooms_.end()) {
      return -1;
    }
    const auto [room, rank] = *it;
    rooms_.erase(it);
    rooms_.emplace(room - cost, rank);
    return rank;
  }
  /// The rank with the most room (lowest rank among equals); it takes the item regardless.
  rank_t take_most_room(cost_t cost) {
    const auto it = rooms_.lower_bound({std::prev(rooms_.end())->first, -1});
    const auto [room, rank] = *it;
    rooms_.erase(it);
    rooms_.emplace(room - cost, rank);
    return rank;
  }

private:
  std::set<std::pair<cost_t, rank_t>> rooms_; // (room under the target, rank)
};

/// For each node, the fewest bytes (fractional knapsack, rounded up) whose cost it must shed
/// so that what stays fits ranks_per_node × target; summed over nodes.
[[nodiscard]] inline bytes_t node_shed_lower_bound(std::span<const cost_t> costs,
                                                   std::span<const rank_t> current_rank,
                                                   std::span<const bytes_t> item_bytes,
                                                   const topology& topo, cost_t target) {
  const auto node = topo.node_of_ranks();
  std::vector<rank_t> node_of_item(current_rank.size());
  for (std::size_t i = 0; i < current_rank.size(); ++i) {
    node_of_item[i] = node[static_cast<std::size_t>(current_rank[i])];
  }
  const auto by_node = items_by_key(node_of_item, static_cast<std::size_t>(topo.nodes()));
  int128 bound = 0;
  std::vector<std::size_t> items;
  for (rank_t n = 0; n < topo.nodes(); ++n) {
    const auto nb = static_cast<std::size_t>(n);
    int128 held = 0;
    items.clear();
    for (auto x = static_cast<std::size_t>(by_node.first[nb]);
         x < static_cast<std::size_t>(by_node.first[nb + 1]); ++x) {
      const auto i = static_cast<std::size_t>(by_node.order[x]);
      held += costs[i];
      if (costs[i] > 0) {
        items.push_back(i);
      }
    }
    int128 need = held - int128{topo.ranks_per_node(n)} * target;
    if (need <= 0) {
      continue;
    }
    // Cheapest bytes per cost first = the reverse of the keep order.
    std::sort(items.begin(), items.end(),
              [&](std::size_t a, std::size_t b) { return keep_before(b, a, costs, item_bytes); });
    for (const std::size_t i : items) {
      if (need <= 0) {
        break;
      }
      if (costs[i] <= need) {
        bound += item_bytes[i];
        need -= costs[i];
      } else {
        const int128 part = int128{item_bytes[i]} * need;
        bound += (part + costs[i] - 1) / costs[i];
        need = 0;
      }
    }
  }
  return static_cast<bytes_t>(bound); // ≤ Σ bytes, which the caller checked
}

} // namespace orch::detail
