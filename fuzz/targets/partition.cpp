// SPDX-License-Identifier: Apache-2.0
// Fuzz target: orch::partition with fuzzed costs, bins and options. Every call either throws
// orch::error (invalid_argument, infeasible, overflow) or returns a result in which every item
// is placed once, the loads are the recomputed loads and sum to the total, max_load is the
// largest load and ≥ lower_bound ≥ max(⌈Σc/k⌉, max c), proven_optimal ⇒ max_load ==
// lower_bound (without speeds), every constraint holds, a brute-force optimum of small
// instances (k^n ≤ 20,000) is never beaten, never below the lower bound, and matched when
// proven, and a second call returns the same.
// orch::infeasible is accepted only when a constraint or groups were set.
#define ORCH_FUZZ_NAME "partition"
#include "../fuzz_input.hpp"

#include <orch/partition/partition.hpp>
#include <support/brute_force.hpp>

#include <algorithm>
#include <cstdint>
#include <limits>
#include <vector>

namespace {

using orch::cost_t;
using orch::index_t;
using orch::rank_t;

} // namespace

int orch_fuzz_partition(const std::uint8_t* data, std::size_t size) {
  orch::fuzz::input in(data, size);
  const auto n = static_cast<std::size_t>(in.uniform(0, 48));
  const auto bins =
      static_cast<rank_t>(in.uniform(0, 1) == 0 ? in.uniform(1, 12) : in.uniform(-1, 64));
  const int magnitude = static_cast<int>(in.uniform(0, 3));
  std::vector<cost_t> costs(n);
  for (auto& c : costs) {
    c = magnitude == 0   ? in.uniform(0, 20)
        : magnitude == 1 ? in.uniform(0, 100'000)
        : magnitude == 2 ? in.length(1'000'000)
                         : in.uniform(0, std::numeric_limits<cost_t>::max() / 4);
  }
  orch::partition_options o;
  o.algorithm = static_cast<orch::partition_algorithm>(in.uniform(0, 6));
  o.work_budget = in.uniform(0, 20'000);
  o.tolerance_ppm = in.uniform(0, 100);
  const auto flags = in.raw(1);
  std::vector<cost_t> second;
  std::vector<cost_t> speeds;
  std::vector<index_t> groups;
  if ((flags & 1U) != 0) {
    o.max_items_per_bin = static_cast<index_t>(in.uniform(0, 10));
  }
  o.equal_counts = (flags & 2U) != 0;
  if ((flags & 4U) != 0) {
    second.resize(in.uniform(0, 3) == 0 ? n + 1 : n);
    for (auto& s : second) {
      s = in.uniform(-1, 100);
    }
    o.second_resource = second;
    o.second_capacity = in.uniform(0, 600);
  }
  if ((flags & 8U) != 0 && bins > 0 && bins <= 64) {
    speeds.resize(static_cast<std::size_t>(bins));
    for (auto& s : speeds) {
      s = in.uniform(0, 5);
    }
    o.speeds = speeds;
  }
  if ((flags & 16U) != 0) {
    groups.resize(n);
    for (auto& g : groups) {
      g = static_cast<index_t>(in.uniform(-2, static_cast<std::int64_t>(n) / 2));
    }
    o.groups = groups;
  }
  const bool constrained =
      o.max_items_per_bin > 0 || o.equal_counts || !second.empty() || !groups.empty();

  orch::partition_result r;
  try {
    r = orch::partition(costs, bins, o);
  } catch (const orch::infeasible&) {
    ORCH_FUZZ_CHECK(constrained);
    return 0;
  } catch (const orch::invalid_argument&) {
    return 0;
  } catch (const orch::overflow&) {
    return 0;
  }
  ORCH_FUZZ_CHECK(bins > 0);
  const auto k = static_cast<std::size_t>(bins);
  ORCH_FUZZ_CHECK(r.bin_of.size() == n);
  ORCH_FUZZ_CHECK(r.loads.size() == k);
  std::vector<cost_t> loads(k, 0);
  std::vector<index_t> counts(k, 0);
  std::vector<cost_t> second_loads(k, 0);
  cost_t total = 0;
  cost_t largest = 0;
  for (std::size_t i = 0; i < n; ++i) {
    const rank_t b = r.bin_of[i];
    ORCH_FUZZ_CHECK(b >= 0 && static_cast<std::size_t>(b) < k);
    loads[static_cast<std::size_t>(b)] += costs[i];
    ++counts[static_cast<std::size_t>(b)];
    if (!second.empty()) {
      second_loads[static_cast<std::size_t>(b)] += second[i];
    }
    total += costs[i];
    largest = std::max(largest, costs[i]);
  }
  ORCH_FUZZ_CHECK(loads == r.loads);
  ORCH_FUZZ_CHECK(r.max_load == *std::max_element(loads.begin(), loads.end()));
  ORCH_FUZZ_CHECK(r.max_load >= r.lower_bound);
  if (speeds.empty()) {
    const auto kk = static_cast<cost_t>(bins);
    // ⌈total / k⌉ without total + k - 1, which overflows when the sum is near 2^63.
    const cost_t mean_up = total / kk + (total % kk != 0 ? 1 : 0);
    ORCH_FUZZ_CHECK(r.lower_bound >= std::max(mean_up, largest));
    ORCH_FUZZ_CHECK(!r.proven_optimal || r.max_load == r.lower_bound);
  }
  if (o.max_items_per_bin > 0) {
    for (const index_t c : counts) {
      ORCH_FUZZ_CHECK(c <= o.max_items_per_bin);
    }
  }
  if (o.equal_counts) {
    const auto [lo, hi] = std::minmax_element(counts.begin(), counts.end());
    ORCH_FUZZ_CHECK(*hi - *lo <= 1);
  }
  if (!second.empty()) {
    for (const cost_t s : second_loads) {
      ORCH_FUZZ_CHECK(s <= o.second_capacity);
    }
  }
  for (std::size_t i = 0; i < groups.size(); ++i) {
    for (std::size_t j = 0; j < i; ++j) {
      if (groups[i] >= 0 && groups[i] == groups[j]) {
        ORCH_FUZZ_CHECK(r.bin_of[i] == r.bin_of[j]);
      }
    }
  }
  // Brute force where k^n ≤ 20,000 assignments (n ≤ 14 items in 2 bins, 9 in 3, 7 in 4).
  std::size_t combos = 1;
  for (std::size_t i = 0; i < n && combos <= 20'000; ++i) {
    combos *= static_cast<std::size_t>(bins);
  }
  if (!constrained && speeds.empty() && combos <= 20'000) {
    const cost_t opt = orch::test::brute_force_optimum(costs, bins);
    ORCH_FUZZ_CHECK(r.max_load >= opt);
    ORCH_FUZZ_CHECK(r.lower_bound <= opt);
    ORCH_FUZZ_CHECK(!r.proven_optimal || r.max_load == opt);
  }
  const auto again = orch::partition(costs, bins, o);
  ORCH_FUZZ_CHECK(again.bin_of == r.bin_of && again.loads == r.loads &&
                  again.lower_bound == r.lower_bound && again.proven_optimal == r.proven_optimal);
  return 0;
}
