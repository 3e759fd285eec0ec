// SPDX-License-Identifier: Apache-2.0
/// Local search that improves any assignment: moves and swaps out of the critical bin.
#pragma once

#include <orch/config.hpp>
#include <orch/detail/checked.hpp>
#include <orch/partition/bin_order.hpp>
#include <orch/partition/bounds.hpp>
#include <orch/partition/budget.hpp>
#include <orch/partition/constraints.hpp>
#include <orch/partition/order.hpp>
#include <orch/partition/result.hpp>
#include <orch/quality.hpp>
#include <orch/types.hpp>

#include <algorithm>
#include <array>
#include <cstddef>
#include <cstdint>
#include <span>
#include <string>
#include <utility>
#include <vector>

namespace orch {

/// What local search may try and how long.
struct local_search_options {
  /// Work units: one per evaluated move or swap candidate, one per bisection, one per pair
  /// of items indexed for pair swaps.
  std::int64_t work_budget = 2'000'000;
  /// A proven lower bound on the largest bin: search stops once it is reached, and the result
  /// reports it. 0: orch::lower_bound of the costs.
  cost_t target = 0;
  /// Also try moves of two items and 2–1, 1–2 and 2–2 swaps (else moves and 1–1 swaps only).
  bool pair_moves = true;
  /// Per critical bin, try at most this many partner bins, least loaded first (0: all). At
  /// thousands of bins the least-loaded few almost always hold the improving move.
  rank_t partners = 0;
  /// When moves and swaps are exhausted: the best split of the critical bin's and a
  /// partner's items together, over all 2^m subsets, for pairs of bins holding m ≤ this many
  /// items (0: off; at most 24). Covers every k-for-l swap between the two bins.
  int repartition_items = 10;
  /// Opt-in wall-clock limit for offline use (0: none). Makes the result machine-dependent.
  double time_limit_ms = 0;
};

namespace detail {

/// The local search engine over bins with limits and speeds. The critical bin M is the one
/// with the largest time (load / speed; ties: highest index). A step moves items out of M
/// into a partner b and possibly others back, transferring d > 0 cost units, such that both
/// new times stay below M's old one: the number of bins at the largest time drops, or the
/// largest time does. Partners are tried least loaded first; for each, the candidate that
/// best balances the two bins is applied (first partner with any improving candidate wins).
/// Moves and 1–1 swaps are tried against every partner before pair operations are.
class improver {
public:
  /// `order`: every item by cost descending, index ascending (computed when empty); the
  /// per-bin lists are filled in that order and so come out sorted without a sort per bin.
  /// `order_cost` and `order_bin`, when given, hold each item's cost and start bin in that
  /// order (LPT's trace), so the fill reads sequentially instead of by item index.
  improver(std::span<const cost_t> costs, rank_t bins, std::span<const rank_t> bin_of,
           const bin_rules& rules, std::span<const std::uint32_t> order = {},
           std::span<const cost_t> order_cost = {}, std::span<const rank_t> order_bin = {})
      : costs_(costs), rules_(rules),
        plain_(!rules.has_counts() && !rules.has_resource() && !rules.has_speeds()),
        bin_of_(bin_of.begin(), bin_of.end()), lists_(static_cast<std::size_t>(bins)),
        load_(lists_.size(), 0), count_(lists_.size(), 0), res_(lists_.size(), 0),
        pairs_(lists_.size()), pairs_valid_(lists_.size(), 0) {
    std::vector<std::uint32_t> own;
    if (order.size() != costs.size()) {
      own = order_desc(costs);
      order = own;
    }
    // One arena of per-bin lists (counted, then laid out with room to grow, then filled in
    // `order`): one allocation instead of one growing vector per bin.
    for (const rank_t b : bin_of_) {
      ++count_[static_cast<std::size_t>(b)];
    }
    std::size_t offset = 0;
    for (std::size_t b = 0; b < lists_.size(); ++b) {
      const auto c = static_cast<std::size_t>(count_[b]);
      lists_[b] = {offset, 0, c + slack(c)};
      offset += lists_[b].cap;
    }
    arena_.resize(offset);
    if (order_cost.size() == order.size() && order_bin.size() == order.size()) {
      for (std::size_t p = 0; p < order.size(); ++p) {
        ORCH_ASSERT(order_bin[p] == bin_of_[order[p]] && order_cost[p] == costs_[order[p]]);
        const auto b = static_cast<std::size_t>(order_bin[p]);
        auto& l = lists_[b];
        arena_[l.off + l.len++] = {order_cost[p], order[p]};
        load_[b] += order_cost[p];
      }
    } else {
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
    std::vector<bin_order::entry> sorted(lists_.size());
    for (std::size_t b = 0; b < sorted.size(); ++b) {
      sorted[b] = {load_[b], static_cast<rank_t>(b)};
    }
    std::sort(sorted.begin(), sorted.end(), by_time{this});
    order_.assign(sorted);
  }

  /// Improves until the critical bin's time is ≤ target_num / target_den, no step improves,
  /// or the meter runs out. Returns true when the target was reached.
  bool run(work_meter& meter, cost_t target_num, cost_t target_den, bool pair_moves,
           rank_t partners, int repartition_items = 0) {
    repartition_items_ = repartition_items;
    // Pair operations index b's pairs first, so they get fewer partners than moves and 1–1
    // swaps.
    const rank_t partners_of_level[4] = {
        0, partners, partners > 0 ? std::max<rank_t>(1, partners / 2) : 0, partners};
    const int levels = repartition_items > 0 ? 3 : (pair_moves ? 2 : 1);
    while (!meter.exhausted()) {
      const rank_t top = order_.back();
      if (!time_less(target_num, target_den, load(top), rules_.speed(top))) {
        return true;
      }
      // The largest time drops only once every bin at it has improved; when the highest
      // such bin cannot, another one at the same time may still move and open a way for it.
      bool improved = false;
      rank_t tried = 0;
      for (auto at = order_.last();;) {
        const rank_t m = order_[at];
        if (m != top && (time_less(load(m), rules_.speed(m), load(top), rules_.speed(top)))) {
          break; // below the largest time: not critical
        }
        if (partners > 0 && ++tried > std::max<rank_t>(1, partners / 4)) {
          break; // wide instances: a few critical bins, not every tied one
        }
        pos_m_ = at;
        improved =
            improve_bin(m, levels, pair_moves, partners_of_level, target_num, target_den, meter);
        if (improved) {
          break; // order_ changed: `at` is stale
        }
        if (meter.exhausted()) {
          return false;
        }
        if (!order_.prev(at)) {
          break;
        }
      }
      if (!improved) {
        return false;
      }
    }
    return false;
  }

  [[nodiscard]] const std::vector<rank_t>& bin_of() const noexcept { return bin_of_; }
  [[nodiscard]] std::vector<rank_t> take_bin_of() { return std::move(bin_of_); }
  [[nodiscard]] std::vector<cost_t> take_loads() { return std::move(load_); }

  /// max(⌈Σ/k⌉, max cost) from the tracked loads and lists (what orch::lower_bound returns),
  /// without another pass over the items. Call before take_loads().
  [[nodiscard]] cost_t simple_bound() const {
    cost_t total = 0;
    cost_t largest = 0;
    for (std::size_t b = 0; b < lists_.size(); ++b) {
      total += load_[b];
      if (lists_[b].len > 0) {
        largest = std::max(largest, arena_[lists_[b].off].c);
      }
    }
    return std::max(ceil_div(total, static_cast<cost_t>(lists_.size())), largest);
  }

private:
  /// One improving step out of critical bin m (partners least loaded first, levels in
  /// order); false when none exists. Reorders order_ when it succeeds.
  bool improve_bin(rank_t m, int levels, bool pair_moves, const rank_t* partners_of_level,
                   cost_t target_num, cost_t target_den, work_meter& meter) {
    for (int level = 1; level <= levels; ++level) {
      if (level == 2 && !pair_moves) {
        continue;
      }
      rank_t tried = 0;
      for (auto at = order_.first(); order_.valid(at) && order_[at] != m; order_.next(at)) {
        const rank_t b = order_[at];
        if (!time_less(load(b), rules_.speed(b), load(m), rules_.speed(m))) {
          break; // b is as late as m: nothing can lower both below m's time
        }
        if (partners_of_level[level] > 0 && ++tried > partners_of_level[level]) {
          break;
        }
        // Levels 1 and 2 never look at the meter mid-way: their units are counted locally
        // and charged once per partner (same total, same exhaustion point).
        pos_b_ = at;
        pending_ = 0;
        const bool stepped = try_pair(m, b, level, target_num, target_den, meter);
        if (pending_ > 0) {
          meter.spend(pending_);
        }
        if (stepped) {
          return true;
        }
        if (meter.exhausted()) {
          return false;
        }
      }
    }
    return false;
  }

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

  /// One candidate step: up to two items out of M, up to two into M.
  struct step {
    std::array<std::uint32_t, 2> out{};
    std::array<std::uint32_t, 2> in{};
    int n_out = 0;
    int n_in = 0;
  };

  /// The order of bins by time (load / speed), ties by index, on entries that carry the
  /// load, so comparisons read no other array (speeds only when they differ).
  struct by_time {
    const improver* self;
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

  /// State of one (M, b) evaluation: the transfer window and the best candidate so far.
  struct probe {
    rank_t m = 0;
    rank_t b = 0;
    cost_t dmax = 0;    // largest transfer keeping b below M's old time
    cost_t ideal = 0;   // the transfer aimed at (equal times, or both at the target)
    cost_t good_lo = 1; // transfers in [good_lo, good_hi] bring both bins to the target:
    cost_t good_hi = 0; // any such candidate is as good as it gets, the search stops there
    bool found = false;
    int128 best_score = 0;
    step best;
  };

  enum class verdict { invalid, valid, good };

  /// Evaluates one candidate: transfer d with the items in s; keeps it if valid and better.
  verdict consider(probe& pr, cost_t d, const step& s) {
    ++pending_;
    if (d < 1 || d > pr.dmax) {
      return verdict::invalid;
    }
    const auto m = static_cast<std::size_t>(pr.m);
    const auto b = static_cast<std::size_t>(pr.b);
    if (rules_.has_counts()) {
      const index_t delta = s.n_out - s.n_in;
      if (!rules_.count_ok(count_[m] - delta) || !rules_.count_ok(count_[b] + delta)) {
        return verdict::invalid;
      }
    }
    if (rules_.has_resource()) {
      cost_t r = 0;
      for (int t = 0; t < s.n_out; ++t) {
        r += rules_.res(s.out[static_cast<std::size_t>(t)]);
      }
      for (int t = 0; t < s.n_in; ++t) {
        r -= rules_.res(s.in[static_cast<std::size_t>(t)]);
      }
      if (res_[m] - r > rules_.resource_capacity || res_[b] + r > rules_.resource_capacity) {
        return verdict::invalid;
      }
    }
    const bool good = d >= pr.good_lo && d <= pr.good_hi;
    // The larger of the two new times over the common denominator s_m·s_b; in the target
    // window every candidate scores the same (the target), so the first one found wins.
    int128 score = 0;
    if (!good) {
      if (rules_.has_speeds()) {
        const int128 a = static_cast<int128>(load_[m] - d) * rules_.speed(pr.b);
        const int128 c = static_cast<int128>(load_[b] + d) * rules_.speed(pr.m);
        score = a > c ? a : c;
      } else {
        score = std::max(load_[m] - d, load_[b] + d);
      }
    }
    if (!pr.found || good || score < pr.best_score) {
      pr.found = true;
      pr.best_score = score;
      pr.best = s;
    }
    return good ? verdict::good : verdict::valid;
  }

  /// Position in a list sorted by cost descending of the first entry with cost ≤ v.
  /// Branch-free halving (a select per step): which half holds it is a coin flip, and the
  /// pair scans call this once per pair of M's items.
  template <class List, class Key>
  static std::size_t seek(const List& list, cost_t v, Key key) {
    std::size_t n = list.size();
    if (n == 0) {
      return 0;
    }
    std::size_t base = 0; // the answer lies in [base, base + n]
    while (n > 1) {
      const std::size_t half = n / 2;
      base = key(list[base + half]) > v ? base + half : base;
      n -= half;
    }
    return base + (key(list[base]) > v ? 1 : 0);
  }

  /// Candidates "out_sum out of M, one entry of `list` (sorted by cost descending) in": from
  /// the entry giving the ideal transfer, walks each way to the first valid candidate (the
  /// score is V-shaped in the transfer, so farther ones are worse). With `moves`, the entries
  /// themselves go out and nothing comes in (transfer = the entry's cost). Returns true when a
  /// candidate reached the target window.
  template <class List, class Key, class Make>
  bool scan(probe& pr, cost_t out_sum, bool moves, const List& list, Key key, Make make) {
    const cost_t want = moves ? pr.ideal : out_sum - pr.ideal;
    ++pending_;
    return walk(pr, out_sum, moves, list, key, make, seek(list, want, key));
  }

  /// The two walks of scan() from a known ideal position `pos`.
  template <class List, class Key, class Make>
  bool walk(probe& pr, cost_t out_sum, bool moves, const List& list, Key key, Make make,
            std::size_t pos) {
    const auto transfer = [&](std::size_t p) {
      return moves ? key(list[p]) : out_sum - key(list[p]);
    };
    for (std::size_t p = pos; p < list.size(); ++p) {
      const cost_t d = transfer(p);
      if (moves ? d < 1 : d > pr.dmax) {
        break;
      }
      const verdict v = consider(pr, d, make(list[p]));
      if (v == verdict::good) {
        return true;
      }
      if (v == verdict::valid) {
        break;
      }
    }
    for (std::size_t p = pos; p-- > 0;) {
      const cost_t d = transfer(p);
      if (moves ? d > pr.dmax : d < 1) {
        break;
      }
      const verdict v = consider(pr, d, make(list[p]));
      if (v == verdict::good) {
        return true;
      }
      if (v == verdict::valid) {
        break;
      }
    }
    return false;
  }

  /// walk() for 1–1 swaps of `ei` under plain rules (no limits, equal speeds), where
  /// consider() reduces to the window test and the score max(L_M − d, L_b + d): the same
  /// candidates, verdicts and work units, without building a step per candidate. Most of
  /// the evaluations of a many-items search are these.
  bool walk_swaps(probe& pr, const entry& ei, std::span<const entry> bi, std::size_t pos) {
    const cost_t lm = load_[static_cast<std::size_t>(pr.m)];
    const cost_t lb = load_[static_cast<std::size_t>(pr.b)];
    const auto consider_swap = [&](cost_t d, std::uint32_t in) {
      ++pending_;
      if (d < 1 || d > pr.dmax) {
        return verdict::invalid;
      }
      const bool good = d >= pr.good_lo && d <= pr.good_hi;
      const cost_t score = good ? 0 : std::max(lm - d, lb + d);
      if (!pr.found || good || score < pr.best_score) {
        pr.found = true;
        pr.best_score = score;
        pr.best = step{};
        pr.best.out[0] = ei.id;
        pr.best.n_out = 1;
        pr.best.in[0] = in;
        pr.best.n_in = 1;
      }
      return good ? verdict::good : verdict::valid;
    };
    for (std::size_t p = pos; p < bi.size(); ++p) {
      const cost_t d = ei.c - bi[p].c;
      if (d > pr.dmax) {
        break;
      }
      const verdict v = consider_swap(d, bi[p].id);
      if (v == verdict::good) {
        return true;
      }
      if (v == verdict::valid) {
        break;
      }
    }
    for (std::size_t p = pos; p-- > 0;) {
      const cost_t d = ei.c - bi[p].c;
      if (d < 1) {
        break;
      }
      const verdict v = consider_swap(d, bi[p].id);
      if (v == verdict::good) {
        return true;
      }
      if (v == verdict::valid) {
        break;
      }
    }
    return false;
  }

  /// Sets the transfer window of (M, b): dmax keeps b below M's time; the target window
  /// [good_lo, good_hi] brings both to the target time T = tn / td.
  void window(probe& pr, cost_t tn, cost_t td) const {
    const auto mm = static_cast<std::size_t>(pr.m);
    const auto bb = static_cast<std::size_t>(pr.b);
    const cost_t lm = load_[mm];
    const cost_t lb = load_[bb];
    if (rules_.has_speeds()) {
      const cost_t sm = rules_.speed(pr.m);
      const cost_t sb = rules_.speed(pr.b);
      // Largest d with (L_b + d)·s_m < L_m·s_b, and the d equalising both times.
      const int128 lim = static_cast<int128>(lm) * sb;
      pr.dmax = static_cast<cost_t>((lim - 1) / sm - lb);
      pr.ideal = static_cast<cost_t>((lim - static_cast<int128>(lb) * sm) /
                                     (static_cast<int128>(sm) + sb));
      // Both at or below T: L_m − d ≤ ⌊T·s_m⌋ and L_b + d ≤ ⌊T·s_b⌋.
      const auto cap_m = static_cast<cost_t>(static_cast<int128>(tn) * sm / td);
      const auto cap_b = static_cast<cost_t>(static_cast<int128>(tn) * sb / td);
      pr.good_lo = std::max<cost_t>(1, lm - cap_m);
      pr.good_hi = std::min(pr.dmax, cap_b - lb);
    } else {
      pr.dmax = lm - lb - 1;
      pr.ideal = (lm - lb) / 2;
      const cost_t cap = tn / td;
      pr.good_lo = std::max<cost_t>(1, lm - cap);
      pr.good_hi = std::min(pr.dmax, cap - lb);
    }
    if (pr.good_lo <= pr.good_hi) {
      // Aim at the middle of the target window: both bins end at or below the target.
      pr.ideal = pr.good_lo + (pr.good_hi - pr.good_lo) / 2;
    }
  }

  bool try_pair(rank_t m, rank_t b, int level, cost_t tn, cost_t td, work_meter& meter) {
    probe pr;
    pr.m = m;
    pr.b = b;
    window(pr, tn, td);
    if (pr.dmax < 1) {
      return false;
    }
    const auto mi = items(m);
    const auto bi = items(b);
    const auto single_key = [](const entry& e) { return e.c; };
    const auto pair_key = [](const pair_entry& e) { return e.sum; };
    const auto done = [&] {
      if (!pr.found) {
        return false;
      }
      apply(pr, pr.best);
      return true;
    };
    if (level == 3) {
      return repartition(pr, meter);
    }
    if (level == 1) {
      const auto make_move = [](const entry& e) {
        step s;
        s.out[0] = e.id;
        s.n_out = 1;
        return s;
      };
      if (scan(pr, 0, true, mi, single_key, make_move)) {
        return done();
      }
      // 1–1 swaps as one merge: down M's list c_i falls, so the ideal partner cost
      // c_i − ideal falls too and its position in b's list only moves right.
      std::size_t pos = 0;
      for (const entry& ei : mi) {
        if (ei.c < 1) {
          break; // the rest are zero-cost items: no positive transfer
        }
        const std::uint32_t i = ei.id;
        const auto make_swap = [i](const entry& ej) {
          step s;
          s.out[0] = i;
          s.n_out = 1;
          s.in[0] = ej.id;
          s.n_in = 1;
          return s;
        };
        const cost_t want = ei.c - pr.ideal;
        while (pos < bi.size() && bi[pos].c > want) {
          ++pos;
        }
        ++pending_;
        if (plain_ ? walk_swaps(pr, ei, bi, pos)
                   : walk(pr, ei.c, false, bi, single_key, make_swap, pos)) {
          return done();
        }
      }
      return done();
    }
    const auto& bp = pairs(b);
    for (std::size_t x = 0; x < mi.size(); ++x) {
      const std::uint32_t i = mi[x].id;
      const auto make_one_two = [i](const pair_entry& e) {
        step s;
        s.out[0] = i;
        s.n_out = 1;
        s.in = {e.a, e.b};
        s.n_in = 2;
        return s;
      };
      if (scan(pr, mi[x].c, false, bp, pair_key, make_one_two)) { // 1–2
        return done();
      }
      for (std::size_t y = x + 1; y < mi.size(); ++y) {
        const std::uint32_t i2 = mi[y].id;
        const cost_t out = mi[x].c + mi[y].c;
        step s;
        s.out = {i, i2};
        s.n_out = 2;
        if (consider(pr, out, s) == verdict::good) { // 2–0
          return done();
        }
        const auto make_two_one = [i, i2](const entry& ej) {
          step t;
          t.out = {i, i2};
          t.n_out = 2;
          t.in[0] = ej.id;
          t.n_in = 1;
          return t;
        };
        if (scan(pr, out, false, bi, single_key, make_two_one)) { // 2–1
          return done();
        }
        const auto make_two_two = [i, i2](const pair_entry& e) {
          step t;
          t.out = {i, i2};
          t.n_out = 2;
          t.in = {e.a, e.b};
          t.n_in = 2;
          return t;
        };
        if (scan(pr, out, false, bp, pair_key, make_two_two)) { // 2–2
          return done();
        }
      }
    }
    return done();
  }

  /// Level 3: the best split of M's and b's items together, over every subset (Gray code
  /// order, one work unit each). Covers every k-for-l swap between the two bins; only used
  /// when they hold at most repartition_items_ items together.
  bool repartition(probe& pr, work_meter& meter) {
    const auto mi = items(pr.m);
    const auto bi = items(pr.b);
    const std::size_t np = mi.size() + bi.size();
    if (np > static_cast<std::size_t>(repartition_items_) || np > 24) {
      return false;
    }
    pool_.clear();
    for (const entry& e : mi) {
      pool_.push_back(e);
    }
    for (const entry& e : bi) {
      pool_.push_back(e);
    }
    const auto m = static_cast<std::size_t>(pr.m);
    const auto b = static_cast<std::size_t>(pr.b);
    const cost_t both_res = res_[m] + res_[b];
    // Start from "everything in b" and flip items in Gray-code order.
    cost_t sum = 0;
    cost_t res = 0;
    index_t cnt = 0;
    std::uint32_t mask = 0;
    std::uint32_t current = 0; // M's present members as a mask
    for (std::size_t t = 0; t < mi.size(); ++t) {
      current |= 1u << t;
    }
    bool found = false;
    bool good = false;
    int128 best_score = 0;
    std::uint32_t best_mask = current;
    const std::uint32_t count = 1u << np;
    for (std::uint32_t g = 1; g < count; ++g) {
      const auto bit = static_cast<std::size_t>(__builtin_ctz(g));
      mask ^= 1u << bit;
      const bool now_in = (mask >> bit) & 1u;
      sum += now_in ? pool_[bit].c : -pool_[bit].c;
      res += now_in ? rules_.res(pool_[bit].id) : -rules_.res(pool_[bit].id);
      cnt += now_in ? 1 : -1;
      if (!meter.spend()) {
        break;
      }
      const cost_t d = load_[m] - sum;
      if (d < 1 || d > pr.dmax || mask == current) {
        continue;
      }
      if (rules_.has_counts() &&
          (!rules_.count_ok(cnt) || !rules_.count_ok(static_cast<index_t>(np) - cnt))) {
        continue;
      }
      if (rules_.has_resource() &&
          (res > rules_.resource_capacity || both_res - res > rules_.resource_capacity)) {
        continue;
      }
      if (d >= pr.good_lo && d <= pr.good_hi) {
        best_mask = mask;
        found = true;
        good = true;
        break;
      }
      int128 score = 0;
      if (rules_.has_speeds()) {
        const int128 a = static_cast<int128>(sum) * rules_.speed(pr.b);
        const int128 c = static_cast<int128>(load_[b] + d) * rules_.speed(pr.m);
        score = a > c ? a : c;
      } else {
        score = std::max(sum, load_[b] + d);
      }
      if (!found || score < best_score) {
        found = true;
        best_score = score;
        best_mask = mask;
      }
    }
    static_cast<void>(good);
    if (!found) {
      return false;
    }
    for (std::size_t t = 0; t < np; ++t) {
      const bool was_m = (current >> t) & 1u;
      const bool to_m = (best_mask >> t) & 1u;
      if (was_m && !to_m) {
        move_item(pool_[t].id, pr.m, pr.b);
      } else if (!was_m && to_m) {
        move_item(pool_[t].id, pr.b, pr.m);
      }
    }
    pairs_valid_[m] = 0;
    pairs_valid_[b] = 0;
    reorder();
    return true;
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
    entry* first = arena_.data() + l.off;
    entry* last = first + l.len;
    entry* at = slot(first, l.len, entry{cost(i), i});
    std::copy(at + 1, last, at);
    --l.len;
  }

  void insert_item(std::size_t b, std::uint32_t i) {
    auto& l = lists_[b];
    if (l.len == l.cap) {
      // Full: move the list to the end of the arena with room to grow (its old slot is
      // abandoned; lists only grow by single moves, so this stays rare).
      const std::size_t off = arena_.size();
      const std::size_t cap = l.len + slack(l.len) + 1;
      arena_.resize(arena_.size() + cap);
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

  void apply(const probe& pr, const step& s) {
    for (int t = 0; t < s.n_out; ++t) {
      move_item(s.out[static_cast<std::size_t>(t)], pr.m, pr.b);
    }
    for (int t = 0; t < s.n_in; ++t) {
      move_item(s.in[static_cast<std::size_t>(t)], pr.b, pr.m);
    }
    pairs_valid_[static_cast<std::size_t>(pr.m)] = 0;
    pairs_valid_[static_cast<std::size_t>(pr.b)] = 0;
    reorder();
  }

  /// Spare room per list of `len` items: moves in and out of a bin mostly balance.
  [[nodiscard]] static std::size_t slack(std::size_t len) noexcept { return 2 + len / 4; }

  /// Bin b's items, by cost descending, index ascending (valid until a list changes).
  [[nodiscard]] std::span<const entry> items(rank_t b) const noexcept {
    const auto& l = lists_[static_cast<std::size_t>(b)];
    return {arena_.data() + l.off, l.len};
  }

  /// Restores order_ after the critical bin (at pos_m_) lost load to its partner (at the
  /// earlier pos_b_): both leave and re-enter under their new loads.
  void reorder() {
    const rank_t m = order_[pos_m_];
    const rank_t b = order_[pos_b_];
    order_.erase(pos_m_); // the later one first: pos_b_ stays valid
    order_.erase(pos_b_);
    order_.insert({load(b), b}, by_time{this});
    order_.insert({load(m), m}, by_time{this});
  }

  std::span<const cost_t> costs_;
  bin_rules rules_;
  bool plain_; // no count or resource limits, equal speeds: consider() has a short form
  std::vector<rank_t> bin_of_;
  /// A bin's list: arena_[off, off + len) by cost descending, index ascending; cap slots.
  struct list_slot {
    std::size_t off;
    std::size_t len;
    std::size_t cap;
  };
  std::vector<list_slot> lists_;
  std::vector<entry> arena_;
  std::vector<cost_t> load_;
  std::vector<index_t> count_;
  std::vector<cost_t> res_;
  std::vector<std::vector<pair_entry>> pairs_;
  std::vector<char> pairs_valid_;
  bin_order order_;          // bins by time ascending, ties by index
  std::int64_t pending_ = 0; // work units of the current try_pair, charged by improve_bin
  bin_order::cursor pos_m_;  // where the current critical bin sits in order_
  bin_order::cursor pos_b_;  // where the current partner sits in order_
  std::vector<entry> pool_;  // scratch of repartition()
  int repartition_items_ = 0;
};

/// Validates an assignment given as a starting point: one bin in [0, k) per item.
inline void check_assignment(std::span<const cost_t> costs, std::span<const rank_t> bin_of,
                             rank_t bins, const char* where) {
  if (bin_of.size() != costs.size()) {
    throw_invalid_argument(where, ": ", costs.size(), " costs but ", bin_of.size(),
                           " bin assignments");
  }
  for (std::size_t i = 0; i < bin_of.size(); ++i) {
    if (bin_of[i] < 0 || bin_of[i] >= bins) {
      throw_invalid_argument(where, ": item ", i, " is assigned to bin ", bin_of[i],
                             " outside [0, ", bins, ")");
    }
  }
}

/// Which neighbourhoods the engine explores (see local_search_options).
struct search_plan {
  bool pair_moves = true;
  rank_t partners = 0;
  int repartition_items = 0;
};

/// Local search under rules from a valid start; `bound` (cost units) and `tb` (time) are
/// proven lower bounds: the search stops when the critical bin reaches tb. `order` (items by
/// cost descending, index ascending; computed when empty) and, when `start` is LPT's
/// assignment, its trace (`order_cost`, `order_bin`) only save work: the result is the same.
[[nodiscard]] inline partition_result
improve(std::span<const cost_t> costs, rank_t bins, std::span<const rank_t> start,
        const bin_rules& rules, cost_t bound, time_bound tb, work_meter& meter,
        const search_plan& plan, std::string algorithm, std::span<const std::uint32_t> order = {},
        std::span<const cost_t> order_cost = {}, std::span<const rank_t> order_bin = {}) {
  const std::int64_t before = meter.used();
  improver engine(costs, bins, start, rules, order, order_cost, order_bin);
  engine.run(meter, tb.num, tb.den, plan.pair_moves, plan.partners, plan.repartition_items);
  const cost_t simple = engine.simple_bound();
  auto r = finish_result_with_loads(engine.take_bin_of(), engine.take_loads(), simple, rules, bound,
                                    tb, std::move(algorithm));
  r.work = meter.used() - before;
  return r;
}

} // namespace detail

/// Improves an assignment by moves and swaps out of the critical (largest) bin: moving one or
/// two items, and 1–1, 2–1, 1–2 and 2–2 swaps with a less-loaded bin, each step lowering the
/// critical bin and keeping its partner below the old maximum (so the number of bins at the
/// maximum, or the maximum, drops). Among a partner's candidates the one that best balances
/// the two bins wins; partners are tried least loaded first.
///
/// Stops at `options.target` (a proven lower bound), at a local optimum, or when the work
/// budget is spent. Never returns a worse assignment than `start`.
/// Complexity: per step O(a·log b) for moves and 1–1 swaps and O(a²·log b² + b² log b) for
/// pair operations, a and b the item counts of the two bins, times the partners tried.
/// Guarantee: max load ≤ that of `start`.
/// Determinism: total tie-breaks everywhere; the budget counts work, not time.
/// Throws: orch::invalid_argument (k ≤ 0, negative cost, `start` malformed), orch::overflow.
[[nodiscard]] inline partition_result local_search(std::span<const cost_t> costs, rank_t bins,
                                                   std::span<const rank_t> start,
                                                   const local_search_options& options = {}) {
  detail::check_bins(bins, "local_search");
  const cost_t total = detail::total_cost(costs, "local_search");
  detail::check_assignment(costs, start, bins, "local_search");
  const cost_t largest = costs.empty() ? 0 : *std::max_element(costs.begin(), costs.end());
  const cost_t bound = std::max({options.target, detail::ceil_div(total, bins), largest});
  work_meter meter(options.work_budget, options.time_limit_ms);
  return detail::improve(costs, bins, start, detail::bin_rules{}, bound, {bound, 1}, meter,
                         {options.pair_moves, options.partners, options.repartition_items},
                         "local_search");
}

} // namespace orch
