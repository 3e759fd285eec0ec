// SPDX-License-Identifier: Apache-2.0
/// Internals of the placement engine (orch/placement/engine.hpp): the candidate lists of
/// node_placer's repair. Per rank of one node, its kept slots by cost (then slot), with the
/// suffix minima of (bytes, item index): a slot y on rank A frees room for x iff cost(y) ≥
/// cost(x) − room(A), a suffix of A's list, so A's best candidate is one binary search away.
#pragma once

#include <orch/config.hpp>
#include <orch/detail/placement/rank_filling.hpp>
#include <orch/detail/primitives/radix_sort.hpp>
#include <orch/types.hpp>

#include <algorithm>
#include <bit>
#include <cstddef>
#include <cstdint>
#include <span>
#include <utility>
#include <vector>

namespace orch::detail {

/// The lists of one node's ranks, rebuilt for every repair; buffers live across nodes.
class repair_lists {
public:
  /// A new node: its slots must be sorted again before the next build().
  void new_node() noexcept { by_cost_.clear(); }

  /// Builds the lists of the node's `count.size()` ranks from its slots (per slot: cost,
  /// bytes, item; the spans must stay valid while the lists are used). Rank l gets room for
  /// count[l] + spare slots (a repair try adds a slot to at most one list, so with `spare` ≥
  /// the tries no list ever overflows); slot s joins the list of local_of(s) unless that is
  /// npos (the slot is placed on no rank of the node).
  template <class LocalOf>
  void build(std::span<const cost_t> cost, std::span<const bytes_t> size,
             std::span<const std::size_t> items, std::span<const std::size_t> count,
             std::size_t spare, LocalOf&& local_of) {
    cost_ = cost;
    size_ = size;
    items_ = items;
    if (by_cost_.size() != cost.size()) { // once per node: both placements repair the same items
      sort_by_cost();
    }
    const std::size_t g = count.size();
    base_.resize(g + 1);
    len_.assign(g, 0);
    base_[0] = 0;
    for (std::size_t l = 0; l < g; ++l) {
      base_[l + 1] = base_[l] + count[l] + spare;
    }
    if (list_.size() < base_[g]) {
      list_.resize(base_[g]);
      best_.resize(base_[g]);
      cost_at_.resize(base_[g]);
    }
    for (const std::size_t s : by_cost_) {
      const std::size_t l = local_of(s);
      if (l != npos) {
        const std::size_t p = base_[l] + len_[l]++;
        list_[p] = s;
        cost_at_[p] = cost[s];
      }
    }
    for (std::size_t l = 0; l < g; ++l) {
      if (len_[l] > 0) {
        index_rank(l, len_[l] - 1, 0);
      }
    }
  }

  /// Rank l's list (kept slots by cost, then slot).
  [[nodiscard]] std::span<const std::size_t> list(std::size_t l) const noexcept {
    return {list_.data() + base_[l], len_[l]};
  }
  /// The position of the first slot of rank l's list whose cost is at least `least` (its
  /// length when there is none). A binary search over the list's costs, stored beside it, that
  /// halves without a branch: on a node's short lists the data-dependent branches of
  /// std::partition_point mispredict about every other step.
  [[nodiscard]] std::size_t first_costing(std::size_t l, cost_t least) const noexcept {
    const cost_t* first = cost_at_.data() + base_[l];
    std::size_t n = len_[l];
    if (n == 0) {
      return 0;
    }
    const cost_t* at = first;
    while (n > 1) {
      const std::size_t half = n / 2;
      // A product rather than ?: so that g++ emits no branch here.
      at += static_cast<std::size_t>(at[half - 1] < least) * half;
      n -= half;
    }
    return static_cast<std::size_t>(at - first) + (*at < least ? 1 : 0);
  }
  /// The cost of the slot at position k of rank l's list (k < its length).
  [[nodiscard]] cost_t cost_at(std::size_t l, std::size_t k) const noexcept {
    return cost_at_[base_[l] + k];
  }
  /// The smaller() slot among positions k.. of rank l's list (k < its length).
  [[nodiscard]] std::size_t best_from(std::size_t l, std::size_t k) const noexcept {
    return best_[base_[l] + k];
  }
  /// Fewer bytes first, then the lower item index (the order repair's candidates compete in).
  [[nodiscard]] bool smaller(std::size_t a, std::size_t b) const {
    return size_[a] != size_[b] ? size_[a] < size_[b] : items_[a] < items_[b];
  }

  /// In rank l's list, slot y gives way to slot x (which is in no list). Only the positions
  /// between the two change, and the suffix minima above them stay as they are.
  void replace(std::size_t l, std::size_t y, std::size_t x) {
    std::size_t* list = list_.data() + base_[l];
    cost_t* costs = cost_at_.data() + base_[l];
    const std::size_t n = len_[l];
    const auto py = static_cast<std::size_t>(std::lower_bound(list, list + n, y, cheaper()) - list);
    const auto px = static_cast<std::size_t>(std::upper_bound(list, list + n, x, cheaper()) - list);
    if (py < px) { // x lands after y's place: the slots between move down by one
      std::copy(list + py + 1, list + px, list + py);
      std::copy(costs + py + 1, costs + px, costs + py);
      list[px - 1] = x;
      costs[px - 1] = cost_[x];
      index_rank(l, px - 1, py);
    } else {
      std::copy_backward(list + px, list + py, list + py + 1);
      std::copy_backward(costs + px, costs + py, costs + py + 1);
      list[px] = x;
      costs[px] = cost_[x];
      index_rank(l, py, px);
    }
  }

  /// Adds slot x to rank l's list.
  void insert(std::size_t l, std::size_t x) {
    std::size_t* list = list_.data() + base_[l];
    std::size_t* best = best_.data() + base_[l];
    const std::size_t n = len_[l];
    ORCH_ASSERT(base_[l] + n < base_[l + 1]);
    const auto p = static_cast<std::size_t>(std::upper_bound(list, list + n, x, cheaper()) - list);
    cost_t* costs = cost_at_.data() + base_[l];
    std::copy_backward(list + p, list + n, list + n + 1);
    std::copy_backward(best + p, best + n, best + n + 1);
    std::copy_backward(costs + p, costs + n, costs + n + 1);
    list[p] = x;
    costs[p] = cost_[x];
    len_[l] = n + 1;
    index_rank(l, p, p);
  }

  /// local_of's answer for a slot on no rank of the node.
  static constexpr std::size_t npos = ~std::size_t{0};

private:
  /// All slots of the node by cheaper() (cost, then slot), into by_cost_. When a cost and a
  /// slot fit in 63 bits together, one packed key per slot has exactly that order; a radix
  /// sort of the keys (sort_keys) is about 2× faster than std::sort on a node's few hundred
  /// keys, and several times faster than sorting (cost, slot) records.
  void sort_by_cost() {
    const std::size_t m = cost_.size();
    cost_t max_cost = 0;
    for (std::size_t s = 0; s < m; ++s) {
      max_cost = std::max(max_cost, cost_[s]);
    }
    const auto slot_bits = std::bit_width(m);
    by_cost_.resize(m);
    if (std::bit_width(static_cast<std::uint64_t>(max_cost)) + slot_bits > 63) {
      const auto keyed = scratch_prefix(keyed_, m);
      for (std::size_t s = 0; s < m; ++s) {
        keyed[s] = {cost_[s], s};
      }
      std::sort(keyed.begin(), keyed.end());
      for (std::size_t x = 0; x < m; ++x) {
        by_cost_[x] = keyed[x].second;
      }
      return;
    }
    const auto keys = scratch_prefix(keys_, m);
    for (std::size_t s = 0; s < m; ++s) {
      keys[s] = static_cast<std::uint64_t>(cost_[s]) << slot_bits | s;
    }
    // Written in slot order, so already sorted below the cost: the passes skip the slot bits.
    sort_keys(keys, keys_scratch_, static_cast<int>(slot_bits));
    const std::uint64_t mask = (std::uint64_t{1} << slot_bits) - 1;
    for (std::size_t x = 0; x < m; ++x) {
      by_cost_[x] = static_cast<std::size_t>(keys[x] & mask);
    }
  }

  /// Order of the lists: by cost, then slot.
  struct cheaper_order {
    const repair_lists* p;
    bool operator()(std::size_t a, std::size_t b) const {
      return p->cost_[a] != p->cost_[b] ? p->cost_[a] < p->cost_[b] : a < b;
    }
  };
  [[nodiscard]] cheaper_order cheaper() const { return {this}; }

  /// Records, per position of rank l's list, the smaller() slot from there to the end:
  /// positions hi down to 0, where positions above hi are up to date and those below lo hold
  /// the same slots as when they were last recorded, so the walk stops at the first of them
  /// whose minimum comes out unchanged (all below it are unchanged too).
  void index_rank(std::size_t l, std::size_t hi, std::size_t lo) {
    const std::size_t* list = list_.data() + base_[l];
    std::size_t* best = best_.data() + base_[l];
    const std::size_t n = len_[l];
    for (std::size_t x = hi + 1; x-- > 0;) {
      const std::size_t v = x + 1 == n || smaller(list[x], best[x + 1]) ? list[x] : best[x + 1];
      if (x < lo && best[x] == v) {
        break;
      }
      best[x] = v;
    }
  }

  std::span<const cost_t> cost_;                      // per slot
  std::span<const bytes_t> size_;                     // per slot
  std::span<const std::size_t> items_;                // per slot
  std::vector<std::size_t> by_cost_;                  // slots by cheaper()
  std::vector<std::uint64_t> keys_;                   // scratch of sort_by_cost
  std::vector<std::uint64_t> keys_scratch_;           // sort_keys' second buffer
  std::vector<std::pair<cost_t, std::size_t>> keyed_; // scratch of sort_by_cost
  std::vector<std::size_t> len_;                      // per local rank: its list's length
  std::vector<std::size_t> base_;                     // per local rank + 1: its list's start
  std::vector<std::size_t> list_;                     // kept slots per rank, by cost
  std::vector<std::size_t> best_;                     // see index_rank
  std::vector<cost_t> cost_at_;                       // per list position: its slot's cost
};

} // namespace orch::detail
