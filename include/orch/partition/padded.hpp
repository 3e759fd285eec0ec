// SPDX-License-Identifier: Apache-2.0
/// Padded batches: exact minimisation of the largest count × longest-item per bin.
#pragma once

#include <orch/config.hpp>
#include <orch/detail/primitives/checked.hpp>
#include <orch/partition/order.hpp>
#include <orch/quality.hpp>
#include <orch/types.hpp>

#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <span>
#include <vector>

namespace orch {

/// An assignment of items to bins under the padded cost: a bin of c items whose longest is
/// L costs c · L (every item is padded to L).
struct padded_result {
  std::vector<rank_t> bin_of;    ///< bin of each item
  std::vector<index_t> counts;   ///< items per bin
  std::vector<length_t> longest; ///< longest item per bin (0 when empty)
  std::vector<cost_t> padded;    ///< count × longest per bin
  cost_t max_padded = 0;         ///< the objective: the largest padded bin
  bool proven_optimal = true;    ///< always: the algorithm is exact
};

namespace detail {

/// Bins as contiguous runs of the longest-first order: bin b starts at the longest item not
/// yet placed and takes as many items as the value v allows (⌊v / L⌋, or with equal counts
/// q or q + 1 items, the extra ones as early as v allows). Returns the run starts (k + 1
/// entries) or an empty vector when v is too small.
[[nodiscard]] inline std::vector<std::size_t>
padded_runs(std::span<const length_t> sorted_desc, rank_t bins, bool equal_counts, cost_t v) {
  const std::size_t n = sorted_desc.size();
  const auto k = static_cast<std::size_t>(bins);
  std::vector<std::size_t> start(k + 1, n);
  std::size_t pos = 0;
  const std::size_t q = n / k;
  std::size_t extras = n % k;
  for (std::size_t b = 0; b < k; ++b) {
    start[b] = pos;
    const cost_t len = pos < n ? sorted_desc[pos] : 0;
    std::size_t take = 0;
    if (equal_counts) {
      // Taking the extra item as early as possible only shortens every later run's longest.
      const auto fits = [&](std::size_t c) {
        return len == 0 || static_cast<int128>(c) * len <= v;
      };
      if (extras > 0 && fits(q + 1)) {
        take = q + 1;
        --extras;
      } else if (fits(q)) {
        take = q;
      } else {
        return {};
      }
    } else {
      take =
          len == 0
              ? n - pos
              : static_cast<std::size_t>(std::min<cost_t>(v / len, static_cast<cost_t>(n - pos)));
    }
    pos = std::min(n, pos + take);
  }
  start[k] = pos;
  if (pos < n || (equal_counts && extras > 0)) {
    return {};
  }
  return start;
}

} // namespace detail

/// Minimises the largest padded bin, max over bins of (item count × longest item). Exact:
/// some optimal solution puts contiguous runs of the longest-first order into bins (swapping
/// a shorter item of a bin with a longer item of a bin whose longest is longer never raises
/// either bin's longest), and for a value v the greedy that gives each run ⌊v / L⌋ items
/// decides feasibility; bisection over v finds the optimum. With `equal_counts`, counts are
/// ⌊n/k⌋ or ⌈n/k⌉ and the runs take their extra item as early as v allows.
///
/// Complexity: O(n log n + k · log(n · L_max)).
/// Guarantee: optimal (proven_optimal is always true).
/// Determinism: ties in length by item index.
/// Throws: orch::invalid_argument (k ≤ 0, a negative length), orch::overflow (⌈n/k⌉ · L_max
/// does not fit in cost_t).
[[nodiscard]] inline padded_result padded_partition(std::span<const length_t> lengths, rank_t bins,
                                                    bool equal_counts = false) {
  detail::check_bins(bins, "padded_partition");
  for (std::size_t i = 0; i < lengths.size(); ++i) {
    if (lengths[i] < 0) {
      throw_invalid_argument("padded_partition: item ", i, " has negative length ", lengths[i]);
    }
  }
  const auto order = detail::order_desc(lengths);
  std::vector<length_t> sorted(lengths.size());
  for (std::size_t p = 0; p < order.size(); ++p) {
    sorted[p] = lengths[order[p]];
  }
  const std::size_t n = lengths.size();
  const auto k = static_cast<std::size_t>(bins);
  const length_t longest = n == 0 ? 0 : sorted.front();
  // ⌈n/k⌉ items per bin (runs of the sorted order) is always feasible.
  cost_t hi =
      detail::checked_mul(static_cast<cost_t>((n + k - 1) / k), longest, "padded_partition");
  cost_t lo = longest;
  while (lo < hi) {
    const cost_t mid = lo + (hi - lo) / 2;
    if (detail::padded_runs(sorted, bins, equal_counts, mid).empty()) {
      lo = mid + 1;
    } else {
      hi = mid;
    }
  }
  const auto start = detail::padded_runs(sorted, bins, equal_counts, lo);
  ORCH_ASSERT(!start.empty());
  padded_result r;
  r.bin_of.assign(n, 0);
  r.counts.assign(k, 0);
  r.longest.assign(k, 0);
  r.padded.assign(k, 0);
  for (std::size_t b = 0; b < k; ++b) {
    for (std::size_t p = start[b]; p < start[b + 1]; ++p) {
      r.bin_of[order[p]] = static_cast<rank_t>(b);
    }
    r.counts[b] = static_cast<index_t>(start[b + 1] - start[b]);
    r.longest[b] = r.counts[b] > 0 ? sorted[start[b]] : 0;
    r.padded[b] = r.counts[b] * r.longest[b];
    r.max_padded = std::max(r.max_padded, r.padded[b]);
  }
  return r;
}

} // namespace orch
