// SPDX-License-Identifier: Apache-2.0
/// Internals of orch/locality.hpp: keep and pack orders and the per-node shed lower bound
/// (best-fit packing is in detail/placement/best_fit.hpp, included for the users of both).
#pragma once

#include <orch/config.hpp>
#include <orch/detail/placement/best_fit.hpp>
#include <orch/detail/placement/locality_input.hpp>
#include <orch/detail/placement/sparse_assignment.hpp>
#include <orch/detail/primitives/checked.hpp>
#include <orch/detail/primitives/uninit_vector.hpp>
#include <orch/detail/tuning.hpp>
#include <orch/topology.hpp>
#include <orch/types.hpp>

#include <algorithm>
#include <bit>
#include <cstddef>
#include <cstdint>
#include <iterator>
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

/// packs_before's order (and pack_before's) above the index, as one integer that ascends as
/// they go: larger cost, then, for a positive cost, more bytes. For an item whose cost is at
/// most `max_cost` and bytes at most `max_bytes`; the key takes bit_width(max_cost) +
/// `bytes_bits` bits, where bytes_bits = bit_width(max_bytes), so a caller with bits to spare
/// packs a position or an index below it.
[[nodiscard]] inline std::uint64_t pack_order_key(cost_t cost, bytes_t bytes, cost_t max_cost,
                                                  bytes_t max_bytes, std::size_t bytes_bits) {
  // Zero-cost items tie on bytes (packs_before compares bytes only for positive costs).
  const auto spare = static_cast<std::uint64_t>(cost == 0 ? 0 : max_bytes - bytes);
  return static_cast<std::uint64_t>(max_cost - cost) << bytes_bits | spare;
}

/// An item of a node over its capacity, as the shed bound reads it: cost (> 0), bytes and
/// the bucket of its bytes per cost (see cheapest_cover). Trivial, so the array of them is
/// not zero-filled before it is written.
struct shed_item {
  cost_t cost;
  bytes_t bytes;
  std::uint64_t bucket;
};

/// The items (of positive cost) of every node whose load exceeds ranks_per_node × target,
/// grouped by node, and what each such node must shed. Nodes within their capacity have an
/// empty group and need ≤ 0.
struct over_capacity_items {
  std::vector<int128> need;   // per node: load − ranks_per_node × target
  std::vector<index_t> first; // per node: start of its items
  std::vector<index_t> last;  // per node: end of its items
  uninit_vector<shed_item> items;
  // Over all items gathered: the least and the largest bucket of those with bytes (low >
  // high when none has any), and the OR of every cost and size (at least the largest).
  std::uint64_t low = ~std::uint64_t{0};
  std::uint64_t high = 0;
  std::int64_t all = 0;
};

/// Node quotas at `target`: per node, the cost of the items on it beyond ranks_per_node ×
/// target (> 0: what it must shed; ≤ 0: minus the room it has to receive) and how many items
/// it holds. The one computation both the inter-node lower bound (node_shed_lower_bound) and
/// node_first's shedding start from, so bound and heuristic cannot drift apart.
struct node_quotas {
  std::vector<int128> excess;
  std::vector<index_t> count;
};

/// Inputs validated by the caller (Σ costs fits). O(items + ranks).
[[nodiscard]] inline node_quotas quotas_at(std::span<const cost_t> costs,
                                           std::span<const rank_t> current_rank,
                                           const topology& topo, cost_t target) {
  const auto node = topo.node_of_ranks();
  std::vector<cost_t> rank_load(node.size(), 0);
  std::vector<index_t> rank_count(node.size(), 0);
  for (std::size_t i = 0; i < costs.size(); ++i) {
    const auto r = static_cast<std::size_t>(current_rank[i]);
    rank_load[r] += costs[i]; // ≤ Σ costs: checked by the caller
    ++rank_count[r];
  }
  node_quotas q;
  const auto nodes = static_cast<std::size_t>(topo.nodes());
  q.excess.assign(nodes, 0);
  q.count.assign(nodes, 0);
  for (std::size_t r = 0; r < node.size(); ++r) {
    const auto nd = static_cast<std::size_t>(node[r]);
    q.excess[nd] += rank_load[r] - int128{target};
    q.count[nd] += rank_count[r];
  }
  return q;
}

[[nodiscard]] inline over_capacity_items group_over_capacity(std::span<const cost_t> costs,
                                                             std::span<const rank_t> current_rank,
                                                             std::span<const bytes_t> item_bytes,
                                                             const topology& topo, cost_t target) {
  const auto node = topo.node_of_ranks();
  const auto nodes = static_cast<std::size_t>(topo.nodes());
  auto quotas = quotas_at(costs, current_rank, topo, target);
  over_capacity_items g;
  g.need = std::move(quotas.excess);
  const auto& count = quotas.count;
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
  // The buckets are computed here, while the item is at hand, and their range over all nodes
  // kept in registers: one histogram range serves every node (a few dozen buckets in
  // practice, far below cheapest_cover's limit).
  std::uint64_t low = ~std::uint64_t{0};
  std::uint64_t high = 0;
  std::int64_t all = 0;
  for (std::size_t i = 0; i < costs.size(); ++i) {
    const auto r = static_cast<std::size_t>(current_rank[i]);
    const cost_t c = costs[i];
    if (sheds[r] == 0 || c <= 0) {
      continue;
    }
    const bytes_t b = item_bytes[i];
    all |= c | b;
    const double ratio = static_cast<double>(b) / static_cast<double>(c);
    const std::uint64_t bucket = std::bit_cast<std::uint64_t>(ratio) >> 48;
    if (bucket != 0) { // zero bytes: bucket 0, far below all others (see cheapest_cover)
      low = std::min(low, bucket);
      high = std::max(high, bucket);
    }
    const auto nd = static_cast<std::size_t>(node[r]);
    g.items[static_cast<std::size_t>(g.last[nd]++)] = {c, b, bucket};
  }
  g.low = low;
  g.high = high;
  g.all = all;
  return g;
}

/// Moves to the front of [begin, end) a set of items (positive costs, buckets from
/// group_over_capacity, all within [g.low, g.high] or 0) that holds every item of the
/// cheapest bytes per cost ahead of all others and whose cost covers `need` (when the whole
/// range does), and returns its end; a walk in shed order that stops once `need` is covered
/// never leaves it. The set is the items up to a bucket of bytes/cost found by a histogram of
/// cost over buckets, so only it needs ordering.
///
/// Why it is exact: for integers below 2^53 the double quotient is the correctly rounded
/// ratio, so it never decreases as the exact ratio grows; the bucket (top bits of a positive
/// double: exponent and 4 mantissa bits, 16 buckets per octave) never decreases as the double
/// grows. An item in a higher bucket therefore has a strictly larger exact ratio than every
/// item in the set. Ranges with larger values, or buckets spread too widely, are returned
/// whole.
[[nodiscard]] inline shed_item* cheapest_cover(shed_item* begin, shed_item* end, int128 need,
                                               const over_capacity_items& g,
                                               std::vector<cost_t>& histogram) {
  constexpr std::int64_t exact = std::int64_t{1} << 53;
  if (g.all >= exact) {
    return end; // the quotients may be inexact
  }
  // Buckets only need to grow with the ratio, so zero-byte items join the bucket just below
  // the lowest other one instead of stretching the histogram down to 0.
  std::uint64_t low = 0;
  std::uint64_t high = 0;
  if (g.low <= g.high) { // else every item has zero bytes: one bucket
    low = g.low - 1;     // ≥ 0: a positive double has a positive bucket
    high = g.high;
  }
  if (begin == end || high - low >= cover_max_buckets) {
    return end;
  }
  histogram.assign(static_cast<std::size_t>(high - low) + 1, 0);
  for (const shed_item* it = begin; it != end; ++it) {
    const std::uint64_t bucket = it->bucket < low ? low : it->bucket;
    histogram[static_cast<std::size_t>(bucket - low)] += it->cost; // ≤ Σ costs: checked
  }
  std::size_t last = 0;
  int128 covered = histogram[0];
  while (covered < need && last + 1 < histogram.size()) {
    covered += histogram[++last];
  }
  const std::uint64_t cut = low + last;
  // The rest is not needed any more: compaction writes only the (few) items kept. (Zero-byte
  // items, counted in the lowest bucket, have bucket 0 ≤ cut.)
  return std::remove_if(begin, end, [cut](const shed_item& x) { return x.bucket > cut; });
}

/// For each node, the fewest bytes (fractional knapsack, rounded up) whose cost it must shed
/// so that what stays fits ranks_per_node × target; summed over nodes. The items are taken
/// cheapest bytes per cost first (the reverse of the keep order) from a heap, so a node pays
/// O(m) to build it plus O(log m) per item it sheds: the excess is usually a few items.
///
/// Items of equal bytes per cost may be shed in any order: whole ones add exactly ratio ×
/// cost bytes, so the total up to the last (fractional) one is ratio × the cost they cover,
/// rounded up once, whichever of them comes last.
[[nodiscard]] inline bytes_t node_shed_lower_bound(std::span<const cost_t> costs,
                                                   std::span<const rank_t> current_rank,
                                                   std::span<const bytes_t> item_bytes,
                                                   const topology& topo, cost_t target) {
  auto over = group_over_capacity(costs, current_rank, item_bytes, topo, target);
  // Heap order: the top has the fewest bytes per cost, i.e. is shed first. All costs are
  // positive here.
  const auto kept_earlier = [](const shed_item& a, const shed_item& b) {
    return int128{a.bytes} * b.cost > int128{b.bytes} * a.cost;
  };
  int128 bound = 0;
  std::vector<cost_t> histogram;
  for (std::size_t nd = 0; nd < over.need.size(); ++nd) {
    int128 need = over.need[nd];
    if (need <= 0) {
      continue;
    }
    shed_item* const begin = over.items.data() + over.first[nd];
    shed_item* end =
        cheapest_cover(begin, over.items.data() + over.last[nd], need, over, histogram);
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
