// SPDX-License-Identifier: Apache-2.0
/// The OrchMLLM paper's reduction: bisection on a target, bins filled by subset sums.
#pragma once

#include <orch/config.hpp>
#include <orch/detail/primitives/checked.hpp>
#include <orch/partition/budget.hpp>
#include <orch/partition/lpt.hpp>
#include <orch/partition/order.hpp>
#include <orch/partition/result.hpp>
#include <orch/quality.hpp>
#include <orch/types.hpp>

#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <span>
#include <vector>

namespace orch {

/// Options of subset_sum_partition.
struct subset_sum_options {
  /// Resolution of the subset-sum table per bin: capacities above it are scaled down by
  /// s = ⌈R / grid⌉ (see the guarantee). At least 64.
  std::int64_t grid = 2048;
  /// Bisection steps on the target; 0: until the interval is one value (at most 64).
  int iterations = 0;
  /// Work units: one per 64-bit word of the table touched; when spent, the best packing
  /// found so far is returned (LPT's when none).
  std::int64_t work_budget = 50'000'000;
};

namespace detail {

/// Fills bins one at a time: each takes the largest item left plus the subset of the other
/// items left whose sum comes closest to the room R = C − largest without exceeding it.
/// The subset sum is a bitset table over scaled costs ⌈c / s⌉ and capacity ⌊R / s⌋ (so a
/// chosen set never exceeds R); the first item that reaches each sum is remembered, which
/// reconstructs a set in O(items). Zero-cost items are placed last, in bin 0.
class subset_filler {
public:
  subset_filler(std::span<const cost_t> costs, std::span<const std::uint32_t> order,
                std::int64_t grid)
      : costs_(costs), order_(order), grid_(std::max<std::int64_t>(grid, 64)) {}

  /// Packs everything into k bins of capacity C? On true, bin_of holds the packing.
  bool fill(rank_t bins, cost_t capacity, work_meter& meter, std::vector<rank_t>& bin_of) {
    bin_of.assign(costs_.size(), 0);
    left_.clear();
    for (const std::uint32_t i : order_) {
      if (costs_[i] > 0) {
        left_.push_back(i);
      }
    }
    for (rank_t b = 0; b < bins && !left_.empty(); ++b) {
      const std::uint32_t first = left_.front();
      bin_of[first] = b;
      const cost_t room = capacity - costs_[first];
      if (room < 0) {
        return false;
      }
      take_.assign(left_.size(), 0);
      take_[0] = 1;
      if (!best_subset(room, meter)) {
        return false; // budget spent
      }
      std::size_t kept = 0;
      for (std::size_t p = 0; p < left_.size(); ++p) {
        if (take_[p]) {
          bin_of[left_[p]] = b;
        } else {
          left_[kept++] = left_[p];
        }
      }
      left_.resize(kept);
    }
    return left_.empty();
  }

private:
  /// Marks in take_ the subset of left_[1..] with the largest sum ≤ room (on scaled costs).
  bool best_subset(cost_t room, work_meter& meter) {
    if (room <= 0 || left_.size() < 2) {
      return true;
    }
    const cost_t scale = std::max<cost_t>(1, ceil_div(room, grid_));
    const auto cap = static_cast<std::size_t>(room / scale);
    const std::size_t words = cap / 64 + 1;
    reach_.assign(words, 0);
    reach_[0] = 1; // sum 0
    first_.assign(cap + 1, -1);
    shifted_.resize(words);
    for (std::size_t p = 1; p < left_.size(); ++p) {
      const cost_t c = costs_[left_[p]];
      const auto w = static_cast<std::size_t>(ceil_div(c, scale));
      if (w > cap) {
        continue;
      }
      if (!meter.spend(static_cast<std::int64_t>(words))) {
        return false;
      }
      // shifted = reach << w, limited to the table; new sums are shifted & ~reach.
      const std::size_t ws = w / 64;
      const std::size_t bs = w % 64;
      for (std::size_t i = words; i-- > 0;) {
        std::uint64_t v = 0;
        if (i >= ws) {
          v = reach_[i - ws] << bs;
          if (bs != 0 && i >= ws + 1) {
            v |= reach_[i - ws - 1] >> (64 - bs);
          }
        }
        shifted_[i] = v;
      }
      for (std::size_t i = 0; i < words; ++i) {
        std::uint64_t fresh = shifted_[i] & ~reach_[i];
        if (i == words - 1 && (cap + 1) % 64 != 0) {
          fresh &= (std::uint64_t{1} << ((cap + 1) % 64)) - 1; // sums above cap
        }
        while (fresh != 0) {
          const auto bit = static_cast<std::size_t>(__builtin_ctzll(fresh));
          first_[i * 64 + bit] = static_cast<std::int64_t>(p);
          fresh &= fresh - 1;
        }
        reach_[i] |= shifted_[i];
      }
    }
    // The largest reachable scaled sum ≤ cap, then walk back through first reachers: the
    // item that first reached s was added to a sum reachable with earlier items only.
    std::size_t s = cap;
    while (s > 0 && first_[s] < 0) {
      --s;
    }
    while (s > 0) {
      const auto p = static_cast<std::size_t>(first_[s]);
      take_[p] = 1;
      s -= static_cast<std::size_t>(ceil_div(costs_[left_[p]], scale));
    }
    return true;
  }

  std::span<const cost_t> costs_;
  std::span<const std::uint32_t> order_;
  cost_t grid_;
  std::vector<std::uint32_t> left_;
  std::vector<char> take_;
  std::vector<std::uint64_t> reach_;
  std::vector<std::uint64_t> shifted_;
  std::vector<std::int64_t> first_;
};

} // namespace detail

/// The reduction of the OrchMLLM paper (arXiv 2503.23830): bisection on a target capacity C
/// between the lower bound and LPT's largest bin; for each C, bins are filled one at a time,
/// each with the largest item left plus the subset of the remaining items whose sum comes
/// closest to C without exceeding it; C is feasible when every item found a bin. Returns the
/// packing of the smallest feasible C found (or LPT's, if no C below it succeeds).
///
/// Complexity: O(I · k · n · g/64) for grid g and I bisection steps, bounded by the budget.
/// Guarantee (per bin, on the subset-sum step): exact when the room R ≤ grid; otherwise with
/// s = ⌈R / grid⌉ the chosen sum is at least that of any set T with Σ_T + |T|·s ≤ R, minus
/// |S|·(s − 1) for the chosen set S — a relative error of about (|S| + |T|)/grid. Overall: never
/// worse than LPT (its largest bin is the upper end of the bisection).
/// Determinism: items in cost-descending order, ties by index; work-counted budget.
/// Throws: orch::invalid_argument (k ≤ 0, negative cost), orch::overflow (Σ costs).
[[nodiscard]] inline partition_result subset_sum_partition(std::span<const cost_t> costs,
                                                           rank_t bins,
                                                           const subset_sum_options& options = {}) {
  detail::check_bins(bins, "subset_sum_partition");
  const cost_t total = detail::total_cost(costs, "subset_sum_partition");
  auto best = detail::lpt_unchecked(costs, bins, total);
  const auto order = detail::order_desc(costs);
  detail::subset_filler filler(costs, order, options.grid);
  work_meter meter(options.work_budget);
  std::vector<rank_t> trial;
  std::vector<rank_t> found;
  cost_t lo = best.lower_bound;
  cost_t hi = best.max_load - 1; // LPT already reaches max_load
  for (int step = 0; lo <= hi && (options.iterations <= 0 || step < options.iterations); ++step) {
    const cost_t mid = lo + (hi - lo) / 2;
    if (filler.fill(bins, mid, meter, trial)) {
      found.swap(trial);
      hi = mid - 1;
    } else if (meter.exhausted()) {
      break;
    } else {
      lo = mid + 1;
    }
  }
  if (found.empty()) {
    best.work = meter.used(); // no target below LPT's succeeded: LPT's answer, named so
    return best;
  }
  auto r = detail::make_result(costs, std::move(found), bins, "subset_sum");
  r.work = meter.used();
  return r;
}

} // namespace orch
