// SPDX-License-Identifier: Apache-2.0
/// Quality of an assignment of item costs to bins: loads, the lower bound and the ratios.
#pragma once

#include <orch/config.hpp>
#include <orch/detail/primitives/checked.hpp>
#include <orch/types.hpp>

#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <limits>
#include <span>
#include <vector>

namespace orch {

namespace detail {

inline void check_bins(rank_t bins, const char* where) {
  if (bins <= 0) {
    throw_invalid_argument(where, ": number of bins must be positive, got ", bins);
  }
}

/// Σ costs and the largest cost (0 for no items), as total_cost checks them.
struct cost_sum {
  cost_t total = 0;
  cost_t largest = 0;
};

/// Σ costs and the largest cost, with a check for negative costs and overflow: the first
/// negative cost or the first prefix sum that overflows, in item order, throws.
///
/// Why two loops: checking every item costs a branch and an overflow test per item on the
/// hot path of every phase. Non-negative costs have increasing prefix sums, so when no cost
/// is negative and the total fits, nothing would have thrown; the first loop finds that
/// without a branch per item (OR of the costs for the sign, an unsigned sum that cannot wrap
/// while n · largest < 2^64) and only otherwise the checked walk runs to throw the same error.
[[nodiscard]] inline cost_sum sum_costs(std::span<const cost_t> costs, const char* where) {
  const std::size_t n = costs.size();
  // Four independent lanes (written out: compilers keep lane arrays in memory): the adds and
  // maxima of one item do not wait on the previous item's.
  std::uint64_t sum0 = 0, sum1 = 0, sum2 = 0, sum3 = 0;
  cost_t most0 = 0, most1 = 0, most2 = 0, most3 = 0;
  std::uint64_t bits = 0; // OR of every cost: its sign bit is set when one is negative
  const cost_t* c = costs.data();
  std::size_t i = 0;
  for (; i + 4 <= n; i += 4) {
    sum0 += static_cast<std::uint64_t>(c[i]);
    sum1 += static_cast<std::uint64_t>(c[i + 1]);
    sum2 += static_cast<std::uint64_t>(c[i + 2]);
    sum3 += static_cast<std::uint64_t>(c[i + 3]);
    bits |= static_cast<std::uint64_t>(c[i] | c[i + 1] | c[i + 2] | c[i + 3]);
    most0 = std::max(most0, c[i]);
    most1 = std::max(most1, c[i + 1]);
    most2 = std::max(most2, c[i + 2]);
    most3 = std::max(most3, c[i + 3]);
  }
  // The n % 4 items left, counted so that the compiler sees at most 3 (with `i < n`, GCC 12
  // at -O3 warned, after inlining, of an iteration 2^61 - 1 that would invoke UB).
  for (std::size_t left = n % 4; left > 0; --left, ++i) {
    sum0 += static_cast<std::uint64_t>(c[i]);
    bits |= static_cast<std::uint64_t>(c[i]);
    most0 = std::max(most0, c[i]);
  }
  const cost_t most = std::max(std::max(most0, most1), std::max(most2, most3));
  const std::uint64_t total = sum0 + sum1 + sum2 + sum3;
  constexpr auto max_total = static_cast<std::uint64_t>(std::numeric_limits<cost_t>::max());
  // n · largest < 2^64 bounds the true total, so the unsigned sum above did not wrap.
  const int128 bound = static_cast<int128>(n) * most;
  if ((bits >> 63) == 0 && (bound >> 64) == 0 && total <= max_total) {
    return {static_cast<cost_t>(total), most};
  }
  cost_t checked = 0;
  for (std::size_t j = 0; j < n; ++j) {
    if (costs[j] < 0) {
      throw_invalid_argument(where, ": item ", j, " has negative cost ", costs[j]);
    }
    checked = checked_add(checked, costs[j], where);
  }
  return {checked, most}; // huge costs whose total still fits
}

/// Σ costs with a check for negative costs and overflow.
[[nodiscard]] inline cost_t total_cost(std::span<const cost_t> costs, const char* where) {
  return sum_costs(costs, where).total;
}

} // namespace detail

/// max(ceil(Σc / k), max c): no assignment of the items to k bins has a smaller largest bin.
/// Complexity: O(n). Throws: orch::invalid_argument (k <= 0, negative cost), orch::overflow.
[[nodiscard]] inline cost_t lower_bound(std::span<const cost_t> costs, rank_t bins) {
  detail::check_bins(bins, "lower_bound");
  const auto sum = detail::sum_costs(costs, "lower_bound");
  return std::max(detail::ceil_div(sum.total, bins), sum.largest);
}

namespace detail {

/// bin_loads with the caller's name in the messages.
[[nodiscard]] inline std::vector<cost_t> checked_bin_loads(std::span<const cost_t> costs,
                                                           std::span<const rank_t> bin_of,
                                                           rank_t bins, const char* where) {
  check_bins(bins, where);
  if (costs.size() != bin_of.size()) {
    throw_invalid_argument(where, ": ", costs.size(), " costs but ", bin_of.size(),
                           " bin assignments");
  }
  std::vector<cost_t> loads(static_cast<std::size_t>(bins), 0);
  for (std::size_t i = 0; i < costs.size(); ++i) {
    if (bin_of[i] < 0 || bin_of[i] >= bins) {
      throw_invalid_argument(where, ": item ", i, " is assigned to bin ", bin_of[i],
                             " outside [0, ", bins, ")");
    }
    if (costs[i] < 0) {
      throw_invalid_argument(where, ": item ", i, " has negative cost ", costs[i]);
    }
    auto& load = loads[static_cast<std::size_t>(bin_of[i])];
    load = checked_add(load, costs[i], where);
  }
  return loads;
}

} // namespace detail

/// The load of every bin: Σ of the costs of the items assigned to it.
/// Complexity: O(n + k). Throws: orch::invalid_argument (sizes differ, a bin outside
/// [0, k), negative cost), orch::overflow.
[[nodiscard]] inline std::vector<cost_t> bin_loads(std::span<const cost_t> costs,
                                                   std::span<const rank_t> bin_of, rank_t bins) {
  return detail::checked_bin_loads(costs, bin_of, bins, "bin_loads");
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
/// Complexity: O(k). Throws: orch::invalid_argument (no bins, negative load), orch::overflow
/// (Σ loads).
[[nodiscard]] inline balance_metrics measure_loads(std::span<const cost_t> loads,
                                                   cost_t bound = 0) {
  if (loads.empty()) {
    throw_invalid_argument("measure_loads: no bins");
  }
  for (std::size_t b = 0; b < loads.size(); ++b) {
    if (loads[b] < 0) {
      throw_invalid_argument("measure_loads: bin ", b, " has negative load ", loads[b]);
    }
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
/// Complexity: O(n + k). Throws: as bin_loads (the messages name measure).
[[nodiscard]] inline balance_metrics measure(std::span<const cost_t> costs,
                                             std::span<const rank_t> bin_of, rank_t bins) {
  const auto loads = detail::checked_bin_loads(costs, bin_of, bins, "measure");
  // Each load fits, the total may not: checked here so that the message names measure.
  const auto sum = detail::sum_costs(costs, "measure");
  return measure_loads(loads, std::max(detail::ceil_div(sum.total, bins), sum.largest));
}

} // namespace orch
