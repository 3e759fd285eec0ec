// SPDX-License-Identifier: Apache-2.0
/// Longest-processing-time-first (LPT) greedy partitioning of item costs into k bins.
#pragma once

#include <orch/config.hpp>
#include <orch/detail/radix_sort.hpp>
#include <orch/partition/result.hpp>
#include <orch/types.hpp>

#include <cstddef>
#include <cstdint>
#include <span>
#include <vector>

namespace orch {

namespace detail {

/// A binary min-heap of bins keyed by (load, bin index). LPT only ever replaces the top, so
/// one sift-down per item is all the maintenance it needs.
class bin_heap {
public:
  explicit bin_heap(rank_t bins) : load_(static_cast<std::size_t>(bins), 0), bin_(load_.size()) {
    // All loads are 0, so bins in index order already form a valid heap.
    for (std::size_t i = 0; i < bin_.size(); ++i) {
      bin_[i] = static_cast<rank_t>(i);
    }
  }

  [[nodiscard]] rank_t top_bin() const noexcept { return bin_[0]; }
  [[nodiscard]] cost_t top_load() const noexcept { return load_[0]; }

  /// Sets the top bin's load to `load` (not smaller than before) and restores the heap.
  void replace_top_load(cost_t load) noexcept {
    const std::size_t n = load_.size();
    const rank_t bin = bin_[0];
    std::size_t hole = 0;
    for (;;) {
      std::size_t child = 2 * hole + 1;
      if (child >= n) {
        break;
      }
      if (child + 1 < n && less(child + 1, child)) {
        ++child;
      }
      if (!(load_[child] < load || (load_[child] == load && bin_[child] < bin))) {
        break;
      }
      load_[hole] = load_[child];
      bin_[hole] = bin_[child];
      hole = child;
    }
    load_[hole] = load;
    bin_[hole] = bin;
  }

private:
  [[nodiscard]] bool less(std::size_t a, std::size_t b) const noexcept {
    return load_[a] < load_[b] || (load_[a] == load_[b] && bin_[a] < bin_[b]);
  }

  std::vector<cost_t> load_; // structure of arrays: the sift-down reads loads first
  std::vector<rank_t> bin_;
};

} // namespace detail

/// LPT: items in order of cost descending (ties: lower index first), each to the currently
/// least-loaded bin (ties: lower bin index).
///
/// Complexity: O(n · b + n log k), b the significant bytes of the largest cost (radix sort).
/// Guarantee: max load ≤ (4/3 − 1/(3k)) · optimum (Graham 1969); optimal when n ≤ k.
/// Determinism: the result depends only on the costs and k (total tie-breaks above).
/// Throws: orch::invalid_argument (k ≤ 0, a negative cost), orch::overflow (Σ costs).
[[nodiscard]] inline partition_result lpt(std::span<const cost_t> costs, rank_t bins) {
  detail::check_partition_input(costs, bins, "lpt");
  std::vector<rank_t> bin_of(costs.size(), 0);
  const auto order = detail::order_by_cost_desc(costs);
  detail::bin_heap heap(bins);
  for (const std::uint32_t item : order) {
    bin_of[item] = heap.top_bin();
    // Cannot overflow: every load is at most Σ costs, which check_partition_input bounded.
    heap.replace_top_load(heap.top_load() + costs[item]);
  }
  return detail::make_result(costs, std::move(bin_of), bins, "lpt");
}

} // namespace orch
