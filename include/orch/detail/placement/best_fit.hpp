// SPDX-License-Identifier: Apache-2.0
/// Internals of orch/locality.hpp: best-fit packing over ranks (the rank with the least room
/// that still fits an item).
#pragma once

#include <orch/config.hpp>
#include <orch/types.hpp>

#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <functional>
#include <utility>
#include <vector>

namespace orch::detail {

/// Best-fit packing state over some ranks: take(cost) gives the rank with the least room that
/// still fits, the lowest rank among equal rooms.
///
/// Why no ordered set: callers take items largest first, so the cost a query asks for mostly
/// falls. The (room, rank) entries are split at the last cost asked for, t: those with room
/// ≥ t in a stack sorted so that the least is on top (the best fit is the top); of those
/// below t the largest is the next to reach a falling t, so they wait in a sorted array (the
/// rooms as added that can ever fit, see sort_from) and a max-heap (all others). A take
/// shrinks the top, which then stays the least of the stack or drops into the heap; a
/// falling t moves the largest entries below it onto the stack, a rising one stack tops into
/// the heap. With falling costs an entry crosses t at most once per take that shrinks it, so
/// a take costs O(log ranks) amortised in flat arrays, and rooms that never fit anything
/// (often half of them) are never ordered.
class best_fit {
public:
  /// Adds a rank with its room, in any order (O(1) before the first take).
  void add(rank_t rank, cost_t room) {
    if (!started_) {
      heap_.emplace_back(room, rank);
    } else {
      put({room, rank});
    }
  }
  /// A hint, before the first take: no take will ask for less than `least`, so the rooms
  /// from `least` up are sorted once instead of passing through the heap one by one. Any
  /// value gives the same ranks.
  void sort_from(cost_t least) noexcept { least_ = least; }
  /// The rank the item goes to (its room shrinks), or -1 when it fits nowhere.
  rank_t take(cost_t cost) {
    split_at(cost);
    if (fits_.empty()) {
      return -1;
    }
    entry& top = fits_.back();
    const rank_t rank = top.second;
    top.first -= cost;
    if (top.first < threshold_) { // else still the least room ≥ t: it was the least before
      push_heap(top);
      fits_.pop_back();
    }
    return rank;
  }
  /// The rank with the most room (lowest rank among equals); it takes the item regardless.
  /// At least one rank must have been added.
  rank_t take_most_room(cost_t cost) {
    start();
    if (fits_.empty()) {
      // Every room is below t: t falls to the most room, which moves exactly the entries with
      // that room onto the stack.
      ORCH_ASSERT(next_ > 0 || !heap_.empty());
      split_at(largest_below().first);
    }
    // The stack descends from its front: the most room first, higher ranks before lower.
    std::size_t j = 0;
    while (j + 1 < fits_.size() && fits_[j + 1].first == fits_.front().first) {
      ++j;
    }
    entry e = fits_[j];
    fits_.erase(fits_.begin() + static_cast<std::ptrdiff_t>(j));
    e.first -= cost;
    put(e);
    return e.second;
  }

private:
  using entry = std::pair<cost_t, rank_t>; // (room under the target, rank)

  // At the first take: the rooms from least_ up into the sorted array, the rest a heap.
  void start() {
    if (started_) {
      return;
    }
    started_ = true;
    const auto low = std::partition(heap_.begin(), heap_.end(),
                                    [&](const entry& e) { return e.first < least_; });
    sorted_.assign(low, heap_.end());
    heap_.erase(low, heap_.end());
    std::sort(sorted_.begin(), sorted_.end());
    next_ = sorted_.size();
    std::make_heap(heap_.begin(), heap_.end());
  }
  // The largest entry below t (some must exist).
  [[nodiscard]] entry largest_below() const {
    if (next_ == 0) {
      return heap_.front();
    }
    return heap_.empty() ? sorted_[next_ - 1] : std::max(heap_.front(), sorted_[next_ - 1]);
  }
  // Moves entries across so that the stack holds exactly the rooms ≥ cost; then t = cost.
  void split_at(cost_t cost) {
    start();
    if (cost <= threshold_) {
      // The largest below come first, each below every entry already on the stack.
      for (;;) {
        if (next_ > 0 && (heap_.empty() || heap_.front() < sorted_[next_ - 1])) {
          if (sorted_[next_ - 1].first < cost) {
            break;
          }
          fits_.push_back(sorted_[--next_]);
        } else if (!heap_.empty() && heap_.front().first >= cost) {
          std::pop_heap(heap_.begin(), heap_.end());
          fits_.push_back(heap_.back());
          heap_.pop_back();
        } else {
          break;
        }
      }
    } else {
      while (!fits_.empty() && fits_.back().first < cost) {
        push_heap(fits_.back());
        fits_.pop_back();
      }
    }
    threshold_ = cost;
  }
  // An entry where it belongs (inside the stack only outside falling takes: rare).
  void put(const entry& e) {
    if (e.first < threshold_) {
      push_heap(e);
    } else {
      fits_.insert(std::upper_bound(fits_.begin(), fits_.end(), e, std::greater<>{}), e);
    }
  }
  void push_heap(const entry& e) {
    heap_.push_back(e);
    std::push_heap(heap_.begin(), heap_.end());
  }

  std::vector<entry> sorted_; // ascending; sorted_[0, next_) are below t
  std::size_t next_ = 0;
  std::vector<entry> heap_; // the other entries below t: a max-heap once started_
  std::vector<entry> fits_; // rooms ≥ t, descending: the least room is at the back
  cost_t threshold_ = max_cost;
  cost_t least_ = max_cost;
  bool started_ = false;
};

} // namespace orch::detail
