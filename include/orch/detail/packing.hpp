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
#include <bit>
#include <cstddef>
#include <cstdint>
#include <iterator>
#include <memory_resource>
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

/// An item as the per-node placement sees it: copied next to its cost and bytes, so the
/// per-rank sorts compare contiguous records instead of chasing indices into the item arrays.
struct node_item {
  cost_t cost = 0;
  bytes_t bytes = 0;
  std::size_t index = 0; // in the caller's arrays: the last tie-break of both orders
  std::size_t slot = 0;  // position in the node's item list
};

/// keep_before on node items.
[[nodiscard]] inline bool keeps_before(const node_item& a, const node_item& b) {
  if ((a.cost == 0) != (b.cost == 0)) {
    return a.cost == 0;
  }
  if (a.cost != 0) {
    const int128 lhs = int128{a.bytes} * b.cost;
    const int128 rhs = int128{b.bytes} * a.cost;
    if (lhs != rhs) {
      return lhs > rhs;
    }
  }
  return a.cost != b.cost ? a.cost > b.cost : a.index < b.index;
}

/// pack_before on node items. Among equal positive costs, more bytes per cost is more bytes,
/// so no product is needed; zero-cost items tie on bytes per cost and go by index.
[[nodiscard]] inline bool packs_before(const node_item& a, const node_item& b) {
  if (a.cost != b.cost) {
    return a.cost > b.cost;
  }
  if (a.cost != 0 && a.bytes != b.bytes) {
    return a.bytes > b.bytes;
  }
  return a.index < b.index;
}

/// Best-fit packing state over some ranks: the rank with the least room that still fits.
class best_fit {
public:
  void add(rank_t rank, cost_t room) { rooms_.emplace(room, rank); }
  /// add() for a (room, rank) after every one added so far: amortised O(1) instead of O(log).
  void add_largest(rank_t rank, cost_t room) { rooms_.emplace_hint(rooms_.end(), room, rank); }
  /// The rank the item goes to (its room shrinks), or -1 when it fits nowhere.
  rank_t take(cost_t cost) {
    const auto it = rooms_.lower_bound({cost, -1});
    if (it == rooms_.end()) {
      return -1;
    }
    return shrink(it, cost);
  }
  /// The rank with the most room (lowest rank among equals); it takes the item regardless.
  rank_t take_most_room(cost_t cost) {
    return shrink(rooms_.lower_bound({std::prev(rooms_.end())->first, -1}), cost);
  }

private:
  using entry = std::pair<cost_t, rank_t>;
  // Re-keys the entry in place (its node is reused: no allocation per item).
  rank_t shrink(std::pmr::set<entry>::iterator it, cost_t cost) {
    auto node = rooms_.extract(it);
    node.value().first -= cost;
    const rank_t rank = node.value().second;
    rooms_.insert(std::move(node));
    return rank;
  }

  // Nodes come from one buffer that is released at once: no allocation per rank.
  std::pmr::monotonic_buffer_resource nodes_;
  std::pmr::set<entry> rooms_{&nodes_}; // (room under the target, rank)
};

/// The items (of positive cost) of every node whose load exceeds ranks_per_node × target,
/// grouped by node, and what each such node must shed. Nodes within their capacity have an
/// empty group and need ≤ 0. Items are copied with their cost and bytes, so the selection
/// that follows compares contiguous records.
struct over_capacity_items {
  std::vector<int128> need;   // per node: load − ranks_per_node × target
  std::vector<index_t> first; // per node: start of its items
  std::vector<index_t> last;  // per node: end of its items
  std::vector<node_item> items;
};

[[nodiscard]] inline over_capacity_items group_over_capacity(std::span<const cost_t> costs,
                                                             std::span<const rank_t> current_rank,
                                                             std::span<const bytes_t> item_bytes,
                                                             const topology& topo, cost_t target) {
  const auto node = topo.node_of_ranks();
  const auto nodes = static_cast<std::size_t>(topo.nodes());
  std::vector<cost_t> rank_load(node.size(), 0);
  std::vector<index_t> rank_count(node.size(), 0);
  for (std::size_t i = 0; i < costs.size(); ++i) {
    const auto r = static_cast<std::size_t>(current_rank[i]);
    rank_load[r] += costs[i]; // ≤ Σ costs: checked by the caller
    ++rank_count[r];
  }
  over_capacity_items g;
  g.need.assign(nodes, 0);
  std::vector<index_t> count(nodes, 0);
  for (std::size_t r = 0; r < node.size(); ++r) {
    const auto nd = static_cast<std::size_t>(node[r]);
    g.need[nd] += rank_load[r] - int128{target};
    count[nd] += rank_count[r];
  }
  // Only nodes over their capacity shed anything, so only their items are gathered (room
  // for all of them; zero-cost items are skipped and leave the end of a node's room unused).
  g.first.assign(nodes, 0);
  index_t total = 0;
  for (std::size_t nd = 0; nd < nodes; ++nd) {
    g.first[nd] = total;
    total += g.need[nd] > 0 ? count[nd] : 0;
  }
  g.last = g.first;
  g.items.resize(static_cast<std::size_t>(total));
  // Per rank: whether its node sheds (one byte read per item instead of a node lookup and a
  // 128-bit comparison).
  std::vector<char> sheds(node.size());
  for (std::size_t r = 0; r < node.size(); ++r) {
    sheds[r] = static_cast<char>(g.need[static_cast<std::size_t>(node[r])] > 0);
  }
  for (std::size_t i = 0; i < costs.size(); ++i) {
    const auto r = static_cast<std::size_t>(current_rank[i]);
    if (sheds[r] != 0 && costs[i] > 0) {
      const auto nd = static_cast<std::size_t>(node[r]);
      g.items[static_cast<std::size_t>(g.last[nd]++)] = {costs[i], item_bytes[i], i, 0};
    }
  }
  return g;
}

/// Moves to the front of [begin, end) a set of items (positive costs) that holds every item
/// of the cheapest bytes per cost ahead of all others and whose cost covers `need` (when the
/// whole range does), and returns its end; a walk in shed order that stops once `need` is
/// covered never leaves it. The set is the items up to a bucket of bytes/cost found by a
/// histogram of cost over buckets, so only it needs ordering.
///
/// Why it is exact: for integers below 2^53 the double quotient is the correctly rounded
/// ratio, so it never decreases as the exact ratio grows; the bucket (top bits of a positive
/// double: exponent and 4 mantissa bits, 16 buckets per octave) never decreases as the double
/// grows. An item in a higher bucket therefore has a strictly larger exact ratio than every
/// item in the set. Ranges with larger values, or buckets spread too widely, are returned
/// whole.
template <class It>
[[nodiscard]] It cheapest_cover(It begin, It end, int128 need, std::vector<cost_t>& histogram) {
  constexpr std::int64_t exact = std::int64_t{1} << 53;
  constexpr std::size_t max_buckets = 4096;
  std::uint64_t low = ~std::uint64_t{0};
  std::uint64_t high = 0;
  std::int64_t all = 0; // OR of every cost and size: at least the largest of them
  for (It it = begin; it != end; ++it) {
    all |= it->cost | it->bytes;
    const double ratio = static_cast<double>(it->bytes) / static_cast<double>(it->cost);
    const std::uint64_t bucket = std::bit_cast<std::uint64_t>(ratio) >> 48;
    it->slot = static_cast<std::size_t>(bucket);
    if (bucket != 0) { // zero bytes: bucket 0, far below all others (see the clamp below)
      low = bucket < low ? bucket : low;
      high = bucket > high ? bucket : high;
    }
  }
  if (all >= exact) {
    return end; // the quotients may be inexact (the buckets written are not used then)
  }
  // Buckets only need to grow with the ratio, so zero-byte items join the bucket just below
  // the lowest other one instead of stretching the histogram down to 0.
  if (low > high) { // every item has zero bytes: one bucket
    low = 0;
    high = 0;
  } else {
    low -= 1; // ≥ 0: a positive double has a positive bucket
  }
  if (begin == end || high - low >= max_buckets) {
    return end;
  }
  histogram.assign(static_cast<std::size_t>(high - low) + 1, 0);
  for (It it = begin; it != end; ++it) {
    it->slot = it->slot < low ? static_cast<std::size_t>(low) : it->slot;
    histogram[it->slot - low] += it->cost; // ≤ Σ costs, checked by the caller
  }
  std::size_t last = 0;
  int128 covered = histogram[0];
  while (covered < need && last + 1 < histogram.size()) {
    covered += histogram[++last];
  }
  const std::size_t cut = static_cast<std::size_t>(low) + last;
  // The rest is not needed any more: compaction writes only the (few) items kept.
  return std::remove_if(begin, end, [cut](const node_item& x) { return x.slot > cut; });
}

/// For each node, the fewest bytes (fractional knapsack, rounded up) whose cost it must shed
/// so that what stays fits ranks_per_node × target; summed over nodes. The items are taken
/// cheapest bytes per cost first (the reverse of the keep order) from a heap, so a node pays
/// O(m) to build it plus O(log m) per item it sheds: the excess is usually a few items.
[[nodiscard]] inline bytes_t node_shed_lower_bound(std::span<const cost_t> costs,
                                                   std::span<const rank_t> current_rank,
                                                   std::span<const bytes_t> item_bytes,
                                                   const topology& topo, cost_t target) {
  auto over = group_over_capacity(costs, current_rank, item_bytes, topo, target);
  // Heap order: the top is the item kept last by keep_before, i.e. the one shed first. All
  // costs are positive here.
  const auto kept_earlier = [](const node_item& a, const node_item& b) {
    const int128 lhs = int128{a.bytes} * b.cost;
    const int128 rhs = int128{b.bytes} * a.cost;
    if (lhs != rhs) {
      return lhs > rhs;
    }
    return a.cost != b.cost ? a.cost > b.cost : a.index < b.index;
  };
  int128 bound = 0;
  std::vector<cost_t> histogram;
  for (std::size_t nd = 0; nd < over.need.size(); ++nd) {
    int128 need = over.need[nd];
    if (need <= 0) {
      continue;
    }
    const auto begin = over.items.begin() + over.first[nd];
    auto end = over.items.begin() + over.last[nd];
    end = cheapest_cover(begin, end, need, histogram);
    std::make_heap(begin, end, kept_earlier);
    while (need > 0 && begin != end) {
      std::pop_heap(begin, end, kept_earlier);
      --end;
      if (end->cost <= need) {
        bound += end->bytes;
        need -= end->cost;
      } else {
        const int128 part = int128{end->bytes} * need;
        bound += (part + end->cost - 1) / end->cost;
        need = 0;
      }
    }
  }
  return static_cast<bytes_t>(bound); // ≤ Σ bytes, which the caller checked
}

} // namespace orch::detail
