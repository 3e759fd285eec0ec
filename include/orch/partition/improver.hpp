// SPDX-License-Identifier: Apache-2.0
/// The local search engine: critical bins, partners and the levels of steps tried.
#pragma once

#include <orch/partition/budget.hpp>
#include <orch/partition/constraints.hpp>
#include <orch/partition/improver_steps.hpp>
#include <orch/types.hpp>

#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <limits>
#include <span>
#include <vector>

namespace orch::detail {

/// The local search engine over bins with limits and speeds. The critical bin M is the one
/// with the largest time (load / speed; ties: highest index). A step moves items out of M
/// into a partner b and possibly others back, transferring d > 0 cost units, such that both
/// new times stay below M's old one: the number of bins at the largest time drops, or the
/// largest time does. Partners are tried least loaded first; for each, the candidate that
/// best balances the two bins is applied (first partner with any improving candidate wins).
/// Moves and 1–1 swaps are tried against every partner before pair operations are.
class improver : public improver_steps {
public:
  /// `order`: every item by cost descending, index ascending (computed when empty); the
  /// per-bin lists are filled in that order and so come out sorted without a sort per bin.
  /// `order_cost` and `order_bin`, when given, hold each item's cost and start bin in that
  /// order (LPT's trace), so the fill reads sequentially instead of by item index.
  improver(std::span<const cost_t> costs, rank_t bins, std::span<const rank_t> bin_of,
           const bin_rules& rules, std::span<const std::uint32_t> order = {},
           std::span<const cost_t> order_cost = {}, std::span<const rank_t> order_bin = {})
      : improver_steps(costs, bins, bin_of, rules, order, order_cost, order_bin) {}

  /// An empty engine: reset() (improver_state) starts each search, reusing its buffers.
  improver() = default;

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
        if (m != top && earlier(m, top)) {
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

private:
  /// True when bin x's time (load / speed) is below bin y's; equal speeds compare loads.
  [[nodiscard]] bool earlier(rank_t x, rank_t y) const noexcept {
    return rules_.has_speeds() ? time_less(load(x), rules_.speed(x), load(y), rules_.speed(y))
                               : load(x) < load(y);
  }

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
        if (!earlier(b, m)) {
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
      const entry* below = bi.data(); // the first of b's entries cheaper than c_i (moves right)
      const entry* const b_end = bi.data() + bi.size();
      // The skip below needs the ideal transfer in [1, dmax] (with speeds it may be 0).
      const bool skips = pr.ideal >= 1 && pr.ideal <= pr.dmax;
      const cost_t reach = skips ? pr.dmax : std::numeric_limits<cost_t>::max();
      for (const entry& ei : mi) {
        if (ei.c < 1) {
          break; // the rest are zero-cost items: no positive transfer
        }
        // Only b's items costing c_i − dmax … c_i − 1 give a valid transfer, and when there is
        // one, one of the two entries the walks start from is one (the range holds the ideal
        // partner cost). Near the end of a search most items have none: their walks would
        // consider nothing, so only their unit is charged.
        while (below != b_end && below->c >= ei.c) {
          ++below;
        }
        if (below == b_end ? skips : below->c < ei.c - reach) {
          ++pending_;
          continue;
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
        const entry* at = bi.data() + pos;
        while (at != b_end && at->c > want) {
          ++at;
        }
        pos = static_cast<std::size_t>(at - bi.data());
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

  std::vector<entry> pool_; // scratch of repartition()
  int repartition_items_ = 0;
};

} // namespace orch::detail
