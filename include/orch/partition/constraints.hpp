// SPDX-License-Identifier: Apache-2.0
/// Per-bin constraints (item counts, a second resource, speeds): validation, the rules the
/// algorithms read, the bounds they imply and results measured under them. The greedy that
/// meets them is orch/partition/constrained_lpt.hpp.
#pragma once

#include <orch/config.hpp>
#include <orch/detail/primitives/checked.hpp>
#include <orch/partition/result.hpp>
#include <orch/quality.hpp>
#include <orch/types.hpp>

#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <functional>
#include <span>
#include <string>
#include <utility>
#include <vector>

namespace orch {

/// Limits every bin must respect. Defaults: none.
struct bin_constraints {
  index_t max_items_per_bin = 0; ///< 0: unlimited
  bool equal_counts = false;     ///< item counts per bin differ by at most one
  /// Per-item second resource (e.g. activation bytes, tokens); items are never split.
  std::span<const cost_t> second_resource = {};
  cost_t second_capacity = 0; ///< per-bin capacity of the second resource (iff given)
};

namespace detail {

/// Constraints and speeds in the form the algorithms use.
struct bin_rules {
  index_t max_items = 0; ///< 0: unlimited
  index_t min_items = 0;
  std::span<const cost_t> resource; ///< empty: none
  cost_t resource_capacity = 0;
  std::span<const cost_t> speeds; ///< empty: every bin runs at common_speed
  cost_t common_speed = 1;        ///< the one speed when all bins share it (for times only)

  [[nodiscard]] bool has_counts() const noexcept { return max_items > 0 || min_items > 0; }
  [[nodiscard]] bool has_resource() const noexcept { return !resource.empty(); }
  [[nodiscard]] bool has_speeds() const noexcept { return !speeds.empty(); }
  [[nodiscard]] bool has_limits() const noexcept { return has_counts() || has_resource(); }
  [[nodiscard]] cost_t speed(rank_t b) const noexcept {
    return speeds.empty() ? 1 : speeds[static_cast<std::size_t>(b)];
  }
  [[nodiscard]] cost_t res(std::size_t item) const noexcept {
    return resource.empty() ? 0 : resource[item];
  }
  [[nodiscard]] bool count_ok(index_t count) const noexcept {
    return count >= min_items && (max_items == 0 || count <= max_items);
  }
};

/// Validates constraints and speeds for n items in k bins and converts them; throws
/// orch::invalid_argument for malformed ones and orch::infeasible for those no assignment
/// can meet, naming `where`, the item or bin, and the limit.
[[nodiscard]] inline bin_rules make_rules(std::size_t n, rank_t bins, const bin_constraints& c,
                                          std::span<const cost_t> speeds, const char* where) {
  bin_rules r;
  const auto items = static_cast<index_t>(n);
  const auto k = static_cast<index_t>(bins);
  if (c.max_items_per_bin < 0) {
    throw_invalid_argument(where, ": max_items_per_bin must be ≥ 0 (0 = unlimited), got ",
                           c.max_items_per_bin);
  }
  r.max_items = c.max_items_per_bin;
  if (r.max_items > 0 && static_cast<int128>(r.max_items) * k < items) {
    throw_infeasible(where, ": ", items, " items do not fit in ", k,
                     " bins of at most max_items_per_bin = ", r.max_items, " items");
  }
  if (c.equal_counts) {
    // max_items below ⌈n/k⌉ is caught above: it would hold fewer than n items in total.
    const index_t hi = ceil_div(items, k);
    r.max_items = hi;
    r.min_items = items / k;
  }
  if (c.second_resource.empty()) {
    if (c.second_capacity != 0 && n > 0) {
      throw_invalid_argument(where, ": second_capacity = ", c.second_capacity,
                             " given without second_resource");
    }
  } else {
    if (c.second_resource.size() != n) {
      throw_invalid_argument(where, ": second_resource has ", c.second_resource.size(),
                             " entries for ", n, " items");
    }
    if (c.second_capacity <= 0) {
      throw_invalid_argument(where, ": second_capacity must be positive with second_resource, got ",
                             c.second_capacity);
    }
    int128 total = 0;
    for (std::size_t i = 0; i < n; ++i) {
      const cost_t v = c.second_resource[i];
      if (v < 0) {
        throw_invalid_argument(where, ": item ", i, " has negative second resource ", v);
      }
      if (v > c.second_capacity) {
        throw_infeasible(where, ": item ", i, " needs ", v,
                         " of the second resource, above second_capacity = ", c.second_capacity);
      }
      total += v;
    }
    if (total > static_cast<int128>(c.second_capacity) * k) {
      throw_infeasible(where, ": the items need ", int128_string(total),
                       " of the second resource in total, above ", k,
                       " bins × second_capacity = ", c.second_capacity);
    }
    r.resource = c.second_resource;
    r.resource_capacity = c.second_capacity;
  }
  if (!speeds.empty()) {
    if (speeds.size() != static_cast<std::size_t>(bins)) {
      throw_invalid_argument(where, ": speeds has ", speeds.size(), " entries for ", bins, " bins");
    }
    cost_t speed_total = 0;
    for (std::size_t b = 0; b < speeds.size(); ++b) {
      if (speeds[b] <= 0) {
        throw_invalid_argument(where, ": bin ", b, " has speed ", speeds[b], " (must be positive)");
      }
      speed_total = checked_add(speed_total, speeds[b], where);
    }
    // All speeds equal: the plain problem (faster paths, same answers); times are then the
    // loads divided by that one speed.
    if (std::adjacent_find(speeds.begin(), speeds.end(), std::not_equal_to<>()) != speeds.end()) {
      r.speeds = speeds;
    } else {
      r.common_speed = speeds.front();
    }
  }
  return r;
}

/// (a + x) / sa < (b + y) / sb, exactly (cross-multiplied in 128 bits).
[[nodiscard]] inline bool time_less(cost_t a, cost_t sa, cost_t b, cost_t sb) noexcept {
  return static_cast<int128>(a) * sb < static_cast<int128>(b) * sa;
}

/// A lower bound under count limits: the bin that holds the largest item also holds at least
/// min_items − 1 others, each no smaller than the smallest remaining ones.
[[nodiscard]] inline cost_t cardinality_bound(std::span<const cost_t> sorted_desc,
                                              index_t min_items) {
  if (sorted_desc.empty() || min_items <= 1) {
    return 0;
  }
  cost_t bound = sorted_desc.front();
  const auto n = sorted_desc.size();
  for (std::size_t t = 0; t + 1 < static_cast<std::size_t>(min_items) && t + 1 < n; ++t) {
    bound += sorted_desc[n - 1 - t];
  }
  return bound;
}

/// Whether an assignment meets every rule (counts within [min, max], resource within cap).
/// Complexity: O(n + k).
[[nodiscard]] inline bool satisfies(std::span<const rank_t> bin_of, rank_t bins,
                                    const bin_rules& rules) {
  std::vector<index_t> count(static_cast<std::size_t>(bins), 0);
  std::vector<cost_t> res(static_cast<std::size_t>(bins), 0);
  for (std::size_t i = 0; i < bin_of.size(); ++i) {
    ++count[static_cast<std::size_t>(bin_of[i])];
    res[static_cast<std::size_t>(bin_of[i])] += rules.res(i);
  }
  for (std::size_t b = 0; b < count.size(); ++b) {
    if (!rules.count_ok(count[b]) || (rules.has_resource() && res[b] > rules.resource_capacity)) {
      return false;
    }
  }
  return true;
}

/// A lower bound on the largest time max_b load_b / speed_b, as the fraction num / den.
struct time_bound {
  cost_t num = 0;
  cost_t den = 1;
};

/// The bound of Q||Cmax (uniform machines): for every j ≤ k, the j largest items take at
/// least (their sum) / (the j largest speeds summed), and all items Σc / Σs. Speeds must be
/// non-empty and positive, their sum must fit (make_rules checks both).
/// Complexity: O(n log n + k log k).
[[nodiscard]] inline time_bound speed_time_bound(std::span<const cost_t> sorted_desc,
                                                 std::span<const cost_t> speeds) {
  std::vector<cost_t> s(speeds.begin(), speeds.end());
  std::sort(s.begin(), s.end(), std::greater<>());
  time_bound best{0, 1};
  cost_t p = 0;
  cost_t q = 0;
  cost_t total = 0;
  for (const cost_t c : sorted_desc) {
    total += c;
  }
  for (std::size_t j = 0; j < s.size(); ++j) {
    q += s[j];
    if (j + 1 == s.size()) {
      p = total; // with every machine counted, every item counts
    } else if (j < sorted_desc.size()) {
      p += sorted_desc[j];
    }
    if (time_less(best.num, best.den, p, q)) {
      best = {p, q};
    }
  }
  return best;
}

/// With all speeds equal to s ≠ 1, reports times as loads / s (assignments are unaffected).
inline void apply_common_speed(partition_result& r, const bin_rules& rules) {
  if (!rules.has_speeds() && rules.common_speed != 1) {
    const auto s = static_cast<double>(rules.common_speed);
    r.max_time = static_cast<double>(r.max_load) / s;
    r.time_lower_bound = static_cast<double>(r.lower_bound) / s;
  }
}

/// finish_result with the loads already known (callers that tracked them skip a pass over
/// the items); `simple_bound` is max(⌈Σ/k⌉, max cost), what orch::lower_bound returns.
[[nodiscard]] inline partition_result
finish_result_with_loads(std::vector<rank_t> bin_of, std::vector<cost_t> loads, cost_t simple_bound,
                         const bin_rules& rules, cost_t bound, time_bound tb,
                         std::string algorithm) {
  auto r = make_result_with_loads(std::move(bin_of), std::move(loads), simple_bound,
                                  std::move(algorithm));
  r.lower_bound = std::max(r.lower_bound, bound);
  r.time_lower_bound = static_cast<double>(r.lower_bound);
  r.proven_optimal = r.max_load <= r.lower_bound;
  if (rules.has_speeds()) {
    std::size_t worst = 0;
    for (std::size_t b = 1; b < r.loads.size(); ++b) {
      if (time_less(r.loads[worst], rules.speeds[worst], r.loads[b], rules.speeds[b])) {
        worst = b;
      }
    }
    r.max_time = static_cast<double>(r.loads[worst]) / static_cast<double>(rules.speeds[worst]);
    r.time_lower_bound = static_cast<double>(tb.num) / static_cast<double>(tb.den);
    r.proven_optimal = !time_less(tb.num, tb.den, r.loads[worst], rules.speeds[worst]);
  }
  return r;
}

/// Fills a result from an assignment under rules: loads, the bound in cost units, and with
/// speeds the time metrics, `proven_optimal` then meaning max time ≤ the time bound.
[[nodiscard]] inline partition_result finish_result(std::span<const cost_t> costs,
                                                    std::vector<rank_t> bin_of, rank_t bins,
                                                    const bin_rules& rules, cost_t bound,
                                                    time_bound tb, std::string algorithm) {
  auto loads = bin_loads(costs, bin_of, bins);
  return finish_result_with_loads(std::move(bin_of), std::move(loads), lower_bound(costs, bins),
                                  rules, bound, tb, std::move(algorithm));
}

} // namespace detail

} // namespace orch
