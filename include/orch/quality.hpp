// SPDX-License-Identifier: Apache-2.0
/// Quality of an assignment of item costs to bins: loads, the lower bound and the ratios.
#pragma once

#include <orch/config.hpp>
#include <orch/detail/checked.hpp>
#include <orch/types.hpp>

#include <algorithm>
#include <cstddef>
#include <span>
#include <vector>

namespace orch {

namespace detail {

inline void check_bins(rank_t bins, const char* where) {
  if (bins <= 0) {
    throw_invalid_argument(where, ": number of bins must be positive, got ", bins);
  }
}

/// Σ costs with a check for negative costs and overflow.
[[nodiscard]] inline cost_t total_cost(std::span<const cost_t> costs, const char* where) {
  cost_t total = 0;
  for (std::size_t i = 0; i < costs.size(); ++i) {
    if (costs[i] < 0) {
      throw_invalid_argument(where, ": item ", i, " has negative cost ", costs[i]);
    }
    total = checked_add(total, costs[i], where);
  }
  return total;
}

} // namespace detail

/// max(ceil(Σc / k), max c): no assignment of the items to k bins has a smaller largest bin.
/// Complexity: O(n). Throws: orch::invalid_argument (k <= 0, negative cost), orch::overflow.
[[nodiscard]] inline cost_t lower_bound(std::span<const cost_t> costs, rank_t bins) {
  detail::check_bins(bins, "lower_bound");
  const cost_t total = detail::total_cost(costs, "lower_bound");
  const cost_t largest = costs.empty() ? 0 : *std::max_element(costs.begin(), costs.end());
  return std::max(detail::ceil_div(total, bins), largest);
}

/// The load of every bin: Σ of the costs of the items assigned to it.
/// Complexity: O(n + k). Throws: orch::invalid_argument (sizes differ, a bin outside
/// [0, k), negative cost), orch::overflow.
[[nodiscard]] inline std::vector<cost_t> bin_loads(std::span<const cost_t> costs,
                                                   std::span<const rank_t> bin_of, rank_t bins) {
  detail::check_bins(bins, "bin_loads");
  if (costs.size() != bin_of.size()) {
    throw_invalid_argument("bin_loads: ", costs.size(), " costs but ", bin_of.size(),
                           " bin assignments");
  }
  std::vector<cost_t> loads(static_cast<std::size_t>(bins), 0);
  for (std::size_t i = 0; i < costs.size(); ++i) {
    if (bin_of[i] < 0 || bin_of[i] >= bins) {
      throw_invalid_argument("bin_loads: item ", i, " is assigned to bin ", bin_of[i],
                             " outside [0, ", bins, ")");
    }
    if (costs[i] < 0) {
      throw_invalid_argument("bin_loads: item ", i, " has negative cost ", costs[i]);
    }
    auto& load = loads[static_cast<std::size_t>(bin_of[i])];
    load = detail::checked_add(load, costs[i], "bin_loads");
  }
  return loads;
}

/// Balance of a set of bin loads. Ratios are reporting only: nothing decides a plan on them.
struct balance_metrics {
  cost_t max_load = 0;    ///< the largest bin: the phase's time
  cost_t total = 0;       ///< Σ loads
  cost_t lower_bound = 0; ///< max(ceil(Σc/k), max c) when item costs are known, else ceil(Σ/k)
  double mean_load = 0.0; ///< Σ / k
  double max_over_mean = 1.0;        ///< 1 when perfectly balanced (and when everything is 0)
  double max_over_lower_bound = 1.0; ///< 1 when provably optimal
  double idle_fraction = 0.0;        ///< 1 − mean/max: share of rank-time spent waiting
};

/// Metrics of `loads` against an explicit lower bound (pass 0 to use ceil(Σ/k)).
/// Complexity: O(k). Throws: orch::invalid_argument (no bins, negative load).
[[nodiscard]] inline balance_metrics measure_loads(std::span<const cost_t> loads,
                                                   cost_t bound = 0) {
  if (loads.empty()) {
    throw_invalid_argument("measure_loads: no bins");
  }
  balance_metrics m;
  m.total = detail::total_cost(loads, "measure_loads");
  m.max_load = *std::max_element(loads.begin(), loads.end());
  const auto k = static_cast<cost_t>(loads.size());
  m.lower_bound = std::max(bound, detail::ceil_div(m.total, k));
  m.mean_load = static_cast<double>(m.total) / static_cast<double>(k);
  if (m.max_load > 0) {
    m.max_over_mean = static_cast<double>(m.max_load) / m.mean_load;
    m.max_over_lower_bound = static_cast<double>(m.max_load) / static_cast<double>(m.lower_bound);
    m.idle_fraction = 1.0 - m.mean_load / static_cast<double>(m.max_load);
  }
  return m;
}

/// Metrics of an assignment: loads from `bin_of`, lower bound from the item costs.
/// Complexity: O(n + k). Throws: as bin_loads.
[[nodiscard]] inline balance_metrics measure(std::span<const cost_t> costs,
                                             std::span<const rank_t> bin_of, rank_t bins) {
  const auto loads = bin_loads(costs, bin_of, bins);
  return measure_loads(loads, lower_bound(costs, bins));
}

} // namespace orch
