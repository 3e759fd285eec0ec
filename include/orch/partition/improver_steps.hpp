// SPDX-License-Identifier: Apache-2.0
/// Candidate steps of the local search between the critical bin and one partner.
#pragma once

#include <orch/detail/primitives/checked.hpp>
#include <orch/partition/bin_order.hpp>
#include <orch/partition/improver_state.hpp>
#include <orch/types.hpp>

#include <algorithm>
#include <array>
#include <cstddef>
#include <cstdint>
#include <span>
#include <vector>

namespace orch::detail {

/// The transfer window of a critical bin M and a partner b: which transfers d of cost from M
/// to b improve (1 ≤ d ≤ dmax), which one to aim at, and which reach the target.
struct transfer_window {
  rank_t m = 0;
  rank_t b = 0;
  cost_t dmax = 0;    // largest transfer keeping b below M's old time
  cost_t ideal = 0;   // the transfer aimed at (equal times, or both at the target)
  cost_t good_lo = 1; // transfers in [good_lo, good_hi] bring both bins to the target:
  cost_t good_hi = 0; // any such candidate is as good as it gets, the search stops there
};

/// One (M, b) evaluation on an improver_state held by reference: the window, the check of
/// one candidate against the limits and its score, the scans that walk a sorted list from
/// the ideal transfer, and applying the best candidate. Made afresh for every partner tried
/// (it is a few words on the stack), so it owns nothing that outlives the evaluation; the
/// work units it counts are charged to the meter by the caller once it is done.
class improver_steps {
public:
  /// One candidate step: up to two items out of M, up to two into M.
  struct step {
    std::array<std::uint32_t, 2> out{};
    std::array<std::uint32_t, 2> in{};
    int n_out = 0;
    int n_in = 0;
  };

  enum class verdict { invalid, valid, good };

  /// M at `at_m` of the state's order, b at the earlier `at_b`; the target time is tn / td.
  improver_steps(improver_state& state, rank_t m, bin_order::cursor at_m, rank_t b,
                 bin_order::cursor at_b, cost_t tn, cost_t td)
      : s_(state), at_m_(at_m), at_b_(at_b) {
    w_.m = m;
    w_.b = b;
    set_window(tn, td);
  }

  [[nodiscard]] improver_state& state() noexcept { return s_; }
  [[nodiscard]] const transfer_window& window() const noexcept { return w_; }
  /// Work units counted so far (candidates, seeks, pairs indexed, skipped items).
  [[nodiscard]] std::int64_t units() const noexcept { return pending_; }
  /// Counts n more work units.
  void charge(std::int64_t n = 1) noexcept { pending_ += n; }

  /// Pairs of bin b's items (improver_state::pairs), their indexing counted.
  const std::vector<improver_state::pair_entry>& pairs(rank_t b) { return s_.pairs(b, pending_); }

  /// Evaluates one candidate: transfer d with the items in s; keeps it if valid and better.
  verdict consider(cost_t d, const step& s) {
    ++pending_;
    if (d < 1 || d > w_.dmax) {
      return verdict::invalid;
    }
    const bin_rules& rules = s_.rules();
    if (rules.has_counts()) {
      const index_t delta = s.n_out - s.n_in;
      if (!rules.count_ok(s_.count(w_.m) - delta) || !rules.count_ok(s_.count(w_.b) + delta)) {
        return verdict::invalid;
      }
    }
    if (rules.has_resource()) {
      cost_t r = 0;
      for (int t = 0; t < s.n_out; ++t) {
        r += rules.res(s.out[static_cast<std::size_t>(t)]);
      }
      for (int t = 0; t < s.n_in; ++t) {
        r -= rules.res(s.in[static_cast<std::size_t>(t)]);
      }
      if (s_.resource(w_.m) - r > rules.resource_capacity ||
          s_.resource(w_.b) + r > rules.resource_capacity) {
        return verdict::invalid;
      }
    }
    const bool good = d >= w_.good_lo && d <= w_.good_hi;
    // The larger of the two new times over the common denominator s_m·s_b; in the target
    // window every candidate scores the same (the target), so the first one found wins.
    int128 score = 0;
    if (!good) {
      if (rules.has_speeds()) {
        const int128 a = static_cast<int128>(s_.load(w_.m) - d) * rules.speed(w_.b);
        const int128 c = static_cast<int128>(s_.load(w_.b) + d) * rules.speed(w_.m);
        score = a > c ? a : c;
      } else {
        score = std::max(s_.load(w_.m) - d, s_.load(w_.b) + d);
      }
    }
    keep(good, score, s);
    return good ? verdict::good : verdict::valid;
  }

  /// Candidates "out_sum out of M, one entry of `list` (sorted by cost descending) in": from
  /// the entry giving the ideal transfer, walks each way to the first valid candidate (the
  /// score is V-shaped in the transfer, so farther ones are worse). With `moves`, the entries
  /// themselves go out and nothing comes in (transfer = the entry's cost). Returns true when a
  /// candidate reached the target window.
  template <class List, class Key, class Make>
  bool scan(cost_t out_sum, bool moves, const List& list, Key key, Make make) {
    const cost_t want = moves ? w_.ideal : out_sum - w_.ideal;
    ++pending_;
    return walk(out_sum, moves, list, key, make, seek(list, want, key));
  }

  /// The two walks of scan() from a known ideal position `pos`.
  template <class List, class Key, class Make>
  bool walk(cost_t out_sum, bool moves, const List& list, Key key, Make make, std::size_t pos) {
    const auto transfer = [&](std::size_t p) {
      return moves ? key(list[p]) : out_sum - key(list[p]);
    };
    for (std::size_t p = pos; p < list.size(); ++p) {
      const cost_t d = transfer(p);
      if (moves ? d < 1 : d > w_.dmax) {
        break;
      }
      const verdict v = consider(d, make(list[p]));
      if (v == verdict::good) {
        return true;
      }
      if (v == verdict::valid) {
        break;
      }
    }
    for (std::size_t p = pos; p-- > 0;) {
      const cost_t d = transfer(p);
      if (moves ? d > w_.dmax : d < 1) {
        break;
      }
      const verdict v = consider(d, make(list[p]));
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
  bool walk_swaps(const improver_state::entry& ei, std::span<const improver_state::entry> bi,
                  std::size_t pos) {
    const cost_t lm = s_.load(w_.m);
    const cost_t lb = s_.load(w_.b);
    const auto consider_swap = [&](cost_t d, std::uint32_t in) {
      ++pending_;
      if (d < 1 || d > w_.dmax) {
        return verdict::invalid;
      }
      const bool good = d >= w_.good_lo && d <= w_.good_hi;
      const cost_t score = good ? 0 : std::max(lm - d, lb + d);
      if (!found_ || good || score < best_score_) {
        found_ = true;
        best_score_ = score;
        best_ = step{};
        best_.out[0] = ei.id;
        best_.n_out = 1;
        best_.in[0] = in;
        best_.n_in = 1;
      }
      return good ? verdict::good : verdict::valid;
    };
    for (std::size_t p = pos; p < bi.size(); ++p) {
      const cost_t d = ei.c - bi[p].c;
      if (d > w_.dmax) {
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

  /// Applies the best candidate found, if any; true when one was applied.
  bool done() {
    if (!found_) {
      return false;
    }
    // Items out of M paired with items into M are swaps; the lists end up the same either
    // way (sorted sets), swap_items only gets there with fewer shifts.
    const step& s = best_;
    const int both = std::min(s.n_out, s.n_in);
    for (int t = 0; t < both; ++t) {
      s_.swap_items(s.out[static_cast<std::size_t>(t)], s.in[static_cast<std::size_t>(t)], w_.m,
                    w_.b);
    }
    for (int t = both; t < s.n_out; ++t) {
      s_.move_item(s.out[static_cast<std::size_t>(t)], w_.m, w_.b);
    }
    for (int t = both; t < s.n_in; ++t) {
      s_.move_item(s.in[static_cast<std::size_t>(t)], w_.b, w_.m);
    }
    settle();
    return true;
  }

  /// Restores the state's order after items moved between M and b (improver_state::settle).
  void settle() { s_.settle(at_m_, at_b_); }

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

private:
  /// Keeps s as the best candidate when it is the first valid one, reaches the target, or
  /// scores lower (earlier candidates win ties: the scan order is the tie-break).
  void keep(bool good, int128 score, const step& s) noexcept {
    if (!found_ || good || score < best_score_) {
      found_ = true;
      best_score_ = score;
      best_ = s;
    }
  }

  /// Sets the transfer window of (M, b): dmax keeps b below M's time; the target window
  /// [good_lo, good_hi] brings both to the target time T = tn / td.
  void set_window(cost_t tn, cost_t td) {
    const bin_rules& rules = s_.rules();
    const cost_t lm = s_.load(w_.m);
    const cost_t lb = s_.load(w_.b);
    if (rules.has_speeds()) {
      const cost_t sm = rules.speed(w_.m);
      const cost_t sb = rules.speed(w_.b);
      // Largest d with (L_b + d)·s_m < L_m·s_b, and the d equalising both times.
      const int128 lim = static_cast<int128>(lm) * sb;
      w_.dmax = static_cast<cost_t>((lim - 1) / sm - lb);
      w_.ideal = static_cast<cost_t>((lim - static_cast<int128>(lb) * sm) /
                                     (static_cast<int128>(sm) + sb));
      // Both at or below T: L_m − d ≤ ⌊T·s_m⌋ and L_b + d ≤ ⌊T·s_b⌋.
      const auto cap_m = static_cast<cost_t>(static_cast<int128>(tn) * sm / td);
      const auto cap_b = static_cast<cost_t>(static_cast<int128>(tn) * sb / td);
      w_.good_lo = std::max<cost_t>(1, lm - cap_m);
      w_.good_hi = std::min(w_.dmax, cap_b - lb);
    } else {
      w_.dmax = lm - lb - 1;
      w_.ideal = (lm - lb) / 2;
      const cost_t cap = tn / td;
      w_.good_lo = std::max<cost_t>(1, lm - cap);
      w_.good_hi = std::min(w_.dmax, cap - lb);
    }
    if (w_.good_lo <= w_.good_hi) {
      // Aim at the middle of the target window: both bins end at or below the target.
      w_.ideal = w_.good_lo + (w_.good_hi - w_.good_lo) / 2;
    }
  }

  improver_state& s_;
  bin_order::cursor at_m_; // where M sits in the state's order (for settle())
  bin_order::cursor at_b_; // where b sits
  transfer_window w_;
  std::int64_t pending_ = 0; // work units not yet charged to the meter
  bool found_ = false;
  int128 best_score_ = 0;
  step best_;
};

} // namespace orch::detail
