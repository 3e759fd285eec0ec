// SPDX-License-Identifier: Apache-2.0
#include <orch/partition/exact.hpp>

#include <support/brute_force.hpp>
#include <support/generators.hpp>
#include <support/partition_checks.hpp>

#include <doctest/doctest.h>

#include <cstdint>
#include <vector>

using orch::cost_t;
using orch::rank_t;

TEST_CASE("exact: equals the brute-force optimum and proves it") {
  for (std::uint64_t seed = 1; seed <= 600; ++seed) {
    std::mt19937_64 rng(seed);
    const auto n = static_cast<std::size_t>(orch::test::uniform_int(rng, 0, 11));
    const auto k = static_cast<rank_t>(orch::test::uniform_int(rng, 1, 5));
    const cost_t hi = seed % 3 == 0 ? 10 : (seed % 3 == 1 ? 100 : 10000);
    const auto c = orch::test::uniform_costs(seed * 31, n, seed % 5 == 0 ? 0 : 1, hi);
    CAPTURE(seed);
    CAPTURE(n);
    CAPTURE(k);
    const auto r = orch::exact(c, k);
    orch::test::check_partition_invariants(c, k, r);
    const cost_t opt = orch::test::brute_force_optimum(c, k);
    CHECK(r.max_load == opt);
    CHECK(r.proven_optimal);
    CHECK(r.lower_bound == opt);
  }
}

TEST_CASE("exact: zero-cost items beside equal costs do not hide a feasible capacity") {
  // The instance the placement fuzzer found: with the zero-cost item, bin completion once
  // skipped every completion of a bin (adding the free zero "dominated" a completion, and
  // that one was "dominated" by trading a member and the zero for an equal free item: the
  // first completion again), proved 311,137 infeasible and reported 311,314 as optimal.
  const std::vector<cost_t> c{77048, 77048, 0,     77048, 99498, 80347, 96310,
                              51193, 77048, 76871, 94444, 85153, 37791};
  const auto r = orch::exact(c, 3);
  orch::test::check_partition_invariants(c, 3, r);
  CHECK(r.max_load == 311137); // {80347, 51193, 94444, 85153}, the rest 310,647 and 308,015
  CHECK(r.proven_optimal);
  CHECK(r.lower_bound == 311137);
  // Few distinct values, zeros among them: the brute-force optimum, proven.
  for (std::uint64_t seed = 1; seed <= 400; ++seed) {
    std::mt19937_64 rng(seed);
    const auto n = static_cast<std::size_t>(orch::test::uniform_int(rng, 3, 10));
    const auto k = static_cast<rank_t>(orch::test::uniform_int(rng, 2, 4));
    std::vector<cost_t> values{0};
    for (int v = 0; v < 3; ++v) {
      values.push_back(orch::test::uniform_int(rng, 1, 30));
    }
    std::vector<cost_t> costs(n);
    for (auto& x : costs) {
      x = values[static_cast<std::size_t>(orch::test::uniform_int(rng, 0, 3))];
    }
    CAPTURE(seed);
    CAPTURE(costs);
    const auto e = orch::exact(costs, k);
    const cost_t opt = orch::test::brute_force_optimum(costs, k);
    CHECK(e.max_load == opt);
    CHECK(e.proven_optimal);
    CHECK(e.lower_bound == opt);
  }
}

TEST_CASE("exact: near-perfect packings with few items per bin") {
  // Three items per bin that pack exactly: 20 bins of (a, b, 300 − a − b).
  std::mt19937_64 rng(77);
  std::vector<cost_t> c;
  for (int b = 0; b < 20; ++b) {
    const cost_t x = orch::test::uniform_int(rng, 50, 140);
    const cost_t y = orch::test::uniform_int(rng, 50, 140);
    c.insert(c.end(), {x, y, 300 - x - y});
  }
  const auto r = orch::exact(c, 20);
  orch::test::check_partition_invariants(c, 20, r);
  CHECK(r.max_load == 300);
  CHECK(r.proven_optimal);
}

TEST_CASE("exact: a small budget never returns worse than the start, and claims no proof") {
  std::mt19937_64 rng(5);
  const auto c = orch::test::uniform_costs(5, 90, 1, 10000);
  const auto start = orch::lpt(c, 30);
  orch::exact_options o;
  o.work_budget = 100;
  o.start = start.bin_of;
  const auto r = orch::exact(c, 30, o);
  orch::test::check_partition_invariants(c, 30, r);
  CHECK(r.max_load <= start.max_load);
  if (r.proven_optimal) {
    CHECK(r.max_load == r.lower_bound);
  }
  // Same input, same budget, same answer.
  CHECK(orch::exact(c, 30, o).bin_of == r.bin_of);
  // A larger budget is never worse.
  o.work_budget = 200000;
  CHECK(orch::exact(c, 30, o).max_load <= r.max_load);
}

TEST_CASE("exact: edge cases and bad input") {
  CHECK(orch::exact(std::vector<cost_t>{}, 3).max_load == 0);
  CHECK(orch::exact(std::vector<cost_t>{4, 4, 4}, 1).max_load == 12);
  CHECK(orch::exact(std::vector<cost_t>{0, 0, 0}, 2).proven_optimal);
  const std::vector<cost_t> giant{1, 2, 3, 1000, 4};
  CHECK(orch::exact(giant, 3).max_load == 1000);
  orch::exact_options o;
  const std::vector<rank_t> bad{0, 5, 0, 0, 0};
  o.start = bad;
  CHECK_THROWS_AS((void)orch::exact(giant, 3, o), orch::invalid_argument);
  CHECK_THROWS_AS((void)orch::exact(giant, 0), orch::invalid_argument);
}
