// SPDX-License-Identifier: Apache-2.0
/// Internals of orch/locality.hpp: placement of one node's items for the locality-first
/// heuristic (ranks keep what fits, leftovers go best-fit to the node's ranks, repair of
/// fragmented room).
#pragma once

#include <orch/config.hpp>
#include <orch/detail/checked.hpp>
#include <orch/detail/packing.hpp>
#include <orch/types.hpp>

#include <algorithm>
#include <cstddef>
#include <span>
#include <utility>
#include <vector>

namespace orch::detail {

/// Placement of the items of one node at a time. Buffers live across nodes, so placing a
/// node allocates nothing once they have grown. Items of the node are held in "slots", grouped
/// by their current rank (local index order), by increasing item index within a rank.
class node_placer {
public:
  /// Bytes a placement sends off the node and moves inside it.
  struct outcome {
    bytes_t leaving = 0;
    bytes_t moving = 0;
  };

  node_placer(std::span<const cost_t> costs, std::span<const bytes_t> bytes,
              std::span<const rank_t> current, std::span<const rank_t> local, cost_t target)
      : costs_(costs), bytes_(bytes), current_(current), local_(local), target_(target) {}

  /// Starts a node: its ranks (local-index order), the items of each of them (`first`/`order`
  /// grouped by rank) and each rank's own load. Then, for every rank above the target, the
  /// two greedy fillings of its own items (largest first; most bytes per cost first) and
  /// which of them it keeps under keep_mode::most_bytes.
  void start(std::span<const rank_t> ranks, std::span<const index_t> first,
             std::span<const index_t> order, std::span<const cost_t> rank_load) {
    ranks_ = ranks;
    const std::size_t g = ranks.size();
    items_.clear();
    cost_.clear();
    size_.clear();
    seg_.assign(1, 0);
    total_.resize(g);
    for (std::size_t l = 0; l < g; ++l) {
      const auto r = static_cast<std::size_t>(ranks[l]);
      for (auto x = static_cast<std::size_t>(first[r]); x < static_cast<std::size_t>(first[r + 1]);
           ++x) {
        const auto i = static_cast<std::size_t>(order[x]);
        items_.push_back(i);
        cost_.push_back(costs_[i]);
        size_.push_back(bytes_[i]);
      }
      seg_.push_back(items_.size());
      total_[l] = rank_load[r];
    }
    const std::size_t m = items_.size();
    by_cost_.clear();
    keep_size_.assign(m, 0);
    keep_density_.assign(m, 0);
    load_size_.assign(g, 0);
    load_density_.assign(g, 0);
    use_density_.assign(g, 0);
    differs_ = false;
    for (std::size_t l = 0; l < g; ++l) {
      if (total_[l] <= target_) {
        continue;
      }
      // Two greedy fillings (largest first, most bytes per cost first): the one keeping more
      // bytes wins. Neither alone is good: density-first can shed one huge item that no other
      // rank can take, largest-first sheds more bytes when items differ in bytes per cost.
      buffer_.clear();
      for (std::size_t s = seg_[l]; s < seg_[l + 1]; ++s) {
        buffer_.push_back({cost_[s], size_[s], items_[s], s});
      }
      // Lambdas, not function pointers: the comparisons inline into the sorts.
      std::sort(buffer_.begin(), buffer_.end(),
                [](const node_item& a, const node_item& b) { return packs_before(a, b); });
      const bytes_t by_size = fill(keep_size_, load_size_[l]);
      std::sort(buffer_.begin(), buffer_.end(),
                [](const node_item& a, const node_item& b) { return keeps_before(a, b); });
      const bytes_t by_density = fill(keep_density_, load_density_[l]);
      bool same = true;
      for (std::size_t s = seg_[l]; s < seg_[l + 1]; ++s) {
        same = same && keep_size_[s] == keep_density_[s];
      }
      if (by_density >= by_size && !same) {
        use_density_[l] = 1;
        differs_ = true;
      }
    }
  }

  /// True when some rank keeps, under keep_mode::most_bytes, another set than largest first.
  [[nodiscard]] bool differs() const noexcept { return differs_; }

  /// Places the node: every rank keeps its chosen set (all its items if at or under the
  /// target), the rest goes best-fit, largest first, to the node's ranks with room, then
  /// repair(); what fits nowhere gets rank -1 (leaves the node). See rank().
  outcome place(bool largest_first) {
    const std::size_t g = ranks_.size();
    const std::size_t m = items_.size();
    rank_.assign(m, -1);
    room_.resize(g);
    pool_.clear();
    left_.clear();
    for (std::size_t l = 0; l < g; ++l) {
      const rank_t r = ranks_[l];
      if (total_[l] <= target_) {
        std::fill(rank_.begin() + static_cast<std::ptrdiff_t>(seg_[l]),
                  rank_.begin() + static_cast<std::ptrdiff_t>(seg_[l + 1]), r);
        room_[l] = target_ - total_[l];
        continue;
      }
      const bool density = !largest_first && use_density_[l] != 0;
      const auto& kept = density ? keep_density_ : keep_size_;
      for (std::size_t s = seg_[l]; s < seg_[l + 1]; ++s) {
        if (kept[s] != 0) {
          rank_[s] = r;
        } else {
          pool_.push_back(s);
        }
      }
      room_[l] = target_ - (density ? load_density_[l] : load_size_[l]);
    }
    std::sort(pool_.begin(), pool_.end(), [&](std::size_t a, std::size_t b) {
      return packs_before({cost_[a], size_[a], items_[a], a}, {cost_[b], size_[b], items_[b], b});
    });
    // Best fit: the rank with the least room that still fits, lowest rank among equals. A
    // linear scan over a node's few ranks; wide nodes use the ordered set.
    if (g <= linear_fit_ranks) {
      for (const std::size_t s : pool_) {
        std::size_t best = g;
        for (std::size_t l = 0; l < g; ++l) {
          if (room_[l] >= cost_[s] && (best == g || room_[l] < room_[best] ||
                                       (room_[l] == room_[best] && ranks_[l] < ranks_[best]))) {
            best = l;
          }
        }
        if (best == g) {
          left_.push_back(s);
        } else {
          room_[best] -= cost_[s];
          rank_[s] = ranks_[best];
        }
      }
    } else {
      best_fit fit;
      for (std::size_t l = 0; l < g; ++l) {
        fit.add(ranks_[l], room_[l]);
      }
      for (const std::size_t s : pool_) {
        rank_[s] = fit.take(cost_[s]);
        if (rank_[s] < 0) {
          left_.push_back(s);
        }
      }
    }
    repair();
    outcome out;
    for (std::size_t s = 0; s < m; ++s) {
      if (rank_[s] < 0) {
        out.leaving += size_[s]; // ≤ Σ bytes, checked by the caller
      } else if (rank_[s] != current_[items_[s]]) {
        out.moving += size_[s];
      }
    }
    return out;
  }

  /// Items of the node by slot, and the rank (or -1) of each after the last place().
  [[nodiscard]] std::span<const std::size_t> items() const noexcept { return items_; }
  [[nodiscard]] std::span<const rank_t> rank() const noexcept { return rank_; }

private:
  /// Greedy filling of the rank in buffer_'s order: marks the kept slots, returns their bytes.
  bytes_t fill(std::vector<char>& kept, cost_t& load) const {
    bytes_t bytes = 0;
    load = 0;
    for (const node_item& it : buffer_) {
      if (it.cost <= target_ - load) {
        load += it.cost;
        bytes += it.bytes;
        kept[it.slot] = 1;
      }
    }
    return bytes;
  }

  /// Repairs a placement whose items left_ (rank -1, largest first) fit no rank: the room is
  /// there but fragmented. For each such item x, in order of preference:
  ///  1. move one kept item y (fewest bytes) from a rank A to another rank B with room for it,
  ///     when that frees enough room on A for x (y moves inside the node, x stays on it);
  ///  2. let a kept item y with fewer bytes than x leave instead, when that frees room for x.
  /// Among equal bytes the lower item index wins. The number of items x tried is bounded by a
  /// budget counted as if every try scanned the whole node (deterministic, never wall-clock);
  /// the per-rank candidate lists make a try O(ranks · log) instead.
  void repair() {
    if (left_.empty()) {
      return;
    }
    const std::size_t g = ranks_.size();
    const std::size_t m = items_.size();
    at_.assign(m, -1);
    room_.assign(g, target_);
    for (std::size_t s = 0; s < m; ++s) {
      if (rank_[s] >= 0) {
        at_[s] = local_[static_cast<std::size_t>(rank_[s])];
        room_[static_cast<std::size_t>(at_[s])] -= cost_[s];
      }
    }
    // Kept slots of every rank by cost, with suffix minima of (bytes, item index): a y on rank
    // A frees room for x iff cost(y) ≥ cost(x) − room(A), a suffix of A's list, so the best
    // candidate of each rank is one binary search away.
    if (by_cost_.size() != m) { // once per node: both placements repair the same items
      // (cost, slot) records sort without chasing the slots: the order of cheaper().
      keyed_.resize(m);
      for (std::size_t s = 0; s < m; ++s) {
        keyed_[s] = {cost_[s], s};
      }
      std::sort(keyed_.begin(), keyed_.end());
      by_cost_.resize(m);
      for (std::size_t s = 0; s < m; ++s) {
        by_cost_[s] = keyed_[s].second;
      }
    }
    members_.resize(g);
    suffix_best_.resize(g);
    for (std::size_t l = 0; l < g; ++l) {
      members_[l].clear();
    }
    for (const std::size_t s : by_cost_) {
      if (at_[s] >= 0) {
        members_[static_cast<std::size_t>(at_[s])].push_back(s);
      }
    }
    for (std::size_t l = 0; l < g; ++l) {
      index_rank(l);
    }
    std::size_t budget = 16 * m + 1024; // counts the items a full scan of the node visits
    for (std::size_t q = 0; q < left_.size() && budget > 0; ++q) {
      const std::size_t px = left_[q];
      const cost_t cx = cost_[px];
      // The two largest rooms, so "another rank with room for y" is an O(1) test.
      std::size_t top = 0;
      std::size_t second = g; // none
      for (std::size_t l = 1; l < g; ++l) {
        if (room_[l] > room_[top]) {
          second = top;
          top = l;
        } else if (second == g || room_[l] > room_[second]) {
          second = l;
        }
      }
      const cost_t elsewhere_top = second == g ? -1 : room_[second];
      // y can move only if its rank's room plus the room elsewhere holds x.
      const bool can_move = second != g && int128{room_[top]} + room_[second] >= cx;
      std::size_t move_y = m; // candidate for 1
      std::size_t shed_y = m; // candidate for 2
      for (std::size_t a = 0; a < g; ++a) {
        const auto& list = members_[a];
        const cost_t least = cx - room_[a];
        const auto k = static_cast<std::size_t>(
            std::partition_point(list.begin(), list.end(),
                                 [&](std::size_t y) { return cost_[y] < least; }) -
            list.begin());
        if (k == list.size()) {
          continue;
        }
        const std::size_t y = suffix_best_[a][k];
        if (size_[y] < size_[px] && (shed_y == m || smaller(y, shed_y))) {
          shed_y = y;
        }
        if (can_move) {
          const cost_t elsewhere = a != top ? room_[top] : elsewhere_top;
          for (std::size_t x = k; x < list.size() && cost_[list[x]] <= elsewhere; ++x) {
            if (move_y == m || smaller(list[x], move_y)) {
              move_y = list[x];
            }
          }
        }
      }
      budget = budget > m ? budget - m : 0;
      const std::size_t j = move_y != m ? move_y : shed_y;
      if (j == m) {
        continue;
      }
      const auto a = static_cast<std::size_t>(at_[j]);
      room_[a] += cost_[j] - cx;
      at_[px] = static_cast<std::ptrdiff_t>(a);
      rank_[px] = ranks_[a];
      auto& list = members_[a];
      list.erase(std::find(list.begin(), list.end(), j));
      list.insert(std::upper_bound(list.begin(), list.end(), px, cheaper()), px);
      index_rank(a);
      if (j == move_y) {
        // y goes to the rank with the least room that still fits it (not A).
        std::size_t b = g;
        for (std::size_t l = 0; l < g; ++l) {
          if (l != a && room_[l] >= cost_[j] && (b == g || room_[l] < room_[b])) {
            b = l;
          }
        }
        ORCH_ASSERT(b != g);
        room_[b] -= cost_[j];
        at_[j] = static_cast<std::ptrdiff_t>(b);
        rank_[j] = ranks_[b];
        members_[b].insert(std::upper_bound(members_[b].begin(), members_[b].end(), j, cheaper()),
                           j);
        index_rank(b);
      } else {
        at_[j] = -1;
        rank_[j] = -1;
        left_.push_back(j); // smaller than x: it may still find room in this loop
      }
    }
  }

  /// Fewer bytes first, then the lower item index (the order repair's candidates compete in).
  [[nodiscard]] bool smaller(std::size_t a, std::size_t b) const {
    return size_[a] != size_[b] ? size_[a] < size_[b] : items_[a] < items_[b];
  }

  /// Order of the repair lists: by cost, then slot.
  struct cheaper_order {
    const node_placer* p;
    bool operator()(std::size_t a, std::size_t b) const {
      return p->cost_[a] != p->cost_[b] ? p->cost_[a] < p->cost_[b] : a < b;
    }
  };
  [[nodiscard]] cheaper_order cheaper() const { return {this}; }

  /// Records, per position of rank l's list (kept slots by cost), the smaller() slot from
  /// there to the end.
  void index_rank(std::size_t l) {
    const auto& list = members_[l];
    auto& best = suffix_best_[l];
    best.resize(list.size());
    for (std::size_t x = list.size(); x-- > 0;) {
      best[x] = x + 1 == list.size() || smaller(list[x], best[x + 1]) ? list[x] : best[x + 1];
    }
  }

  // Up to this many ranks a node's best fit scans them; beyond, an ordered set is cheaper.
  static constexpr std::size_t linear_fit_ranks = 32;

  std::span<const cost_t> costs_;
  std::span<const bytes_t> bytes_;
  std::span<const rank_t> current_;
  std::span<const rank_t> local_; // local index of every rank of the topology
  cost_t target_;
  std::span<const rank_t> ranks_;    // of the node, by local index
  std::vector<std::size_t> items_;   // per slot: the item
  std::vector<cost_t> cost_;         // per slot
  std::vector<bytes_t> size_;        // per slot
  std::vector<std::size_t> seg_;     // per local rank + 1: its slots
  std::vector<cost_t> total_;        // per local rank: its own load
  std::vector<char> keep_size_;      // per slot: kept by the largest-first filling
  std::vector<char> keep_density_;   // per slot: kept by the most-bytes-per-cost filling
  std::vector<cost_t> load_size_;    // per local rank: load of the largest-first filling
  std::vector<cost_t> load_density_; // per local rank
  std::vector<char> use_density_;    // per local rank: most_bytes keeps the density filling
  bool differs_ = false;
  std::vector<node_item> buffer_;
  std::vector<rank_t> rank_;                          // per slot: the placement
  std::vector<cost_t> room_;                          // per local rank
  std::vector<std::size_t> pool_;                     // slots shed by their rank
  std::vector<std::size_t> left_;                     // slots that fit no rank of the node
  std::vector<std::ptrdiff_t> at_;                    // repair: local rank of every slot, or -1
  std::vector<std::pair<cost_t, std::size_t>> keyed_; // repair: scratch of the sort below
  std::vector<std::size_t> by_cost_;                  // repair: slots by cheaper()
  std::vector<std::vector<std::size_t>> members_;     // repair: kept slots per rank, by cost
  std::vector<std::vector<std::size_t>> suffix_best_; // repair: see index_rank
};

} // namespace orch::detail
