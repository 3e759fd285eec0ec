// SPDX-License-Identifier: Apache-2.0
/// The local search's state: every bin's items in one arena, loads, limits and bins by time.
#pragma once

#include <orch/config.hpp>
#include <orch/detail/primitives/checked.hpp>
#include <orch/partition/bin_order.hpp>
#include <orch/partition/constraints.hpp>
#include <orch/partition/order.hpp>
#include <orch/types.hpp>

#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <cstring>
#include <memory>
#include <span>
#include <utility>
#include <vector>

namespace orch::detail {

/// What detail::improver works on: each bin's items by cost descending (kept sorted in one
/// arena as items move), loads, item counts and resource sums, cached pairs of items per bin,
/// and the bins ordered by time. Moving items keeps all of them consistent; the candidate
/// steps (improver_steps) and the search (improver) are built on top.
class improver_state {
public:
  /// An empty state; reset() starts a search.
  improver_state() = default;

  /// `order`: every item by cost descending, index ascending (computed when empty); the
  /// per-bin lists are filled in that order and so come out sorted without a sort per bin.
  /// `order_cost` and `order_bin`, when given, hold each item's cost and start bin in that
  /// order (LPT's trace), so the fill reads sequentially instead of by item index.
  improver_state(std::span<const cost_t> costs, rank_t bins, std::span<const rank_t> bin_of,
                 const bin_rules& rules, std::span<const std::uint32_t> order = {},
                 std::span<const cost_t> order_cost = {}, std::span<const rank_t> order_bin = {}) {
    reset(costs, bins, bin_of, rules, order, order_cost, order_bin);
  }

  /// Starts over from `bin_of` (arguments as for the constructor), reusing the buffers of the
  /// previous search: node_first runs one small search per node, where allocating and
  /// clearing fresh arrays each time cost more than the searches themselves.
  void reset(std::span<const cost_t> costs, rank_t bins, std::span<const rank_t> bin_of,
             const bin_rules& rules, std::span<const std::uint32_t> order = {},
             std::span<const cost_t> order_cost = {}, std::span<const rank_t> order_bin = {}) {
    bin_of_.assign(bin_of.begin(), bin_of.end());
    build(costs, bins, rules, order, order_cost, order_bin);
  }

  /// reset() from an assignment the caller hands over: the search works in it in place.
  void reset(std::span<const cost_t> costs, rank_t bins, std::vector<rank_t>&& bin_of,
             const bin_rules& rules) {
    bin_of_ = std::move(bin_of);
    build(costs, bins, rules, {}, {}, {});
  }

private:
  /// The rest of reset(), once bin_of_ holds the start.
  void build(std::span<const cost_t> costs, rank_t bins, const bin_rules& rules,
             std::span<const std::uint32_t> order, std::span<const cost_t> order_cost,
             std::span<const rank_t> order_bin) {
    costs_ = costs;
    rules_ = rules;
    plain_ = !rules.has_counts() && !rules.has_resource() && !rules.has_speeds();
    const auto k = static_cast<std::size_t>(bins);
    lists_.resize(k); // every slot is set below
    load_.assign(k, 0);
    count_.assign(k, 0);
    res_.assign(k, 0);
    if (pairs_.size() < k) {
      pairs_.resize(k); // kept across resets: each is rebuilt before use (pairs_valid_)
    }
    pairs_valid_.assign(k, 0);
    pending_ = 0;
    // Few items per bin and no order given: fill the lists in index order and sort each
    // (a handful of items) instead of ordering all items first; same lists either way.
    const bool sort_lists = order.size() != costs.size() && costs.size() <= sort_lists_max * k;
    std::vector<std::uint32_t> own;
    if (order.size() != costs.size() && !sort_lists) {
      own = order_desc(costs);
      order = own;
    }
    // One arena of per-bin lists (counted, then laid out with room to grow, then filled in
    // `order`): one allocation instead of one growing vector per bin.
    for (const rank_t b : bin_of_) {
      ++count_[static_cast<std::size_t>(b)];
    }
    std::size_t offset = 0;
    for (std::size_t b = 0; b < k; ++b) {
      const auto c = static_cast<std::size_t>(count_[b]);
      lists_[b] = {offset, 0, c + slack(c), true};
      offset += lists_[b].cap;
    }
    arena_.resize(offset, false); // only [off, off + len) of a list is ever read
    if (sort_lists) {
      // Items go in unsorted (in index order); a list is sorted when the search first reads
      // it (sorted_list()). A search from a near-balanced start touches few of many bins.
      cost_t top = 0;
      for (std::size_t i = 0; i < bin_of_.size(); ++i) {
        const auto b = static_cast<std::size_t>(bin_of_[i]);
        const cost_t c = costs_[i];
        auto& l = lists_[b];
        arena_[l.off + l.len++] = {c, static_cast<std::uint32_t>(i)};
        load_[b] += c;
        top = std::max(top, c);
      }
      largest_ = top;
      for (auto& l : lists_) {
        l.sorted = l.len < 2;
      }
    } else if (order_cost.size() == order.size() && order_bin.size() == order.size()) {
      largest_ = order.empty() ? 0 : order_cost[0]; // `order` is by cost descending
      for (std::size_t p = 0; p < order.size(); ++p) {
        ORCH_ASSERT(order_bin[p] == bin_of_[order[p]] && order_cost[p] == costs_[order[p]]);
        const auto b = static_cast<std::size_t>(order_bin[p]);
        auto& l = lists_[b];
        arena_[l.off + l.len++] = {order_cost[p], order[p]};
        load_[b] += order_cost[p];
      }
    } else {
      largest_ = order.empty() ? 0 : costs_[order[0]]; // `order` is by cost descending
      for (const std::uint32_t i : order) {
        const auto b = static_cast<std::size_t>(bin_of_[i]);
        auto& l = lists_[b];
        arena_[l.off + l.len++] = {costs_[i], i};
        load_[b] += costs_[i];
      }
    }
    if (rules_.has_resource()) {
      for (std::size_t i = 0; i < bin_of_.size(); ++i) {
        res_[static_cast<std::size_t>(bin_of_[i])] += rules_.res(i);
      }
    }
    if (rules_.has_speeds()) {
      sorted_.resize(k);
      for (std::size_t b = 0; b < k; ++b) {
        sorted_[b] = {load_[b], static_cast<rank_t>(b)};
      }
      std::sort(sorted_.begin(), sorted_.end(), by_time{this});
    } else {
      bin_order::sort_by_load(load_, sorted_, keys_);
    }
    order_.assign(sorted_);
  }

public:
  [[nodiscard]] const std::vector<rank_t>& bin_of() const noexcept { return bin_of_; }
  [[nodiscard]] std::vector<rank_t> take_bin_of() { return std::move(bin_of_); }
  [[nodiscard]] std::vector<cost_t> take_loads() { return std::move(load_); }

  /// The largest load (0 without bins). Call before take_loads().
  [[nodiscard]] cost_t max_load() const noexcept {
    return load_.empty() ? 0 : *std::max_element(load_.begin(), load_.end());
  }

  /// max(⌈Σ/k⌉, max cost) from the tracked loads and largest cost (what orch::lower_bound
  /// returns), without another pass over the items. Call before take_loads().
  [[nodiscard]] cost_t simple_bound() const {
    cost_t total = 0;
    for (std::size_t b = 0; b < lists_.size(); ++b) {
      total += load_[b];
    }
    return std::max(ceil_div(total, static_cast<cost_t>(lists_.size())), largest_);
  }

protected:
  /// An item in a bin's list: its cost kept inline, so scans never chase the cost array.
  struct entry {
    cost_t c;
    std::uint32_t id;
  };

  struct pair_entry {
    cost_t sum;
    std::uint32_t a;
    std::uint32_t b;
  };

  /// A bin's list: arena_[off, off + len) by cost descending, index ascending; cap slots.
  struct list_slot {
    std::size_t off;
    std::size_t len;
    std::size_t cap;
    bool sorted; // else still in reset()'s fill order (sorted_list() sorts it)
  };

  /// The order of bins by time (load / speed), ties by index, on entries that carry the
  /// load, so comparisons read no other array (speeds only when they differ).
  struct by_time {
    const improver_state* self;
    bool operator()(const bin_order::entry& x, const bin_order::entry& y) const noexcept {
      if (self->rules_.has_speeds()) {
        const cost_t sx = self->rules_.speed(x.bin);
        const cost_t sy = self->rules_.speed(y.bin);
        if (time_less(x.load, sx, y.load, sy)) {
          return true;
        }
        if (time_less(y.load, sy, x.load, sx)) {
          return false;
        }
        return x.bin < y.bin;
      }
      return x.load < y.load || (x.load == y.load && x.bin < y.bin);
    }
  };

  /// by_time for equal speeds, with the test for speeds hoisted out of the comparisons.
  struct by_load {
    bool operator()(const bin_order::entry& x, const bin_order::entry& y) const noexcept {
      return x.load < y.load || (x.load == y.load && x.bin < y.bin);
    }
  };

  [[nodiscard]] cost_t load(rank_t b) const noexcept { return load_[static_cast<std::size_t>(b)]; }
  [[nodiscard]] cost_t cost(std::uint32_t i) const noexcept { return costs_[i]; }
  [[nodiscard]] static bool before(const entry& a, const entry& b) noexcept {
    return a.c > b.c || (a.c == b.c && a.id < b.id);
  }

  /// Pairs of bin b's items by sum descending (cached until b changes).
  const std::vector<pair_entry>& pairs(rank_t b) {
    const auto bb = static_cast<std::size_t>(b);
    if (!pairs_valid_[bb]) {
      auto& p = pairs_[bb];
      p.clear();
      const auto list = items(b);
      for (std::size_t x = 0; x < list.size(); ++x) {
        for (std::size_t y = x + 1; y < list.size(); ++y) {
          p.push_back({list[x].c + list[y].c, list[x].id, list[y].id});
        }
      }
      std::sort(p.begin(), p.end(), [](const pair_entry& u, const pair_entry& v) {
        return u.sum > v.sum || (u.sum == v.sum && (u.a < v.a || (u.a == v.a && u.b < v.b)));
      });
      pending_ += static_cast<std::int64_t>(p.size()) + 1;
      pairs_valid_[bb] = 1;
    }
    return pairs_[bb];
  }

  /// The first of n entries from `first` that is not before e (std::lower_bound by `before`,
  /// halving with a select per step instead of a branch).
  [[nodiscard]] static entry* slot(entry* first, std::size_t n, const entry& e) noexcept {
    if (n == 0) {
      return first;
    }
    while (n > 1) {
      const std::size_t half = n / 2;
      first = before(first[half], e) ? first + half : first;
      n -= half;
    }
    return before(*first, e) ? first + 1 : first;
  }

  void remove_item(std::size_t b, std::uint32_t i) {
    auto& l = lists_[b];
    sorted_list(b);
    entry* first = arena_.data() + l.off;
    entry* last = first + l.len;
    entry* at = slot(first, l.len, entry{cost(i), i});
    std::copy(at + 1, last, at);
    --l.len;
  }

  void insert_item(std::size_t b, std::uint32_t i) {
    auto& l = lists_[b];
    sorted_list(b);
    if (l.len == l.cap) {
      // Full: move the list to the end of the arena with room to grow (its old slot is
      // abandoned; lists only grow by single moves, so this stays rare).
      const std::size_t off = arena_.size();
      const std::size_t cap = l.len + slack(l.len) + 1;
      arena_.resize(arena_.size() + cap, true);
      std::copy_n(arena_.data() + l.off, l.len, arena_.data() + off);
      l.off = off;
      l.cap = cap;
    }
    entry* first = arena_.data() + l.off;
    entry* last = first + l.len;
    const entry e{cost(i), i};
    entry* at = slot(first, l.len, e);
    std::copy_backward(at, last, last + 1);
    *at = e;
    ++l.len;
  }

  void move_item(std::uint32_t i, rank_t from, rank_t to) {
    const auto f = static_cast<std::size_t>(from);
    const auto t = static_cast<std::size_t>(to);
    remove_item(f, i);
    insert_item(t, i);
    load_[f] -= cost(i);
    load_[t] += cost(i);
    res_[f] -= rules_.res(i);
    res_[t] += rules_.res(i);
    --count_[f];
    ++count_[t];
    bin_of_[i] = to;
  }

  /// Up to this many items per bin on average, reset() without an order sorts each list.
  static constexpr std::size_t sort_lists_max = 64;
  /// Lists of at most this many entries are sorted by insertion (sorted_list()).
  static constexpr std::size_t insert_max = 48;

  /// Spare room per list of `len` items: moves in and out of a bin mostly balance.
  [[nodiscard]] static std::size_t slack(std::size_t len) noexcept { return 2 + len / 4; }

  /// Bin b's items, by cost descending, index ascending (valid until a list changes).
  [[nodiscard]] std::span<const entry> items(rank_t b) {
    const auto& l = sorted_list(static_cast<std::size_t>(b));
    return {arena_.data() + l.off, l.len};
  }

  /// Bin b's list, sorted first if reset() left it unsorted: by insertion when short (a few
  /// shifts per item), else by std::sort.
  const list_slot& sorted_list(std::size_t b) {
    auto& l = lists_[b];
    if (!l.sorted) {
      entry* first = arena_.data() + l.off;
      if (l.len <= insert_max) {
        for (std::size_t x = 1; x < l.len; ++x) {
          const entry e = first[x];
          std::size_t at = x;
          for (; at > 0 && before(e, first[at - 1]); --at) {
            first[at] = first[at - 1];
          }
          first[at] = e;
        }
      } else {
        std::sort(first, first + l.len,
                  [](const entry& x, const entry& y) { return before(x, y); });
      }
      l.sorted = true;
    }
    return l;
  }

  /// Restores order_ after the critical bin (at pos_m_) lost load to its partner (at the
  /// earlier pos_b_): both leave and re-enter under their new loads.
  void reorder() {
    const rank_t m = order_[pos_m_];
    const rank_t b = order_[pos_b_];
    if (order_.single_block()) {
      // Update M first; if it passes b (possible with speeds), b's entry moved up by one.
      bin_order::cursor at_b = pos_b_;
      if (rules_.has_speeds()) {
        at_b.at += order_.update(pos_m_, {load(m), m}, by_time{this}) <= at_b.at ? 1U : 0U;
        order_.update(at_b, {load(b), b}, by_time{this});
      } else {
        at_b.at += order_.update(pos_m_, {load(m), m}, by_load{}) <= at_b.at ? 1U : 0U;
        order_.update(at_b, {load(b), b}, by_load{});
      }
      return;
    }
    order_.erase(pos_m_); // the later one first: pos_b_ stays valid
    order_.erase(pos_b_);
    if (rules_.has_speeds()) {
      order_.insert({load(b), b}, by_time{this});
      order_.insert({load(m), m}, by_time{this});
    } else {
      order_.insert({load(b), b}, by_load{});
      order_.insert({load(m), m}, by_load{});
    }
  }

  std::span<const cost_t> costs_;
  bin_rules rules_;
  bool plain_ = true; // no count or resource limits, equal speeds: consider() has a short form
  std::vector<rank_t> bin_of_;
  std::vector<list_slot> lists_;
  /// Storage that grows without zero-filling: a fresh search's arena is as large as its
  /// input, and every slot is written before it is read (only lists' [off, off + len)).
  class arena_buffer {
  public:
    [[nodiscard]] entry* data() noexcept { return data_.get(); }
    [[nodiscard]] std::size_t size() const noexcept { return size_; }
    entry& operator[](std::size_t x) noexcept { return data_[x]; }
    /// Sets the size to n; with `keep`, the first size() entries survive a reallocation.
    void resize(std::size_t n, bool keep) {
      if (n > cap_) {
        const std::size_t cap = std::max(n, 2 * cap_);
        std::unique_ptr<entry[]> grown(new entry[cap]); // default-initialised: not zeroed
        if (keep && size_ > 0) { // bytes as they are: slack slots may never have been written
          std::memcpy(grown.get(), data_.get(), size_ * sizeof(entry));
        }
        data_ = std::move(grown);
        cap_ = cap;
      }
      size_ = n;
    }

  private:
    std::unique_ptr<entry[]> data_;
    std::size_t size_ = 0;
    std::size_t cap_ = 0;
  };
  arena_buffer arena_;
  cost_t largest_ = 0; // the largest item cost
  std::vector<cost_t> load_;
  std::vector<index_t> count_;
  std::vector<cost_t> res_;
  std::vector<std::vector<pair_entry>> pairs_;
  std::vector<char> pairs_valid_;
  std::vector<bin_order::entry> sorted_; // scratch of reset()
  std::vector<std::uint64_t> keys_;      // scratch of reset(): packed (load, bin)
  bin_order order_;                      // bins by time ascending, ties by index
  std::int64_t pending_ = 0; // work units of the current try_pair, charged by improve_bin
  bin_order::cursor pos_m_;  // where the current critical bin sits in order_
  bin_order::cursor pos_b_;  // where the current partner sits in order_
};

} // namespace orch::detail
