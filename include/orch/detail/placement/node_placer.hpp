// SPDX-License-Identifier: Apache-2.0
/// Internals of the placement engine (orch/placement/engine.hpp): placement of one node's
/// items for the per-node fill (ranks keep what fits, leftovers go best-fit to the node's ranks,
/// repair of fragmented room).
#pragma once

#include <orch/config.hpp>
#include <orch/detail/placement/packing.hpp>
#include <orch/detail/placement/rank_filling.hpp>
#include <orch/detail/placement/repair_lists.hpp>
#include <orch/detail/primitives/checked.hpp>
#include <orch/detail/tuning.hpp>
#include <orch/types.hpp>

#include <algorithm>
#include <bit>
#include <cstddef>
#include <cstdint>
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
    seg_.resize(g + 1);
    total_.resize(g);
    seg_[0] = 0;
    for (std::size_t l = 0; l < g; ++l) {
      const auto r = static_cast<std::size_t>(ranks[l]);
      seg_[l + 1] = seg_[l] + static_cast<std::size_t>(first[r + 1] - first[r]);
      total_[l] = rank_load[r];
    }
    const std::size_t m = seg_[g];
    // Sized once, then written by index: push_back per slot does not inline.
    items_.resize(m);
    cost_.resize(m);
    size_.resize(m);
    for (std::size_t l = 0; l < g; ++l) {
      const auto r = static_cast<std::size_t>(ranks[l]);
      std::size_t s = seg_[l];
      for (auto x = static_cast<std::size_t>(first[r]); x < static_cast<std::size_t>(first[r + 1]);
           ++x, ++s) {
        const auto i = static_cast<std::size_t>(order[x]);
        items_[s] = i;
        cost_[s] = costs_[i];
        size_[s] = bytes_[i];
      }
    }
    lists_.new_node();
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
      const slot_items node{cost_, size_, items_};
      const bytes_t by_size =
          filler_.largest_first(node, seg_[l], seg_[l + 1], target_, keep_size_, load_size_[l]);
      const bytes_t by_density = filler_.densest_first(node, seg_[l], seg_[l + 1], target_,
                                                       keep_density_, load_density_[l]);
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
    count_.resize(g);
    pool_.clear();
    taken_.clear();
    left_.clear();
    for (std::size_t l = 0; l < g; ++l) {
      const rank_t r = ranks_[l];
      if (total_[l] <= target_) {
        std::fill(rank_.begin() + static_cast<std::ptrdiff_t>(seg_[l]),
                  rank_.begin() + static_cast<std::ptrdiff_t>(seg_[l + 1]), r);
        room_[l] = target_ - total_[l];
        count_[l] = seg_[l + 1] - seg_[l];
        continue;
      }
      const bool density = !largest_first && use_density_[l] != 0;
      const auto& kept = density ? keep_density_ : keep_size_;
      const std::size_t shed = pool_.size();
      for (std::size_t s = seg_[l]; s < seg_[l + 1]; ++s) {
        if (kept[s] != 0) {
          rank_[s] = r;
        } else {
          pool_.push_back(s);
        }
      }
      room_[l] = target_ - (density ? load_density_[l] : load_size_[l]);
      count_[l] = seg_[l + 1] - seg_[l] - (pool_.size() - shed);
    }
    std::sort(pool_.begin(), pool_.end(),
              [&](std::size_t a, std::size_t b) { return packs_before(record(a), record(b)); });
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
          ++count_[best];
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
        } else {
          const std::size_t l = local_of(s);
          room_[l] -= cost_[s];
          ++count_[l];
        }
      }
    }
    repair();
    // Only the shed slots and those repair() took from a rank can be off their own rank
    // (every other slot stays where it is), each counted once.
    outcome out;
    seen_.assign(m, 0);
    changed_.clear();
    for (const auto* list : {&pool_, &taken_}) {
      for (const std::size_t s : *list) {
        if (seen_[s] != 0) {
          continue;
        }
        seen_[s] = 1;
        changed_.push_back(s);
        if (rank_[s] < 0) {
          out.leaving += size_[s]; // ≤ Σ bytes, checked by the caller
        } else if (rank_[s] != current_[items_[s]]) {
          out.moving += size_[s];
        }
      }
    }
    return out;
  }

  /// Items of the node by slot, and the rank (or -1) of each after the last place().
  [[nodiscard]] std::span<const std::size_t> items() const noexcept { return items_; }
  [[nodiscard]] std::span<const rank_t> rank() const noexcept { return rank_; }
  /// The slots that may be off their own rank after the last place(), each once: every other
  /// slot stays on its own rank.
  [[nodiscard]] std::span<const std::size_t> changed() const noexcept { return changed_; }

private:
  /// Slot s as a node_item, for the orders of packing.hpp.
  [[nodiscard]] node_item record(std::size_t s) const { return {cost_[s], size_[s], items_[s], s}; }

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
    std::size_t budget = repair_work_per_item * m + repair_work_base; // items a full scan visits
    // The lists get room for one more slot per try (a try adds a slot to at most one list).
    const std::size_t spare = (budget + m - 1) / m; // the number of tries at most
    first_.resize(g);
    lists_.build(cost_, size_, items_, count_, spare,
                 [&](std::size_t s) { return rank_[s] >= 0 ? local_of(s) : repair_lists::npos; });
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
      // Every rank's search first: they are independent, so their load chains overlap,
      // where one search per turn of the loop below would wait on each.
      for (std::size_t a = 0; a < g; ++a) {
        first_[a] = lists_.first_costing(a, cx - room_[a]);
      }
      for (std::size_t a = 0; a < g; ++a) {
        const auto kept = lists_.list(a);
        const std::size_t* list = kept.data();
        const std::size_t n = kept.size();
        const std::size_t k = first_[a];
        if (k == n) {
          continue;
        }
        const std::size_t y = lists_.best_from(a, k);
        if (size_[y] < size_[px] && (shed_y == m || lists_.smaller(y, shed_y))) {
          shed_y = y;
        }
        if (can_move) {
          // The smallest of the positions k.. whose cost fits `elsewhere` (a prefix of them:
          // the list ascends by cost). When the smallest of all k.. (y) fits, it is that one;
          // only otherwise are the positions scanned.
          const cost_t elsewhere = a != top ? room_[top] : elsewhere_top;
          if (cost_[y] <= elsewhere) {
            if (move_y == m || lists_.smaller(y, move_y)) {
              move_y = y;
            }
          } else {
            for (std::size_t x = k; x < n && lists_.cost_at(a, x) <= elsewhere; ++x) {
              if (move_y == m || lists_.smaller(list[x], move_y)) {
                move_y = list[x];
              }
            }
          }
        }
      }
      budget = budget > m ? budget - m : 0;
      const std::size_t j = move_y != m ? move_y : shed_y;
      if (j == m) {
        continue;
      }
      taken_.push_back(j);
      const std::size_t a = local_of(j);
      room_[a] += cost_[j] - cx;
      rank_[px] = ranks_[a];
      lists_.replace(a, j, px);
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
        rank_[j] = ranks_[b];
        lists_.insert(b, j);
      } else {
        rank_[j] = -1;
        left_.push_back(j); // smaller than x: it may still find room in this loop
      }
    }
  }

  /// Local index of the rank slot s is placed on (s is placed).
  [[nodiscard]] std::size_t local_of(std::size_t s) const {
    return static_cast<std::size_t>(local_[static_cast<std::size_t>(rank_[s])]);
  }

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
  rank_filler filler_;
  std::vector<rank_t> rank_;         // per slot: the placement
  std::vector<cost_t> room_;         // per local rank: under the target
  std::vector<std::size_t> pool_;    // slots shed by their rank
  std::vector<std::size_t> left_;    // slots that fit no rank of the node
  std::vector<std::size_t> taken_;   // repair: slots moved or shed from a rank
  std::vector<char> seen_;           // scratch of place()'s outcome
  std::vector<std::size_t> changed_; // see changed()
  std::vector<std::size_t> count_;   // per local rank: slots placed on it
  repair_lists lists_;               // repair: kept slots per rank, by cost
  std::vector<std::size_t> first_;   // repair: per local rank, its first candidate (a try's)
};

} // namespace orch::detail
