// SPDX-License-Identifier: Apache-2.0
#include <orch/partition/bounds.hpp>

#include <support/brute_force.hpp>
#include <support/generators.hpp>

#include <doctest/doctest.h>

#include <cstdint>
#include <vector>

using orch::cost_t;
using orch::index_t;
using orch::rank_t;

namespace {

/// Fewest bins of `capacity` that hold the items (brute force through P||Cmax optima).
index_t min_bins(const std::vector<cost_t>& c, cost_t capacity) {
  for (rank_t k = 1;; ++k) {
    if (orch::test::brute_force_optimum(c, k) <= capacity) {
      return k;
    }
  }
}

} // namespace

TEST_CASE("pcmax_lower_bound: valid, and stronger than Σ/k and p_max where it should be") {
  // k = 3, costs 5,5,5,5: two items share a bin, so 10 > ⌈20/3⌉ = 7.
  CHECK(orch::pcmax_lower_bound(std::vector<cost_t>{5, 5, 5, 5}, 3) == 10);
  // j = 2: among the 2k + 1 = 5 largest of 4,4,4,4,4 (k = 2) a bin holds three: 12.
  CHECK(orch::pcmax_lower_bound(std::vector<cost_t>{4, 4, 4, 4, 4}, 2) == 12);
  CHECK(orch::pcmax_lower_bound(std::vector<cost_t>{}, 4) == 0);
  for (std::uint64_t seed = 1; seed <= 300; ++seed) {
    std::mt19937_64 rng(seed);
    const auto n = static_cast<std::size_t>(orch::test::uniform_int(rng, 0, 10));
    const auto k = static_cast<rank_t>(orch::test::uniform_int(rng, 1, 4));
    const auto c = orch::test::uniform_costs(seed * 13, n, 0, seed % 2 == 0 ? 20 : 1000);
    CAPTURE(seed);
    const cost_t opt = orch::test::brute_force_optimum(c, k);
    const cost_t lb = orch::pcmax_lower_bound(c, k);
    CHECK(lb <= opt);
    CHECK(lb >= orch::lower_bound(c, k));
    const auto sorted = orch::detail::sorted_desc(c);
    const cost_t lifted = orch::lift_lower_bound(sorted, k, lb, opt);
    CHECK(lifted >= lb);
    CHECK(lifted <= opt);
  }
}

TEST_CASE("bin_packing_l2: never more bins than needed") {
  for (std::uint64_t seed = 1; seed <= 200; ++seed) {
    std::mt19937_64 rng(seed);
    const auto n = static_cast<std::size_t>(orch::test::uniform_int(rng, 1, 9));
    const auto c = orch::test::uniform_costs(seed * 7, n, 1, 100);
    const auto sorted = orch::detail::sorted_desc(c);
    const cost_t capacity = sorted.front() + orch::test::uniform_int(rng, 0, 120);
    CAPTURE(seed);
    CAPTURE(capacity);
    CHECK(orch::bin_packing_l2(sorted, capacity) <= min_bins(c, capacity));
  }
  // An item above the capacity: more bins than items.
  const std::vector<cost_t> big{10, 3};
  CHECK(orch::bin_packing_l2(big, 9) > 2);
  // Three items of 6 in bins of 10: each needs its own bin (L2 sees it, Σ/C = 2 does not).
  CHECK(orch::bin_packing_l2(std::vector<cost_t>{6, 6, 6}, 10) == 3);
}

TEST_CASE("counting test: proves what L2 cannot on many similar items") {
  // 10 items of 9 and k = 3: some bin holds 4 of them, 36 > ⌈90/3⌉ = 30. Capacity 35 fails
  // the counting test; 36 does not.
  const std::vector<cost_t> c(10, 9);
  const auto sorted = orch::detail::sorted_desc(c);
  std::vector<cost_t> prefix(sorted.size() + 1, 0);
  for (std::size_t i = 0; i < sorted.size(); ++i) {
    prefix[i + 1] = prefix[i] + sorted[i];
  }
  CHECK(orch::detail::counting_infeasible(sorted, prefix, 3, 35));
  CHECK_FALSE(orch::detail::counting_infeasible(sorted, prefix, 3, 36));
  CHECK(orch::lift_lower_bound(sorted, 3, orch::lower_bound(c, 3), 100) == 36);
}
