// SPDX-License-Identifier: Apache-2.0
/// Internals of the placement engine (orch/placement/engine.hpp): which items a node over its
/// capacity sheds (a greedy knapsack cover of its excess, fewest bytes per cost first), the
/// first step of node_first.
#pragma once

#include <orch/config.hpp>
#include <orch/detail/primitives/checked.hpp>
#include <orch/detail/tuning.hpp>
#include <orch/types.hpp>

#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <span>
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

} // namespace orch::detail
