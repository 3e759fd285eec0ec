// SPDX-License-Identifier: Apache-2.0
// Invariants every partition_result must satisfy, checked with doctest assertions.
#pragma once

#include <orch/partition/result.hpp>
#include <orch/quality.hpp>

#include <doctest/doctest.h>

#include <algorithm>
#include <span>

namespace orch::test {

/// Each item in exactly one bin in [0, k), loads recomputed equal the reported ones, max and
/// lower bound consistent, proven_optimal never claimed above the bound.
inline void check_partition_invariants(std::span<const cost_t> costs, rank_t bins,
                                       const partition_result& r) {
  REQUIRE(r.bin_of.size() == costs.size());
  REQUIRE(r.loads.size() == static_cast<std::size_t>(bins));
  for (const auto b : r.bin_of) {
    REQUIRE(b >= 0);
    REQUIRE(b < bins);
  }
  const auto loads = bin_loads(costs, r.bin_of, bins);
  CHECK(loads == r.loads);
  cost_t total = 0;
  for (const auto c : costs) {
    total += c;
  }
  cost_t load_total = 0;
  for (const auto l : loads) {
    load_total += l;
  }
  CHECK(load_total == total);
  CHECK(r.max_load == *std::max_element(loads.begin(), loads.end()));
  CHECK(r.lower_bound >= lower_bound(costs, bins));
  CHECK(r.max_load >= r.lower_bound);
  if (r.max_load == r.lower_bound) {
    CHECK(r.proven_optimal);
  }
}

} // namespace orch::test
