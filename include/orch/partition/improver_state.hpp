// SPDX-License-Identifier: Apache-2.0
/// The local search's state: the assignment, bins' item lists, loads, limits and bins by time.
#pragma once

#include <orch/config.hpp>
#include <orch/detail/primitives/checked.hpp>
#include <orch/partition/bin_order.hpp>
#include <orch/partition/constraints.hpp>
#include <orch/partition/improver_lists.hpp>
#include <orch/partition/order.hpp>
#include <orch/types.hpp>

#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <span>
#include <utility>
#include <vector>

namespace orch::detail {

/// What the local search works on: the assignment, each bin's items by cost descending
/// (improver_lists), loads, item counts and resource sums, cached pairs of items per bin, and
/// the bins ordered by time. Its operations (move_item, swap_items, settle) keep all of them
/// consistent, so the candidate steps (improver_steps) and the search (improver), which hold
/// it by reference and as a member, only decide which items move. Reused across searches:
/// reset() keeps the buffers.
class improver_state {
public:
  using entry = improver_lists::entry;

  /// Two items of one bin and their summed cost (the pair steps' candidates).
  struct pair_entry {
    cost_t sum;
    std::uint32_t a;
    std::uint32_t b;
  };

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
    for (const cost_t l : load_) {
      total += l;
    }
    return std::max(ceil_div(total, static_cast<cost_t>(load_.size())), largest_);
  }

  [[nodiscard]] const bin_rules& rules() const noexcept { return rules_; }
  /// No count or resource limits and equal speeds: a candidate's check has a short form.
  [[nodiscard]] bool plain() const noexcept { return plain_; }
  [[nodiscard]] cost_t cost(std::uint32_t i) const noexcept { return costs_[i]; }
  [[nodiscard]] cost_t load(rank_t b) const noexcept { return load_[static_cast<std::size_t>(b)]; }
  [[nodiscard]] index_t count(rank_t b) const noexcept {
    return count_[static_cast<std::size_t>(b)];
  }
  /// Bin b's sum of the second resource (0 without one).
  [[nodiscard]] cost_t resource(rank_t b) const noexcept {
    return res_[static_cast<std::size_t>(b)];
  }
  /// Bins by time (load / speed) ascending, ties by index: the search's critical bins at the
  /// back, its partners from the front.
  [[nodiscard]] const bin_order& order() const noexcept { return order_; }

  /// True when bin x's time (load / speed) is below bin y's; equal speeds compare loads.
  [[nodiscard]] bool earlier(rank_t x, rank_t y) const noexcept {
    return rules_.has_speeds() ? time_less(load(x), rules_.speed(x), load(y), rules_.speed(y))
                               : load(x) < load(y);
  }

  /// Bin b's items, by cost descending, index ascending (valid until a list changes).
  [[nodiscard]] std::span<const entry> items(rank_t b) {
    return lists_.items(static_cast<std::size_t>(b));
  }

  /// Pairs of bin b's items by sum descending, ties by indices (cached until b changes). A
  /// rebuild adds its work (one unit per pair, plus one) to `units`.
  const std::vector<pair_entry>& pairs(rank_t b, std::int64_t& units) {
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
      units += static_cast<std::int64_t>(p.size()) + 1;
      pairs_valid_[bb] = 1;
    }
    return pairs_[bb];
  }

  /// Moves item i from bin `from` to bin `to`. settle() must follow before order() is read.
  void move_item(std::uint32_t i, rank_t from, rank_t to) {
    const auto f = static_cast<std::size_t>(from);
    const auto t = static_cast<std::size_t>(to);
    lists_.remove(f, entry{cost(i), i});
    lists_.insert(t, entry{cost(i), i});
    load_[f] -= cost(i);
    load_[t] += cost(i);
    res_[f] -= rules_.res(i);
    res_[t] += rules_.res(i);
    --count_[f];
    ++count_[t];
    bin_of_[i] = to;
  }

  /// Swaps item i of bin `from` with item j of bin `to`: what move_item(i, from, to) and
  /// move_item(j, to, from) do together, but each list keeps its length, so short lists take
  /// the newcomer in the leaving item's slot (improver_lists::replace).
  void swap_items(std::uint32_t i, std::uint32_t j, rank_t from, rank_t to) {
    const auto f = static_cast<std::size_t>(from);
    const auto t = static_cast<std::size_t>(to);
    if (lists_.size(f) > improver_lists::replace_max ||
        lists_.size(t) > improver_lists::replace_max) {
      move_item(i, from, to);
      move_item(j, to, from);
      return;
    }
    lists_.replace(f, entry{cost(i), i}, entry{cost(j), j});
    lists_.replace(t, entry{cost(j), j}, entry{cost(i), i});
    const cost_t delta = cost(i) - cost(j);
    load_[f] -= delta;
    load_[t] += delta;
    const cost_t res_delta = rules_.res(i) - rules_.res(j);
    res_[f] -= res_delta;
    res_[t] += res_delta;
    bin_of_[i] = to;
    bin_of_[j] = from;
  }

  /// After a step between the critical bin at `at_m` of order() and its partner at the
  /// earlier `at_b`: drops both bins' cached pairs and restores the order, both bins leaving
  /// and re-entering under their new loads.
  void settle(bin_order::cursor at_m, bin_order::cursor at_b) {
    const rank_t m = order_[at_m];
    const rank_t b = order_[at_b];
    pairs_valid_[static_cast<std::size_t>(m)] = 0;
    pairs_valid_[static_cast<std::size_t>(b)] = 0;
    if (order_.single_block()) {
      // Update M first; if it passes b (possible with speeds), b's entry moved up by one.
      if (rules_.has_speeds()) {
        at_b.at += order_.update(at_m, {load(m), m}, by_time{&rules_}) <= at_b.at ? 1U : 0U;
        order_.update(at_b, {load(b), b}, by_time{&rules_});
      } else {
        at_b.at += order_.update(at_m, {load(m), m}, by_load{}) <= at_b.at ? 1U : 0U;
        order_.update(at_b, {load(b), b}, by_load{});
      }
      return;
    }
    order_.erase(at_m); // the later one first: at_b stays valid
    order_.erase(at_b);
    if (rules_.has_speeds()) {
      order_.insert({load(b), b}, by_time{&rules_});
      order_.insert({load(m), m}, by_time{&rules_});
    } else {
      order_.insert({load(b), b}, by_load{});
      order_.insert({load(m), m}, by_load{});
    }
  }

private:
  /// The order of bins by time (load / speed), ties by index, on entries that carry the
  /// load, so comparisons read no other array (speeds only when they differ).
  struct by_time {
    const bin_rules* rules;
    bool operator()(const bin_order::entry& x, const bin_order::entry& y) const noexcept {
      if (rules->has_speeds()) {
        const cost_t sx = rules->speed(x.bin);
        const cost_t sy = rules->speed(y.bin);
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

  /// The rest of reset(), once bin_of_ holds the start.
  void build(std::span<const cost_t> costs, rank_t bins, const bin_rules& rules,
             std::span<const std::uint32_t> order, std::span<const cost_t> order_cost,
             std::span<const rank_t> order_bin) {
    costs_ = costs;
    rules_ = rules;
    plain_ = !rules.has_counts() && !rules.has_resource() && !rules.has_speeds();
    const auto k = static_cast<std::size_t>(bins);
    load_.assign(k, 0);
    count_.assign(k, 0);
    res_.assign(k, 0);
    if (pairs_.size() < k) {
      pairs_.resize(k); // kept across resets: each is rebuilt before use (pairs_valid_)
    }
    pairs_valid_.assign(k, 0);
    // Few items per bin and no order given: fill the lists in index order and sort each
    // (a handful of items) instead of ordering all items first; same lists either way.
    const bool sort_lists =
        order.size() != costs.size() && costs.size() <= improver_lists::sort_lists_max * k;
    std::vector<std::uint32_t> own;
    if (order.size() != costs.size() && !sort_lists) {
      own = order_desc(costs);
      order = own;
    }
    for (const rank_t b : bin_of_) {
      ++count_[static_cast<std::size_t>(b)];
    }
    lists_.layout(count_);
    if (sort_lists) {
      // Items go in unsorted (in index order); a list is sorted when the search first reads
      // it. A search from a near-balanced start touches few of many bins.
      cost_t top = 0;
      for (std::size_t i = 0; i < bin_of_.size(); ++i) {
        const auto b = static_cast<std::size_t>(bin_of_[i]);
        const cost_t c = costs_[i];
        lists_.push(b, {c, static_cast<std::uint32_t>(i)});
        load_[b] += c;
        top = std::max(top, c);
      }
      largest_ = top;
      lists_.unsorted();
    } else if (order_cost.size() == order.size() && order_bin.size() == order.size()) {
      largest_ = order.empty() ? 0 : order_cost[0]; // `order` is by cost descending
      for (std::size_t p = 0; p < order.size(); ++p) {
        ORCH_ASSERT(order_bin[p] == bin_of_[order[p]] && order_cost[p] == costs_[order[p]]);
        const auto b = static_cast<std::size_t>(order_bin[p]);
        lists_.push(b, {order_cost[p], order[p]});
        load_[b] += order_cost[p];
      }
    } else {
      largest_ = order.empty() ? 0 : costs_[order[0]]; // `order` is by cost descending
      for (const std::uint32_t i : order) {
        const auto b = static_cast<std::size_t>(bin_of_[i]);
        lists_.push(b, {costs_[i], i});
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
      std::sort(sorted_.begin(), sorted_.end(), by_time{&rules_});
    } else {
      bin_order::sort_by_load(load_, sorted_, keys_);
    }
    order_.assign(sorted_);
  }

  std::span<const cost_t> costs_;
  bin_rules rules_;
  bool plain_ = true;
  std::vector<rank_t> bin_of_;
  improver_lists lists_;
  cost_t largest_ = 0; // the largest item cost
  std::vector<cost_t> load_;
  std::vector<index_t> count_;
  std::vector<cost_t> res_;
  std::vector<std::vector<pair_entry>> pairs_;
  std::vector<char> pairs_valid_;
  std::vector<bin_order::entry> sorted_; // scratch of reset()
  std::vector<std::uint64_t> keys_;      // scratch of reset(): packed (load, bin)
  bin_order order_;                      // bins by time ascending, ties by index
};

} // namespace orch::detail
