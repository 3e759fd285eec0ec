// SPDX-License-Identifier: Apache-2.0
#include <orch/partition/subset_sum.hpp>

#include <support/brute_force.hpp>
#include <support/generators.hpp>
#include <support/partition_checks.hpp>

#include <doctest/doctest.h>

#include <cstdint>
#include <vector>

using orch::cost_t;
using orch::rank_t;

TEST_CASE("subset_sum_partition: exact subset sums make two bins optimal") {
  // With k = 2 the first bin takes the largest item plus the best subset within C − x; with an
  // exact table (room ≤ grid) the bisection lands on the optimum.
  for (std::uint64_t seed = 1; seed <= 200; ++seed) {
    std::mt19937_64 rng(seed);
    const auto n = static_cast<std::size_t>(orch::test::uniform_int(rng, 1, 11));
    const auto c = orch::test::uniform_costs(seed * 3, n, 0, 200);
    CAPTURE(seed);
    orch::subset_sum_options o;
    o.grid = 4096; // above any room here: no scaling
    const auto r = orch::subset_sum_partition(c, 2, o);
    orch::test::check_partition_invariants(c, 2, r);
    CHECK(r.max_load == orch::test::brute_force_optimum(c, 2));
  }
}

TEST_CASE("subset_sum_partition: never worse than LPT, valid with a coarse grid") {
  for (std::uint64_t seed = 1; seed <= 150; ++seed) {
    std::mt19937_64 rng(seed);
    const auto n = static_cast<std::size_t>(orch::test::uniform_int(rng, 0, 60));
    const auto k = static_cast<rank_t>(orch::test::uniform_int(rng, 1, 12));
    const auto c = orch::test::uniform_costs(seed * 11, n, 1, seed % 2 == 0 ? 100 : 1'000'000);
    CAPTURE(seed);
    orch::subset_sum_options o;
    o.grid = 64; // forces scaling on the large costs
    const auto r = orch::subset_sum_partition(c, k, o);
    orch::test::check_partition_invariants(c, k, r);
    CHECK(r.max_load <= orch::lpt(c, k).max_load);
    CHECK(orch::subset_sum_partition(c, k, o).bin_of == r.bin_of);
  }
}

TEST_CASE("subset_sum_partition: zero costs, a spent budget, bad input") {
  const std::vector<cost_t> c{0, 5, 0, 5, 10};
  const auto r = orch::subset_sum_partition(c, 2);
  orch::test::check_partition_invariants(c, 2, r);
  CHECK(r.max_load == 10);
  orch::subset_sum_options o;
  o.work_budget = 0;
  const auto big = orch::test::uniform_costs(3, 100, 1, 1000);
  const auto spent = orch::subset_sum_partition(big, 7, o);
  CHECK(spent.bin_of == orch::lpt(big, 7).bin_of);
  CHECK_THROWS_AS((void)orch::subset_sum_partition(c, 0), orch::invalid_argument);
}
