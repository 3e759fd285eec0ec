// SPDX-License-Identifier: Apache-2.0
/// The local search engine: critical bins, partners and the levels of steps tried.
#pragma once

#include <orch/partition/bin_order.hpp>
#include <orch/partition/budget.hpp>
#include <orch/partition/constraints.hpp>
#include <orch/partition/improver_repartition.hpp>
#include <orch/partition/improver_state.hpp>
#include <orch/partition/improver_steps.hpp>
#include <orch/types.hpp>

#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <limits>
#include <span>

namespace orch::detail {

/// The local search engine over bins with limits and speeds. The critical bin M is the one
/// with the largest time (load / speed; ties: highest index). A step moves items out of M
/// into a partner b and possibly others back, transferring d > 0 cost units, such that both
/// new times stay below M's old one: the number of bins at the largest time drops, or the
/// largest time does. Partners are tried least loaded first; for each, the candidate that
/// best balances the two bins is applied (first partner with any improving candidate wins).
/// Moves and 1–1 swaps are tried against every partner before pair operations are.
///
/// Built by composition: it owns the state (improver_state) and the level-3 scratch
/// (improver_repartition), and makes one improver_steps on the state per partner tried. This
/// class only decides which bins to pair and which kinds of steps to generate.
class improver {
public:
  /// Starts a search from `bin_of`; arguments as for improver_state's constructor.
  improver(std::span<const cost_t> costs, rank_t bins, std::span<const rank_t> bin_of,
           const bin_rules& rules, std::span<const std::uint32_t> order = {},
           std::span<const cost_t> order_cost = {}, std::span<const rank_t> order_bin = {})
      : state_(costs, bins, bin_of, rules, order, order_cost, order_bin) {}

  /// An empty engine: state().reset() starts each search, reusing its buffers.
  improver() = default;

  /// The assignment, loads and bins being improved (reset() it to start a search; read the
  /// result from it after run()).
  [[nodiscard]] improver_state& state() noexcept { return state_; }
  [[nodiscard]] const improver_state& state() const noexcept { return state_; }

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
    const bin_order& order = state_.order();
    while (!meter.exhausted()) {
      const rank_t top = order.back();
      if (!time_less(target_num, target_den, state_.load(top), state_.rules().speed(top))) {
        return true;
      }
      // The largest time drops only once every bin at it has improved; when the highest
      // such bin cannot, another one at the same time may still move and open a way for it.
      bool improved = false;
      rank_t tried = 0;
      for (auto at = order.last();;) {
        const rank_t m = order[at];
        if (m != top && state_.earlier(m, top)) {
          break; // below the largest time: not critical
        }
        if (partners > 0 && ++tried > std::max<rank_t>(1, partners / 4)) {
          break; // wide instances: a few critical bins, not every tied one
        }
        improved = improve_bin(m, at, levels, pair_moves, partners_of_level, target_num, target_den,
                               meter);
        if (improved) {
          break; // the order changed: `at` is stale
        }
        if (meter.exhausted()) {
          return false;
        }
        if (!order.prev(at)) {
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
  using entry = improver_state::entry;
  using pair_entry = improver_state::pair_entry;
  using step = improver_steps::step;
  using verdict = improver_steps::verdict;

  /// One improving step out of critical bin m, at `at_m` of the order (partners least loaded
  /// first, levels in order); false when none exists. Reorders the bins when it succeeds.
  bool improve_bin(rank_t m, bin_order::cursor at_m, int levels, bool pair_moves,
                   const rank_t* partners_of_level, cost_t target_num, cost_t target_den,
                   work_meter& meter) {
    const bin_order& order = state_.order();
    for (int level = 1; level <= levels; ++level) {
      if (level == 2 && !pair_moves) {
        continue;
      }
      rank_t tried = 0;
      for (auto at = order.first(); order.valid(at) && order[at] != m; order.next(at)) {
        const rank_t b = order[at];
        if (!state_.earlier(b, m)) {
          break; // b is as late as m: nothing can lower both below m's time
        }
        if (partners_of_level[level] > 0 && ++tried > partners_of_level[level]) {
          break;
        }
        // Levels 1 and 2 never look at the meter mid-way: their units are counted by the
        // evaluation and charged once per partner (same total, same exhaustion point).
        improver_steps steps(state_, m, at_m, b, at, target_num, target_den);
        const bool stepped = try_pair(steps, level, meter);
        if (steps.units() > 0) {
          meter.spend(steps.units());
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

  /// The steps of `level` between the evaluation's M and b; true when one was applied.
  bool try_pair(improver_steps& steps, int level, work_meter& meter) {
    if (steps.window().dmax < 1) {
      return false;
    }
    if (level == 3) {
      return repartition_.run(steps, repartition_items_, meter);
    }
    return level == 1 ? moves_and_swaps(steps) : pair_steps(steps);
  }

  /// Level 1: moves of one item out of M, then 1–1 swaps.
  bool moves_and_swaps(improver_steps& steps) {
    const transfer_window& w = steps.window();
    const auto mi = state_.items(w.m);
    const auto bi = state_.items(w.b);
    const auto single_key = [](const entry& e) { return e.c; };
    const auto make_move = [](const entry& e) {
      step s;
      s.out[0] = e.id;
      s.n_out = 1;
      return s;
    };
    if (steps.scan(0, true, mi, single_key, make_move)) {
      return steps.done();
    }
    // 1–1 swaps as one merge: down M's list c_i falls, so the ideal partner cost
    // c_i − ideal falls too and its position in b's list only moves right.
    std::size_t pos = 0;
    const entry* below = bi.data(); // the first of b's entries cheaper than c_i (moves right)
    const entry* const b_end = bi.data() + bi.size();
    // The skip below needs the ideal transfer in [1, dmax] (with speeds it may be 0).
    const bool skips = w.ideal >= 1 && w.ideal <= w.dmax;
    const cost_t reach = skips ? w.dmax : std::numeric_limits<cost_t>::max();
    const bool plain = state_.plain();
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
        steps.charge();
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
      const cost_t want = ei.c - w.ideal;
      const entry* at = bi.data() + pos;
      while (at != b_end && at->c > want) {
        ++at;
      }
      pos = static_cast<std::size_t>(at - bi.data());
      steps.charge();
      if (plain ? steps.walk_swaps(ei, bi, pos)
                : steps.walk(ei.c, false, bi, single_key, make_swap, pos)) {
        return steps.done();
      }
    }
    return steps.done();
  }

  /// Level 2: for each item of M, 1–2 swaps, then with each later item of M a 2–0 move and
  /// 2–1 and 2–2 swaps.
  bool pair_steps(improver_steps& steps) {
    const transfer_window& w = steps.window();
    const auto mi = state_.items(w.m);
    const auto bi = state_.items(w.b);
    const auto single_key = [](const entry& e) { return e.c; };
    const auto pair_key = [](const pair_entry& e) { return e.sum; };
    const auto& bp = steps.pairs(w.b);
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
      if (steps.scan(mi[x].c, false, bp, pair_key, make_one_two)) { // 1–2
        return steps.done();
      }
      for (std::size_t y = x + 1; y < mi.size(); ++y) {
        const std::uint32_t i2 = mi[y].id;
        const cost_t out = mi[x].c + mi[y].c;
        step s;
        s.out = {i, i2};
        s.n_out = 2;
        if (steps.consider(out, s) == verdict::good) { // 2–0
          return steps.done();
        }
        const auto make_two_one = [i, i2](const entry& ej) {
          step t;
          t.out = {i, i2};
          t.n_out = 2;
          t.in[0] = ej.id;
          t.n_in = 1;
          return t;
        };
        if (steps.scan(out, false, bi, single_key, make_two_one)) { // 2–1
          return steps.done();
        }
        const auto make_two_two = [i, i2](const pair_entry& e) {
          step t;
          t.out = {i, i2};
          t.n_out = 2;
          t.in = {e.a, e.b};
          t.n_in = 2;
          return t;
        };
        if (steps.scan(out, false, bp, pair_key, make_two_two)) { // 2–2
          return steps.done();
        }
      }
    }
    return steps.done();
  }

  improver_state state_;
  improver_repartition repartition_; // level 3, with its scratch
  int repartition_items_ = 0;
};

} // namespace orch::detail
