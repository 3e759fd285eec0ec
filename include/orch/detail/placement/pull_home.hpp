// SPDX-License-Identifier: Apache-2.0
/// The placement engine's last step against a balancer's bins: items that a placement (the
/// bins rearranged node-wise, or the heuristics' result) left off their home node are brought
/// back by moves and swaps that keep every load under a bound (docs/plans.md, "The placement
/// engine").
#pragma once

#include <orch/detail/tuning.hpp>
#include <orch/topology.hpp>
#include <orch/types.hpp>

#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <span>
#include <vector>

namespace orch::detail {

/// Items per node, updated as items move: each item knows its place in its node's list, so a
/// move is O(1) (the list order is irrelevant: every choice below breaks ties by item index).
class node_members {
public:
  node_members(std::span<const rank_t> rank_of, std::span<const rank_t> node_of_rank, rank_t nodes)
      : lists_(static_cast<std::size_t>(nodes)), place_(rank_of.size()) {
    for (std::size_t i = 0; i < rank_of.size(); ++i) {
      auto& list =
          lists_[static_cast<std::size_t>(node_of_rank[static_cast<std::size_t>(rank_of[i])])];
      place_[i] = list.size();
      list.push_back(static_cast<index_t>(i));
    }
  }
  [[nodiscard]] std::span<const index_t> on(rank_t node) const noexcept {
    return lists_[static_cast<std::size_t>(node)];
  }
  void move(index_t item, rank_t from, rank_t to) {
    auto& src = lists_[static_cast<std::size_t>(from)];
    const auto at = place_[static_cast<std::size_t>(item)];
    src[at] = src.back();
    place_[static_cast<std::size_t>(src[at])] = at;
    src.pop_back();
    auto& dst = lists_[static_cast<std::size_t>(to)];
    place_[static_cast<std::size_t>(item)] = dst.size();
    dst.push_back(item);
  }

private:
  std::vector<std::vector<index_t>> lists_;
  std::vector<std::size_t> place_;
};

/// Improves a placement whose loads are all at most `target` by bringing items back to the
/// node of their home rank (`home[i]`, where item i's bytes are now), largest bytes first
/// (ties: lower index): to the home rank if it has room, else to the rank of the home node
/// with the most room that fits (ties: lower rank), else by a swap with an item that sits on
/// the home node but is itself away from its own node (it takes i's rank: home, if that is
/// its node), the one saving the most bytes across nodes (ties: lower index), keeping both
/// loads under the target. Passes repeat while one moved something, at most
/// pull_home_passes times; swap searches stop once they have looked at
/// pull_home_work_per_item · n candidates in all.
/// Guarantees: every step lowers the bytes that cross nodes, so the result never sends more
/// across nodes than the input; no item on its home node is moved; every load stays at most
/// `target`.
/// Inputs: rank_of and loads consistent, every load ≤ target (the caller's invariant).
/// Complexity: O(n log n + passes · n) plus the budgeted swap searches. Deterministic.
inline void pull_home(std::span<const cost_t> costs, std::span<const rank_t> home,
                      std::span<const bytes_t> bytes, const topology& topo, cost_t target,
                      std::vector<rank_t>& rank_of, std::vector<cost_t>& loads) {
  const auto node = topo.node_of_ranks();
  const auto node_of_item = [&](rank_t r) { return node[static_cast<std::size_t>(r)]; };
  std::vector<index_t> away; // items off their home node that carry bytes
  for (std::size_t i = 0; i < rank_of.size(); ++i) {
    if (bytes[i] > 0 && node_of_item(rank_of[i]) != node_of_item(home[i])) {
      away.push_back(static_cast<index_t>(i));
    }
  }
  if (away.empty()) {
    return;
  }
  std::sort(away.begin(), away.end(), [&](index_t a, index_t b) {
    const auto ba = bytes[static_cast<std::size_t>(a)];
    const auto bb = bytes[static_cast<std::size_t>(b)];
    return ba != bb ? ba > bb : a < b;
  });
  node_members members(rank_of, node, topo.nodes());
  std::int64_t work = pull_home_work_per_item * static_cast<std::int64_t>(rank_of.size());
  const auto relocate = [&](index_t item, rank_t to) {
    const auto i = static_cast<std::size_t>(item);
    const rank_t from = rank_of[i];
    loads[static_cast<std::size_t>(from)] -= costs[i];
    loads[static_cast<std::size_t>(to)] += costs[i];
    if (node_of_item(from) != node_of_item(to)) {
      members.move(item, node_of_item(from), node_of_item(to));
    }
    rank_of[i] = to;
  };
  const auto room = [&](rank_t r) { return target - loads[static_cast<std::size_t>(r)]; };
  for (int pass = 0; pass < pull_home_passes; ++pass) {
    bool changed = false;
    for (const index_t item : away) {
      const auto i = static_cast<std::size_t>(item);
      const rank_t at = rank_of[i];
      const rank_t home_node = node_of_item(home[i]);
      const rank_t at_node = node_of_item(at);
      if (at_node == home_node) {
        continue; // brought home earlier (as the partner of a swap)
      }
      const cost_t c = costs[i];
      // A move: the home rank first (its bytes then stay on their GPU), else the roomiest rank
      // of the home node that fits.
      rank_t to = room(home[i]) >= c ? home[i] : -1;
      for (const rank_t r : topo.ranks_on(home_node)) { // ascending: ties go to the lower rank
        if (to != home[i] && room(r) >= c && (to < 0 || room(r) > room(to))) {
          to = r;
        }
      }
      if (to >= 0) {
        relocate(item, to);
        changed = true;
        continue;
      }
      if (work <= 0) {
        continue;
      }
      // A swap with an item j away from its own node that sits on i's home node: i goes home
      // (saving its bytes), j goes to i's rank (saving its bytes too if that is its node).
      index_t best = -1;
      bytes_t best_gain = 0;
      const auto candidates = members.on(home_node);
      work -= static_cast<std::int64_t>(candidates.size());
      for (const index_t other : candidates) {
        const auto j = static_cast<std::size_t>(other);
        const rank_t r = rank_of[j];
        const cost_t d = c - costs[j]; // what r gains and `at` loses
        if (d > room(r) || -d > room(at)) {
          continue;
        }
        const rank_t j_home = node_of_item(home[j]);
        if (j_home == home_node) {
          continue; // never send an item away from its node
        }
        const bytes_t gain = bytes[i] + (j_home == at_node ? bytes[j] : 0);
        if (gain > best_gain || (gain == best_gain && gain > 0 && other < best)) {
          best = other;
          best_gain = gain;
        }
      }
      if (best >= 0) {
        const rank_t r = rank_of[static_cast<std::size_t>(best)];
        relocate(best, at);
        relocate(item, r);
        changed = true;
      }
    }
    if (!changed) {
      break;
    }
  }
}

} // namespace orch::detail
