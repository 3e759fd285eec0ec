// SPDX-License-Identifier: Apache-2.0
/// MULTIFIT: bisection on the bin capacity with first-fit-decreasing as the packing test.
#pragma once

#include <orch/config.hpp>
#include <orch/detail/checked.hpp>
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

/// Options of multifit.
struct multifit_options {
  /// Bisection steps on the capacity; 0: until the interval is one value (at most 64 steps).
  int iterations = 0;
};

namespace detail {

/// First fit over k bins of one capacity: a max-tree of residual capacities finds the lowest
/// bin with room for an item in O(log k).
class first_fit {
public:
  first_fit(rank_t bins, cost_t capacity) : bins_(static_cast<std::size_t>(bins)) {
    while (leaves_ < bins_) {
      leaves_ *= 2;
    }
    room_.assign(2 * leaves_, -1); // padding leaves take nothing
    for (std::size_t b = 0; b < bins_; ++b) {
      room_[leaves_ + b] = capacity;
    }
    for (std::size_t node = leaves_ - 1; node >= 1; --node) {
      room_[node] = std::max(room_[2 * node], room_[2 * node + 1]);
    }
  }

  /// The lowest bin with room ≥ c, or −1.
  [[nodiscard]] rank_t find(cost_t c) const noexcept {
    if (room_[1] < c) {
      return -1;
    }
    std::size_t node = 1;
    while (node < leaves_) {
      // Left child if it has room, else right: an index computation, not a branch (which
      // child wins is data-dependent and would mispredict).
      node = 2 * node + static_cast<std::size_t>(room_[2 * node] < c);
    }
    return static_cast<rank_t>(node - leaves_);
  }

  /// Takes c from bin b's room.
  void take(rank_t b, cost_t c) noexcept {
    std::size_t node = leaves_ + static_cast<std::size_t>(b);
    room_[node] -= c;
    for (node /= 2; node >= 1; node /= 2) {
      const cost_t l = room_[2 * node];
      const cost_t r = room_[2 * node + 1];
      const cost_t m = l > r ? l : r;
      if (room_[node] == m) {
        break; // the maximum above does not change any more
      }
      room_[node] = m;
    }
  }

private:
  std::size_t bins_;
  std::size_t leaves_ = 1;
  std::vector<cost_t> room_; // 1-based heap layout: node, children 2·node and 2·node + 1
};

/// First-fit-decreasing of the items (in `order`, cost descending) into k bins of
/// `capacity`. Returns false when an item fits nowhere; `bin_of` is then partial.
[[nodiscard]] inline bool ffd(std::span<const cost_t> costs, std::span<const std::uint32_t> order,
                              rank_t bins, cost_t capacity, std::vector<rank_t>& bin_of) {
  bin_of.assign(costs.size(), 0);
  first_fit fit(bins, capacity);
  for (const std::uint32_t i : order) {
    const rank_t b = fit.find(costs[i]);
    if (b < 0) {
      return false;
    }
    fit.take(b, costs[i]);
    bin_of[i] = b;
  }
  return true;
}

/// MULTIFIT over validated input with the order and the simple bound known.
[[nodiscard]] inline partition_result multifit_with(std::span<const cost_t> costs, rank_t bins,
                                                    std::span<const std::uint32_t> order,
                                                    cost_t total, cost_t lower, int iterations) {
  const cost_t largest = order.empty() ? 0 : costs[order.front()];
  // Coffman, Garey and Johnson: FFD always succeeds at max(2Σ/k, p_max). In 128 bits: 2Σ
  // may not fit in 64.
  const auto twice = static_cast<cost_t>((static_cast<int128>(total) * 2 + bins - 1) / bins);
  cost_t hi = std::max(twice, largest);
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
