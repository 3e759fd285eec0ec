// SPDX-License-Identifier: Apache-2.0
/// The result every partitioner returns: the bin of each item, the loads and the bound.
#pragma once

#include <orch/config.hpp>
#include <orch/quality.hpp>
#include <orch/types.hpp>

#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <span>
#include <string>
#include <utility>
#include <vector>

namespace orch {

/// An assignment of items to k bins with its quality. `bin_of[i]` is the bin of item i.
/// `lower_bound` is max(ceil(Σc/k), max c) (or a stronger bound the algorithm proved);
/// `proven_optimal` is true when max_load equals a proven lower bound or an exact search
/// finished.
struct partition_result {
  std::vector<rank_t> bin_of;
  std::vector<cost_t> loads;
  cost_t max_load = 0;
  cost_t lower_bound = 0;
  bool proven_optimal = false;
  std::string algorithm; ///< which algorithm produced the assignment ("lpt", "kk", ...)
  std::int64_t work = 0; ///< work units spent (search nodes, evaluated moves); 0 for greedy ones
  /// With per-bin speeds: max over bins of load / speed (reporting only; decisions compare the
  /// fractions exactly). Without speeds: equal to max_load.
  double max_time = 0.0;
  /// With per-bin speeds: a proven lower bound on max_time; `proven_optimal` then refers to
  /// max_time. Without speeds: equal to lower_bound.
  double time_lower_bound = 0.0;

  /// max_load / lower_bound (1 when both are 0). Reporting only.
  [[nodiscard]] double ratio_to_lower_bound() const noexcept {
    return lower_bound == 0 ? 1.0
                            : static_cast<double>(max_load) / static_cast<double>(lower_bound);
  }
};

namespace detail {

/// Validates the common partitioner inputs: k > 0, costs non-negative, Σ fits.
inline void check_partition_input(std::span<const cost_t> costs, rank_t bins, const char* where) {
  check_bins(bins, where);
  static_cast<void>(total_cost(costs, where));
}

/// Fills loads, max_load, lower_bound and proven_optimal from bin_of.
[[nodiscard]] inline partition_result make_result(std::span<const cost_t> costs,
                                                  std::vector<rank_t> bin_of, rank_t bins,
                                                  std::string algorithm) {
  partition_result r;
  r.loads = bin_loads(costs, bin_of, bins);
  r.bin_of = std::move(bin_of);
  r.max_load = *std::max_element(r.loads.begin(), r.loads.end());
  r.lower_bound = lower_bound(costs, bins);
  r.proven_optimal = r.max_load == r.lower_bound;
  r.algorithm = std::move(algorithm);
  r.max_time = static_cast<double>(r.max_load);
  r.time_lower_bound = static_cast<double>(r.lower_bound);
  return r;
}

/// Builds a result from an assignment whose loads are already known (skips recounting).
[[nodiscard]] inline partition_result make_result_with_loads(std::vector<rank_t> bin_of,
                                                             std::vector<cost_t> loads,
                                                             cost_t bound, std::string algorithm) {
  partition_result r;
  r.bin_of = std::move(bin_of);
  r.loads = std::move(loads);
  r.max_load = r.loads.empty() ? 0 : *std::max_element(r.loads.begin(), r.loads.end());
  r.lower_bound = bound;
  r.proven_optimal = r.max_load <= r.lower_bound;
  r.algorithm = std::move(algorithm);
  r.max_time = static_cast<double>(r.max_load);
  r.time_lower_bound = static_cast<double>(r.lower_bound);
  return r;
}

} // namespace detail

/// The result orch's partitioners return, for an assignment made by any other balancer:
/// loads, largest load, the lower bound max(⌈Σc/k⌉, max c), proven_optimal (the largest load
/// equals that bound) and `algorithm` as given. Lets a trainer's own balancer, or a peer
/// re-implemented for comparison, be measured like orch::partition.
/// Complexity: O(n + k).
/// Throws: orch::invalid_argument (k ≤ 0, sizes differ, a bin outside [0, k), a negative
/// cost; the message names `algorithm`), orch::overflow (a load or Σ costs past 2^63 − 1).
[[nodiscard]] inline partition_result make_partition_result(std::span<const cost_t> costs,
                                                            std::vector<rank_t> bin_of, rank_t bins,
                                                            std::string algorithm) {
  // Two passes, as make_result: the loads (checked), then Σ and the largest cost (checked).
  const std::string where = algorithm.empty() ? "make_partition_result" : algorithm;
  auto loads = detail::checked_bin_loads(costs, bin_of, bins, where.c_str());
  const auto sum = detail::sum_costs(costs, where.c_str());
  const cost_t bound = std::max(detail::ceil_div(sum.total, bins), sum.largest);
  return detail::make_result_with_loads(std::move(bin_of), std::move(loads), bound,
                                        std::move(algorithm));
}

} // namespace orch
