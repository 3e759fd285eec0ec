// SPDX-License-Identifier: Apache-2.0
/// Exact maximum-profit assignment of bins to capacitated targets with sparse profits: the
/// transportation problem behind the node-wise rearrangement (orch/locality.hpp).
#pragma once

#include <orch/config.hpp>
#include <orch/detail/primitives/checked.hpp>
#include <orch/types.hpp>

#include <cstddef>
#include <cstdint>
#include <functional>
#include <queue>
#include <span>
#include <utility>
#include <vector>

namespace orch::detail {

/// Profits of bins on targets, CSR by bin: entries first[k]..first[k+1]-1 list (target,
/// profit) with profit > 0, distinct targets, each with capacity ≥ 1; every unlisted (bin,
/// target) pair has profit 0.
struct sparse_profits {
  std::vector<index_t> first{0};
  std::vector<rank_t> target;
  std::vector<bytes_t> profit;

  [[nodiscard]] std::size_t bins() const noexcept { return first.size() - 1; }
};

/// Assigns every bin to a target, at most capacity[t] bins per target (Σ capacity ≥ bins),
/// maximising the total profit of the chosen (bin, target) pairs.
///
/// Method: the Hungarian method (successive shortest augmenting paths with potentials) on the
/// bins × targets problem, with two reductions that make it fast on sparse profits:
///  - the slots of a target are identical, so Dijkstra runs over targets, not slots;
///  - all unlisted pairs have profit 0, and every target with free room has price 0 (prices
///    only rise on full targets), so "move bin k to any unlisted target" is one candidate
///    path to the sink per scanned bin, never a scan over all targets.
/// Bins first take their best target while it has room (prices 0 keep this dual-feasible);
/// only the rest are augmented, and each Dijkstra stops at the first target with free room.
/// Bins without any profit take the leftover room last, in index order.
///
/// Complexity: O(E log T) per augmenting path, E the profit entries on the explored part, at
/// most bins paths (in practice far fewer and much shorter). Guarantee: exact optimum (ties
/// between optimal assignments are broken deterministically, by bin and target indices).
/// Dual values are kept in 128 bits, so no profit sum below 2^63 can overflow them.
[[nodiscard]] inline std::vector<rank_t> max_profit_assignment(const sparse_profits& p,
                                                               std::span<const rank_t> capacity) {
  using wide = int128;
  const std::size_t bins = p.bins();
  const std::size_t targets = capacity.size();
  std::vector<rank_t> target_of(bins, -1);
  std::vector<rank_t> used(targets, 0);
  std::vector<std::vector<rank_t>> members(targets); // bins on each target
  std::vector<std::size_t> member_pos(bins, 0);      // position of a bin in its members list
  std::vector<wide> price(targets, 0);               // −v: ≥ 0, 0 while the target has room
  std::vector<wide> u(bins, 0);                      // row potentials, tight on assigned pairs
  std::size_t first_free = 0; // targets only ever fill up, so the lowest free one only grows
  while (first_free < targets && capacity[first_free] <= 0) {
    ++first_free;
  }
#ifndef NDEBUG
  for (const rank_t t : p.target) {
    ORCH_ASSERT(capacity[static_cast<std::size_t>(t)] >= 1);
  }
#endif

  const auto profit_of = [&](std::size_t bin, rank_t t) -> bytes_t {
    for (auto e = static_cast<std::size_t>(p.first[bin]);
         e < static_cast<std::size_t>(p.first[bin + 1]); ++e) {
      if (p.target[e] == t) {
        return p.profit[e];
      }
    }
    return 0;
  };
  const auto place = [&](std::size_t bin, rank_t t) {
    const auto ti = static_cast<std::size_t>(t);
    member_pos[bin] = members[ti].size();
    members[ti].push_back(static_cast<rank_t>(bin));
    target_of[bin] = t;
    ++used[ti];
    while (first_free < targets && used[first_free] >= capacity[first_free]) {
      ++first_free;
    }
  };
  const auto unplace = [&](std::size_t bin) {
    const auto ti = static_cast<std::size_t>(target_of[bin]);
    auto& list = members[ti];
    const rank_t last = list.back();
    list[member_pos[bin]] = last;
    member_pos[static_cast<std::size_t>(last)] = member_pos[bin];
    list.pop_back();
    --used[ti]; // the bin moves on within the same augmentation: first_free stays valid
    target_of[bin] = -1;
  };

  // Phase 1: every bin with a positive profit takes its best target if that has room.
  std::vector<std::size_t> pending;
  std::vector<std::size_t> zero_bins;
  for (std::size_t k = 0; k < bins; ++k) {
    const auto b = static_cast<std::size_t>(p.first[k]);
    const auto e = static_cast<std::size_t>(p.first[k + 1]);
    if (b == e) {
      zero_bins.push_back(k);
      continue;
    }
    std::size_t best = b;
    for (std::size_t x = b + 1; x < e; ++x) {
      if (p.profit[x] > p.profit[best] ||
          (p.profit[x] == p.profit[best] && p.target[x] < p.target[best])) {
        best = x;
      }
    }
    const auto t = static_cast<std::size_t>(p.target[best]);
    if (used[t] < capacity[t]) {
      u[k] = -wide{p.profit[best]};
      place(k, p.target[best]);
    } else {
      pending.push_back(k);
    }
  }

  // Phase 2: one shortest augmenting path per remaining bin, in reduced costs
  // c(k, t) − u_k + price_t ≥ 0 with c = −profit.
  std::vector<wide> dist(targets, 0);
  std::vector<rank_t> pred(targets, -1); // the bin that moves into the target on the path
  std::vector<std::uint32_t> seen(targets, 0);
  std::vector<std::uint32_t> done(targets, 0);
  std::vector<rank_t> finalised;
  using entry = std::pair<wide, rank_t>;
  std::priority_queue<entry, std::vector<entry>, std::greater<entry>> heap;
  std::uint32_t stamp = 0;
  for (const std::size_t k0 : pending) {
    ++stamp;
    finalised.clear();
    heap = {};
    const auto b0 = static_cast<std::size_t>(p.first[k0]);
    const auto e0 = static_cast<std::size_t>(p.first[k0 + 1]);
    // u_k0 = min over all targets of c + price; unlisted targets with room give 0.
    wide u0 = 0;
    for (std::size_t x = b0; x < e0; ++x) {
      const wide c = price[static_cast<std::size_t>(p.target[x])] - p.profit[x];
      u0 = c < u0 ? c : u0;
    }
    u[k0] = u0;
    wide hub = -u0; // cheapest path found so far to a free target through an unlisted pair
    rank_t hub_bin = static_cast<rank_t>(k0);
    for (std::size_t x = b0; x < e0; ++x) {
      const auto t = static_cast<std::size_t>(p.target[x]);
      seen[t] = stamp;
      dist[t] = price[t] - p.profit[x] - u0;
      pred[t] = static_cast<rank_t>(k0);
      heap.emplace(dist[t], p.target[x]);
    }
    rank_t sink = -1;
    wide total = 0;
    for (;;) {
      while (!heap.empty() && done[static_cast<std::size_t>(heap.top().second)] == stamp) {
        heap.pop();
      }
      if (heap.empty() || hub <= heap.top().first) {
        ORCH_ASSERT(first_free < targets);
        sink = static_cast<rank_t>(first_free);
        total = hub;
        pred[first_free] = hub_bin;
        break;
      }
      const auto [d, t] = heap.top();
      heap.pop();
      const auto ti = static_cast<std::size_t>(t);
      done[ti] = stamp;
      finalised.push_back(t);
      if (used[ti] < capacity[ti]) {
        sink = t;
        total = d;
        break;
      }
      for (const rank_t kb : members[ti]) {
        const auto k = static_cast<std::size_t>(kb);
        if (d - u[k] < hub) {
          hub = d - u[k];
          hub_bin = kb;
        }
        for (auto x = static_cast<std::size_t>(p.first[k]);
             x < static_cast<std::size_t>(p.first[k + 1]); ++x) {
          const auto m = static_cast<std::size_t>(p.target[x]);
          if (m == ti || done[m] == stamp) {
            continue;
          }
          const wide nd = d + price[m] - p.profit[x] - u[k];
          // A path through m that already costs as much as the best sink cannot win: skip it
          // (fewer heap entries; m is then not finalised, which the update rule allows).
          if (nd < hub && (seen[m] != stamp || nd < dist[m])) {
            seen[m] = stamp;
            dist[m] = nd;
            pred[m] = kb;
            heap.emplace(nd, p.target[x]);
          }
        }
      }
    }
    // Potentials: finalised targets (and their bins) move by total − dist; the root by total.
    for (const rank_t t : finalised) {
      const auto ti = static_cast<std::size_t>(t);
      if (t == sink) {
        continue; // dist = total: no change
      }
      const wide delta = total - dist[ti];
      price[ti] += delta;
      for (const rank_t kb : members[ti]) {
        u[static_cast<std::size_t>(kb)] += delta;
      }
    }
    u[k0] += total;
    // Augment: walk back from the sink, each bin moving one step along the path.
    rank_t cur = sink;
    for (;;) {
      const auto k = static_cast<std::size_t>(pred[static_cast<std::size_t>(cur)]);
      const rank_t prev = target_of[k];
      if (prev >= 0) {
        unplace(k);
      }
      place(k, cur);
      if (k == k0) {
        break;
      }
      ORCH_ASSERT(prev >= 0);
      cur = prev;
    }
  }
  static_cast<void>(profit_of); // used by debug checks below
#ifndef NDEBUG
  // Complementary slackness on every assigned pair: the potentials certify optimality.
  for (std::size_t k = 0; k < bins; ++k) {
    if (target_of[k] >= 0) {
      const auto t = static_cast<std::size_t>(target_of[k]);
      ORCH_ASSERT(u[k] == price[t] - profit_of(k, target_of[k]));
    }
  }
#endif
  for (const std::size_t k : zero_bins) {
    ORCH_ASSERT(first_free < targets);
    place(k, static_cast<rank_t>(first_free));
  }
  return target_of;
}

} // namespace orch::detail
