// SPDX-License-Identifier: Apache-2.0
/// Candidate steps of the local search between the critical bin and one partner.
#pragma once

#include <orch/detail/primitives/checked.hpp>
#include <orch/partition/improver_state.hpp>
#include <orch/types.hpp>

#include <algorithm>
#include <array>
#include <cstddef>
#include <cstdint>
#include <span>

namespace orch::detail {

/// The candidates of one (M, b) evaluation over improver_state: the transfer window, the
/// check of one candidate against the limits and its score, the scans that walk a sorted
/// list from the ideal transfer, and applying the best candidate.
class improver_steps : public improver_state {
public:
  using improver_state::improver_state;

protected:
  /// One candidate step: up to two items out of M, up to two into M.
  struct step {
    std::array<std::uint32_t, 2> out{};
    std::array<std::uint32_t, 2> in{};
    int n_out = 0;
    int n_in = 0;
  };

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

  /// Swaps item i of bin `from` with item j of bin `to`: what move_item(i, from, to) and
  /// move_item(j, to, from) do together, but each list keeps its length, so the newcomer
  /// takes the leaving item's slot and moves by neighbour shifts to its place (short lists;
  /// long ones go through move_item).
  void swap_items(std::uint32_t i, std::uint32_t j, rank_t from, rank_t to) {
    const auto f = static_cast<std::size_t>(from);
    const auto t = static_cast<std::size_t>(to);
    if (lists_[f].len > replace_max || lists_[t].len > replace_max) {
      move_item(i, from, to);
      move_item(j, to, from);
      return;
    }
    replace_item(f, i, j);
    replace_item(t, j, i);
    const cost_t delta = cost(i) - cost(j);
    load_[f] -= delta;
    load_[t] += delta;
    const cost_t res_delta = rules_.res(i) - rules_.res(j);
    res_[f] -= res_delta;
    res_[t] += res_delta;
    bin_of_[i] = to;
    bin_of_[j] = from;
  }

  /// In bin b's list, item `in` replaces item `out` (see swap_items).
  void replace_item(std::size_t b, std::uint32_t out, std::uint32_t in) {
    const auto& l = sorted_list(b);
    entry* first = arena_.data() + l.off;
    const entry e{cost(in), in};
    const auto at = static_cast<std::size_t>(slot(first, l.len, entry{cost(out), out}) - first);
    reposition(first, l.len, at, e, [](const entry& x, const entry& y) { return before(x, y); });
  }

  /// Lists up to this long take swaps in place (swap_items); longer ones shift by memmove.
  static constexpr std::size_t replace_max = 32;

  void apply(const probe& pr, const step& s) {
    // Items out of M paired with items into M are swaps; the lists end up the same either
    // way (sorted sets), swap_items only gets there with fewer shifts.
    const int both = std::min(s.n_out, s.n_in);
    for (int t = 0; t < both; ++t) {
      swap_items(s.out[static_cast<std::size_t>(t)], s.in[static_cast<std::size_t>(t)], pr.m, pr.b);
    }
    for (int t = both; t < s.n_out; ++t) {
      move_item(s.out[static_cast<std::size_t>(t)], pr.m, pr.b);
    }
    for (int t = both; t < s.n_in; ++t) {
      move_item(s.in[static_cast<std::size_t>(t)], pr.b, pr.m);
    }
    pairs_valid_[static_cast<std::size_t>(pr.m)] = 0;
    pairs_valid_[static_cast<std::size_t>(pr.b)] = 0;
    reorder();
  }
};

} // namespace orch::detail
