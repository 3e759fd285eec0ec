// SPDX-License-Identifier: Apache-2.0
/// Lower bounds on the optimal largest bin (P||Cmax) and on the bins a capacity needs.
#pragma once

#include <orch/config.hpp>
#include <orch/detail/primitives/checked.hpp>
#include <orch/quality.hpp>
#include <orch/types.hpp>

#include <algorithm>
#include <cstddef>
#include <functional>
#include <span>
#include <vector>

namespace orch {

namespace detail {

/// Costs sorted descending (a copy).
[[nodiscard]] inline std::vector<cost_t> sorted_desc(std::span<const cost_t> costs) {
  std::vector<cost_t> s(costs.begin(), costs.end());
  std::sort(s.begin(), s.end(), std::greater<>());
  return s;
}

/// The P||Cmax bound on costs sorted descending: max(⌈Σ/k⌉, p_1, and for every j ≥ 1 the
/// j + 1 smallest of the jk + 1 largest items, p_{jk+1-j} + … + p_{jk+1}: some bin holds
/// j + 1 of those jk + 1 items).
[[nodiscard]] inline cost_t pcmax_bound_sorted(std::span<const cost_t> sorted, rank_t bins,
                                               cost_t total) {
  cost_t bound = ceil_div(total, bins);
  if (sorted.empty()) {
    return bound;
  }
  bound = std::max(bound, sorted.front());
  const auto n = sorted.size();
  const auto k = static_cast<std::size_t>(bins);
  // Window sums of the j + 1 items ending at position jk (0-based) from prefix sums; every
  // window is a sub-sum of Σ, which fits.
  std::vector<cost_t> prefix(n + 1, 0);
  for (std::size_t i = 0; i < n; ++i) {
    prefix[i + 1] = prefix[i] + sorted[i];
  }
  for (std::size_t j = 1; j * k < n; ++j) {
    bound = std::max(bound, prefix[j * k + 1] - prefix[j * k - j]);
  }
  return bound;
}

} // namespace detail

/// A lower bound on the optimal largest bin of P||Cmax, at least as strong as
/// orch::lower_bound: max(⌈Σ/k⌉, p_max, p_k + p_{k+1}, and generally the j + 1 smallest of
/// the jk + 1 largest costs for every j).
/// Complexity: O(n log n) (sorting, then one window per j from prefix sums).
/// Throws: orch::invalid_argument (k ≤ 0, negative cost), orch::overflow (Σ costs).
[[nodiscard]] inline cost_t pcmax_lower_bound(std::span<const cost_t> costs, rank_t bins) {
  detail::check_bins(bins, "pcmax_lower_bound");
  const cost_t total = detail::total_cost(costs, "pcmax_lower_bound");
  const auto sorted = detail::sorted_desc(costs);
  return detail::pcmax_bound_sorted(sorted, bins, total);
}

/// Martello–Toth bound L2 on how many bins of `capacity` the items need (costs sorted
/// descending). Returns a count larger than the number of items when an item alone exceeds
/// the capacity. For every α ≤ C/2: the items above C − α each need their own bin, so do the
/// items in (C/2, C − α], and the items in [α, C/2] fill the room those leave before they
/// need bins of their own.
/// Complexity: O(n + d log n), d the distinct costs ≤ C/2.
/// Throws: nothing (callers pass non-negative costs sorted descending).
[[nodiscard]] inline index_t bin_packing_l2(std::span<const cost_t> sorted_desc, cost_t capacity) {
  const auto n = static_cast<index_t>(sorted_desc.size());
  if (n == 0) {
    return 0;
  }
  if (sorted_desc.front() > capacity) {
    return n + 1;
  }
  if (capacity == 0) {
    return 0; // every item is 0 and fits anywhere
  }
  // prefix[i] = Σ of the i largest items.
  std::vector<cost_t> prefix(sorted_desc.size() + 1, 0);
  for (std::size_t i = 0; i < sorted_desc.size(); ++i) {
    prefix[i + 1] = prefix[i] + sorted_desc[i];
  }
  // Number of items with cost > v, and with cost ≥ v, in a descending array.
  // In a descending range, lower_bound with greater<> stops at the first element ≤ v and
  // upper_bound at the first element < v.
  const auto count_above = [&](cost_t v) {
    return static_cast<index_t>(
        std::lower_bound(sorted_desc.begin(), sorted_desc.end(), v, std::greater<>()) -
        sorted_desc.begin());
  };
  const auto count_at_least = [&](cost_t v) {
    return static_cast<index_t>(
        std::upper_bound(sorted_desc.begin(), sorted_desc.end(), v, std::greater<>()) -
        sorted_desc.begin());
  };
  const index_t big = count_above(capacity / 2); // items with 2w > C (w > ⌊C/2⌋)
  index_t best = big;
  // α runs over 0 and the distinct costs ≤ C/2 (the only values where L(α) can change).
  auto evaluate = [&](cost_t alpha) {
    const index_t j1 = count_above(capacity - alpha);
    const index_t j2_end = big;                   // J2 = items (C/2, C − α]: positions [j1, big)
    const index_t j3_end = count_at_least(alpha); // J3 = [α, C/2]: positions [big, j3_end)
    const cost_t sum_j2 = prefix[static_cast<std::size_t>(j2_end)] -
                          prefix[static_cast<std::size_t>(std::min(j1, j2_end))];
    const cost_t sum_j3 =
        prefix[static_cast<std::size_t>(j3_end)] - prefix[static_cast<std::size_t>(big)];
    const index_t n2 = j2_end - std::min(j1, j2_end);
    // Room the J2 bins leave: n2·C − Σ J2, computed in 128 bits (n2·C may exceed int64).
    const detail::int128 room = static_cast<detail::int128>(n2) * capacity - sum_j2;
    const detail::int128 excess = static_cast<detail::int128>(sum_j3) - room;
    index_t extra = 0;
    if (excess > 0) {
      extra = static_cast<index_t>((excess + capacity - 1) / capacity);
    }
    best = std::max(best, j1 + n2 + extra);
  };
  evaluate(0);
  for (auto i = static_cast<std::size_t>(n); i-- > static_cast<std::size_t>(big);) {
    if (i + 1 < static_cast<std::size_t>(n) && sorted_desc[i] == sorted_desc[i + 1]) {
      continue;
    }
    if (sorted_desc[i] > 0) {
      evaluate(sorted_desc[i]);
    }
  }
  return best;
}

namespace detail {

/// A counting test of the decision problem "k bins of capacity C" (costs sorted
/// descending): for every prefix G of the N largest items, a bin holds at most t of them,
/// t the largest count whose t smallest members of G fit in C. So N ≤ k·t, and at least
/// r = N − k(t − 1) bins hold exactly t members of G; together those hold at least the r·t
/// smallest members of G, whose sum must not exceed r·C. Returns true when C is proven too
/// small. Strong where L2 is weak: many items of similar size, a few per bin.
/// Complexity: O(n log n).
[[nodiscard]] inline bool counting_infeasible(std::span<const cost_t> sorted_desc,
                                              std::span<const cost_t> prefix, rank_t bins,
                                              cost_t capacity) {
  const auto n = sorted_desc.size();
  const auto k = static_cast<int128>(bins);
  // Σ of positions [a, b).
  const auto range = [&](std::size_t a, std::size_t b) { return prefix[b] - prefix[a]; };
  for (std::size_t count = 1; count <= n; ++count) {
    // Largest t ≤ count with the t smallest of the top `count` items fitting in C.
    std::size_t lo = 0;
    std::size_t hi = count;
    while (lo < hi) {
      const std::size_t mid = lo + (hi - lo + 1) / 2;
      if (range(count - mid, count) <= capacity) {
        lo = mid;
      } else {
        hi = mid - 1;
      }
    }
    const auto t = static_cast<int128>(lo);
    if (t == 0 || static_cast<int128>(count) > k * t) {
      return true;
    }
    const int128 r = static_cast<int128>(count) - k * (t - 1);
    if (r > 0) {
      const auto members = static_cast<std::size_t>(r * t);
      if (static_cast<int128>(range(count - members, count)) > r * capacity) {
        return true;
      }
    }
  }
  return false;
}

} // namespace detail

/// Raises a P||Cmax lower bound with bounds of the decision problem: if the items need more
/// than k bins of capacity C (bin_packing_l2) or fail the counting test, no k bins reach C
/// and the optimum exceeds C. Searches C in [`bound`, `upper`) by bisection; the result is
/// always one more than a capacity proven too small, or `bound` itself, so it stays a valid
/// lower bound.
/// Complexity: O(log(upper − bound) · n log n). Throws: nothing (callers validate).
[[nodiscard]] inline cost_t lift_lower_bound(std::span<const cost_t> sorted_desc, rank_t bins,
                                             cost_t bound, cost_t upper) {
  std::vector<cost_t> prefix(sorted_desc.size() + 1, 0);
  for (std::size_t i = 0; i < sorted_desc.size(); ++i) {
    prefix[i + 1] = prefix[i] + sorted_desc[i];
  }
  cost_t best = bound;
  cost_t lo = bound;
  cost_t hi = upper;
  while (lo < hi) {
    const cost_t mid = lo + (hi - lo) / 2;
    if (bin_packing_l2(sorted_desc, mid) > bins ||
        detail::counting_infeasible(sorted_desc, prefix, bins, mid)) {
      best = std::max(best, mid + 1);
      lo = mid + 1;
    } else {
      hi = mid;
    }
  }
  return best;
}

} // namespace orch
