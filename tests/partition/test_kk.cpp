// SPDX-License-Identifier: Apache-2.0
#include <orch/partition/kk.hpp>

#include <support/brute_force.hpp>
#include <support/generators.hpp>
#include <support/partition_checks.hpp>

#include <doctest/doctest.h>

#include <cstdint>
#include <vector>

using orch::cost_t;
using orch::rank_t;

TEST_CASE("karmarkar_karp: the textbook two-way example where differencing is not optimal") {
  // 8,7,6,5,4: differences 8−7 = 1, 6−5 = 1, then 4−1 = 3, 3−1 = 2: loads 16 and 14, while
  // {8,7} / {6,5,4} gives 15.
  const std::vector<cost_t> c{8, 7, 6, 5, 4};
  const auto r = orch::karmarkar_karp(c, 2);
  orch::test::check_partition_invariants(c, 2, r);
  CHECK(r.max_load == 16);
  CHECK(r.algorithm == "kk");
}

TEST_CASE("karmarkar_karp: within 4/3 − 1/(3k) of the brute-force optimum, optimal when n ≤ k") {
  for (std::uint64_t seed = 1; seed <= 400; ++seed) {
    std::mt19937_64 rng(seed);
    const auto n = static_cast<std::size_t>(orch::test::uniform_int(rng, 0, 10));
    const auto k = static_cast<rank_t>(orch::test::uniform_int(rng, 1, 5));
    const auto c =
        orch::test::uniform_costs(seed * 31, n, seed % 4 == 0 ? 0 : 1, seed % 2 == 0 ? 50 : 100000);
    CAPTURE(seed);
    CAPTURE(n);
    CAPTURE(k);
    const auto r = orch::karmarkar_karp(c, k);
    orch::test::check_partition_invariants(c, k, r);
    const cost_t opt = orch::test::brute_force_optimum(c, k);
    CHECK(r.max_load >= opt);
    CHECK(3 * k * r.max_load <= (4 * k - 1) * opt);
    if (n <= static_cast<std::size_t>(k)) {
      CHECK(r.max_load == opt);
    }
  }
}

TEST_CASE("karmarkar_karp: deterministic, and beats LPT on few items per bin on average") {
  cost_t kk_total = 0;
  cost_t lpt_total = 0;
  for (std::uint64_t seed = 1; seed <= 30; ++seed) {
    const auto c = orch::test::uniform_costs(seed, 60, 1, 10000);
    const auto a = orch::karmarkar_karp(c, 20);
    const auto b = orch::karmarkar_karp(c, 20);
    CHECK(a.bin_of == b.bin_of);
    kk_total += a.max_load;
    lpt_total += orch::lpt(c, 20).max_load;
  }
  CHECK(kk_total < lpt_total);
}

TEST_CASE("karmarkar_karp: a spent budget falls back to LPT; bad input throws") {
  const auto c = orch::test::uniform_costs(5, 200, 1, 1000);
  orch::kk_options o;
  o.work_budget = 10;
  const auto r = orch::karmarkar_karp(c, 8, o);
  CHECK(r.algorithm == "lpt");
  CHECK(r.bin_of == orch::lpt(c, 8).bin_of);
  CHECK_THROWS_AS((void)orch::karmarkar_karp(c, 0), orch::invalid_argument);
  CHECK_THROWS_AS((void)orch::karmarkar_karp(std::vector<cost_t>{1, -1}, 2),
                  orch::invalid_argument);
}
