// SPDX-License-Identifier: Apache-2.0
/// MULTIFIT: bisection on the bin capacity with first-fit-decreasing as the packing test.
#pragma once

#include <orch/config.hpp>
#include <orch/detail/primitives/checked.hpp>
#include <orch/partition/order.hpp>
#include <orch/partition/result.hpp>
#include <orch/quality.hpp>
#include <orch/types.hpp>

#include <algorithm>
#include <array>
#include <bit>
#include <cstddef>
#include <cstdint>
#include <span>
#include <vector>

namespace orch {

/// Options of multifit.
struct multifit_options {
  /// Bisection steps on the capacity; 0: until the interval is one value (at most 64 steps).
  int iterations = 0;
};

namespace detail {

/// First fit over k bins of one capacity: an 8-ary max-tree of residual capacities finds the
/// lowest bin with room for an item in O(log8 k) levels.
///
/// Why 8-ary: descending the tree is a chain of dependent loads, one per level; eight
/// children share one cache line and are compared together (branch-free), so 2,560 bins take
/// 4 dependent steps instead of 12.
class first_fit {
public:
  first_fit(rank_t bins, cost_t capacity) {
    // Level widths from the leaves up: the bins rounded up to whole groups of eight, then
    // one node per group below (rounded up again), until one group hangs under the root.
    const auto round_up = [](std::size_t x) { return (x + fanout - 1) / fanout * fanout; };
    std::array<std::size_t, max_levels> width{};
    std::size_t levels = 0;
    std::size_t w = round_up(static_cast<std::size_t>(bins));
    width[levels++] = w;
    while (w > fanout) {
      w = round_up(w / fanout);
      width[levels++] = w;
    }
    depth_ = static_cast<int>(levels);
    // Top-down offsets: the root at 0, then each level below it.
    offset_[0] = 0;
    std::size_t total = 1;
    for (std::size_t level = 1; level <= levels; ++level) {
      offset_[level] = total;
      total += width[levels - level];
    }
    room_.assign(total, -1); // padding takes nothing and is never descended into
    std::fill_n(room_.begin() + static_cast<std::ptrdiff_t>(leaf(0)),
                static_cast<std::size_t>(bins), capacity);
    for (std::size_t level = levels; level-- > 0;) {
      // Nodes with children; the rest of the level is padding.
      const std::size_t parents = width[levels - level - 1] / fanout;
      for (std::size_t j = 0; j < parents; ++j) {
        room_[offset_[level] + j] = max_of(&room_[offset_[level + 1] + j * fanout]);
      }
    }
  }

  /// The lowest bin with room ≥ c, or −1.
  [[nodiscard]] rank_t find(cost_t c) const noexcept {
    if (room_[0] < c) {
      return -1;
    }
    std::size_t j = 0;
    for (int level = 1; level <= depth_; ++level) {
      const cost_t* child = &room_[offset_[static_cast<std::size_t>(level)] + j * fanout];
      // Bit t: child t has room. Some child does (the parent's maximum is ≥ c), and the
      // lowest one is the first fit.
      unsigned fits = 0;
      for (unsigned t = 0; t < fanout; ++t) {
        fits |= static_cast<unsigned>(child[t] >= c) << t;
      }
      j = j * fanout + static_cast<std::size_t>(std::countr_zero(fits));
    }
    return static_cast<rank_t>(j);
  }

  /// Whether bin b has room ≥ c.
  [[nodiscard]] bool fits(rank_t b, cost_t c) const noexcept {
    return room_[leaf(static_cast<std::size_t>(b))] >= c;
  }

  /// Takes c from bin b's room.
  void take(rank_t b, cost_t c) noexcept {
    auto j = static_cast<std::size_t>(b);
    room_[leaf(j)] -= c;
    for (int level = depth_ - 1; level >= 0; --level) {
      const std::size_t parent = j / fanout;
      const cost_t m =
          max_of(&room_[offset_[static_cast<std::size_t>(level) + 1] + parent * fanout]);
      cost_t& slot = room_[offset_[static_cast<std::size_t>(level)] + parent];
      if (slot == m) {
        break; // the maximum above does not change any more
      }
      slot = m;
      j = parent;
    }
  }

private:
  static constexpr std::size_t fanout = 8;
  static constexpr std::size_t max_levels = 24; // 8^23 bins: far beyond rank_t

  [[nodiscard]] std::size_t leaf(std::size_t b) const noexcept {
    return offset_[static_cast<std::size_t>(depth_)] + b;
  }

  /// Maximum of eight consecutive rooms, as a balanced tree (three dependent steps).
  [[nodiscard]] static cost_t max_of(const cost_t* v) noexcept {
    const cost_t a = std::max(v[0], v[1]);
    const cost_t b = std::max(v[2], v[3]);
    const cost_t c = std::max(v[4], v[5]);
    const cost_t d = std::max(v[6], v[7]);
    return std::max(std::max(a, b), std::max(c, d));
  }

  int depth_ = 1; // levels below the root; the last one holds leaves
  std::array<std::size_t, max_levels + 1> offset_{}; // where each level starts (root: 0)
  std::vector<cost_t> room_;                         // levels one after another, root first
};

/// First-fit-decreasing of the items (in `order`, cost descending) into k bins of
/// `capacity`. Returns false when an item fits nowhere; `bin_of` is then partial.
/// `order_cost`, when given, holds the costs in `order` (read sequentially instead).
[[nodiscard]] inline bool ffd(std::span<const cost_t> costs, std::span<const std::uint32_t> order,
                              rank_t bins, cost_t capacity, std::vector<rank_t>& bin_of,
                              std::span<const cost_t> order_cost = {}) {
  bin_of.assign(costs.size(), 0);
  first_fit fit(bins, capacity);
  const bool sequential = order_cost.size() == order.size();
  cost_t last_cost = -1;
  rank_t last_bin = 0;
  for (std::size_t p = 0; p < order.size(); ++p) {
    const std::uint32_t i = order[p];
    const cost_t c = sequential ? order_cost[p] : costs[i];
    // An item as large as the previous one cannot fit before the previous one's bin (rooms
    // only shrink), so that bin is its first fit when it has room: runs of equal costs,
    // common in token-count costs, skip the tree walk.
    const rank_t b = c == last_cost && fit.fits(last_bin, c) ? last_bin : fit.find(c);
    if (b < 0) {
      return false;
    }
    fit.take(b, c);
    bin_of[i] = b;
    last_cost = c;
    last_bin = b;
  }
  return true;
}

/// The capacity MULTIFIT's bisection starts from: FFD always packs at max(⌈2Σ/k⌉, p_max)
/// (Coffman, Garey and Johnson), and at Σ (one bin takes everything). In 128 bits and capped
/// at Σ before it narrows: for k = 1 and Σ > 2^62, 2Σ does not fit a cost_t.
[[nodiscard]] inline cost_t multifit_start_capacity(cost_t total, rank_t bins,
                                                    cost_t largest) noexcept {
  const auto twice = static_cast<cost_t>(
      std::min<int128>((static_cast<int128>(total) * 2 + bins - 1) / bins, total));
  return std::max(twice, largest);
}

/// MULTIFIT over validated input with the order and the simple bound known.
[[nodiscard]] inline partition_result multifit_with(std::span<const cost_t> costs, rank_t bins,
                                                    std::span<const std::uint32_t> order,
                                                    cost_t total, cost_t lower, int iterations) {
  const cost_t largest = order.empty() ? 0 : costs[order.front()];
  cost_t hi = multifit_start_capacity(total, bins, largest);
  cost_t lo = std::max(lower, largest);
  std::vector<rank_t> best;
  std::vector<rank_t> trial;
  const bool ok = ffd(costs, order, bins, hi, best);
  ORCH_ASSERT(ok);
  static_cast<void>(ok);
  for (int step = 0; lo < hi && (iterations <= 0 || step < iterations); ++step) {
    const cost_t mid = lo + (hi - lo) / 2;
    if (ffd(costs, order, bins, mid, trial)) {
      best.swap(trial);
      hi = mid;
    } else {
      lo = mid + 1;
    }
  }
  return make_result(costs, std::move(best), bins, "multifit");
}

} // namespace detail

/// MULTIFIT (Coffman, Garey and Johnson 1978): bisection on a common bin capacity C between
/// the lower bound and max(⌈2Σ/k⌉, p_max); each step packs the items by first-fit-decreasing
/// into k bins of capacity C and keeps the smallest C that succeeded.
///
/// Complexity: O(n · b + I · n log k), b from the radix order, I the bisection steps (≤ 64).
/// Guarantee: with unlimited iterations, max load ≤ ⌈13/11 · OPT⌉ (FFD packs into k bins
/// whenever C ≥ 13/11 · OPT, Yue 1990, and every failed C is below that); after I steps,
/// ≤ ⌈13/11 · OPT⌉ + (C_U − C_L) / 2^I.
/// Determinism: depends only on costs, k and I.
/// Throws: orch::invalid_argument (k ≤ 0, negative cost), orch::overflow (Σ costs).
[[nodiscard]] inline partition_result multifit(std::span<const cost_t> costs, rank_t bins,
                                               const multifit_options& options = {}) {
  detail::check_bins(bins, "multifit");
  const cost_t total = detail::total_cost(costs, "multifit");
  const auto order = detail::order_desc(costs);
  return detail::multifit_with(costs, bins, order, total, detail::ceil_div(total, bins),
                               options.iterations);
}

} // namespace orch
