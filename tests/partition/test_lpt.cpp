// SPDX-License-Identifier: Apache-2.0
#include <orch/cost.hpp>
#include <orch/partition/lpt.hpp>

#include <support/brute_force.hpp>
#include <support/generators.hpp>
#include <support/partition_checks.hpp>

#include <doctest/doctest.h>

#include <algorithm>
#include <cstdint>
#include <string>
#include <vector>

using orch::cost_t;
using orch::rank_t;

TEST_CASE("lpt: textbook instance and tie-breaks") {
  const std::vector<cost_t> c{7, 7, 6, 6, 5, 5, 4, 4, 4};
  const auto r = orch::lpt(c, 4);
  orch::test::check_partition_invariants(c, 4, r);
  // 7,7,6,6 open bins 0..3; the 5s go to bins 2 and 3 (load 6, lower index first); the first
  // two 4s to bins 0 and 1 (load 7); all loads are then 11 and the last 4 goes to bin 0.
  CHECK(r.bin_of == std::vector<rank_t>{0, 1, 2, 3, 2, 3, 0, 1, 0});
  CHECK(r.max_load == 15);
  CHECK(r.lower_bound == 12);
  CHECK_FALSE(r.proven_optimal);
  CHECK(r.algorithm == "lpt");
}

TEST_CASE("lpt: Graham's worst case reaches exactly 4/3 - 1/(3k)") {
  // k = 3: costs 5,5,4,4,3,3,3 — optimum 9, LPT 11 = (4/3 - 1/9) * 9.
  const std::vector<cost_t> c{5, 5, 4, 4, 3, 3, 3};
  const auto r = orch::lpt(c, 3);
  orch::test::check_partition_invariants(c, 3, r);
  CHECK(orch::test::brute_force_optimum(c, 3) == 9);
  CHECK(r.max_load == 11);
}

TEST_CASE("lpt: within 4/3 - 1/(3k) of the brute-force optimum") {
  int checked = 0;
  for (std::uint64_t seed = 1; seed <= 400; ++seed) {
    std::mt19937_64 rng(seed);
    const auto n = static_cast<std::size_t>(orch::test::uniform_int(rng, 0, 10));
    const auto k = static_cast<rank_t>(orch::test::uniform_int(rng, 1, 4));
    const cost_t hi = seed % 3 == 0 ? 10 : (seed % 3 == 1 ? 1000 : 1'000'000);
    const auto c = orch::test::uniform_costs(seed * 7919, n, 0, hi);
    CAPTURE(seed);
    CAPTURE(n);
    CAPTURE(k);
    const auto r = orch::lpt(c, k);
    orch::test::check_partition_invariants(c, k, r);
    const cost_t opt = orch::test::brute_force_optimum(c, k);
    CHECK(r.max_load >= opt);
    // max ≤ (4/3 − 1/(3k))·opt  ⇔  3k·max ≤ (4k − 1)·opt, in integers.
    CHECK(3 * k * r.max_load <= (4 * k - 1) * opt);
    if (n <= static_cast<std::size_t>(k)) {
      CHECK(r.max_load == opt);
    }
    ++checked;
  }
  CHECK(checked == 400);
}

TEST_CASE("lpt: edge cases") {
  SUBCASE("empty input") {
    const std::vector<cost_t> c;
    const auto r = orch::lpt(c, 4);
    orch::test::check_partition_invariants(c, 4, r);
    CHECK(r.max_load == 0);
    CHECK(r.proven_optimal);
  }
  SUBCASE("k = 1 puts everything in bin 0") {
    const std::vector<cost_t> c{3, 1, 4, 1, 5};
    const auto r = orch::lpt(c, 1);
    CHECK(r.bin_of == std::vector<rank_t>(5, 0));
    CHECK(r.max_load == 14);
    CHECK(r.proven_optimal);
  }
  SUBCASE("k > n: one item per bin, optimal") {
    const std::vector<cost_t> c{3, 9, 4};
    const auto r = orch::lpt(c, 8);
    orch::test::check_partition_invariants(c, 8, r);
    CHECK(r.bin_of == std::vector<rank_t>{2, 0, 1});
    CHECK(r.max_load == 9);
    CHECK(r.proven_optimal);
  }
  SUBCASE("all equal and zero costs") {
    const std::vector<cost_t> eq(12, 5);
    const auto r = orch::lpt(eq, 4);
    CHECK(r.max_load == 15);
    CHECK(r.proven_optimal);
    const std::vector<cost_t> zeros(7, 0);
    const auto z = orch::lpt(zeros, 3);
    orch::test::check_partition_invariants(zeros, 3, z);
    CHECK(z.max_load == 0);
    // Every load stays 0, so the tie-break by bin index sends every item to bin 0.
    CHECK(z.bin_of == std::vector<rank_t>(7, 0));
  }
  SUBCASE("one giant item dominates the bound") {
    std::vector<cost_t> c(20, 1);
    c[7] = 1000;
    const auto r = orch::lpt(c, 4);
    orch::test::check_partition_invariants(c, 4, r);
    CHECK(r.max_load == 1000);
    CHECK(r.lower_bound == 1000);
    CHECK(r.proven_optimal);
  }
  SUBCASE("lengths near 2^31 with the quadratic model") {
    const std::vector<orch::length_t> lengths{(orch::length_t{1} << 31) - 1, 1 << 30, 1 << 29,
                                              1 << 20};
    const auto c = orch::compute_costs(orch::attention_cost{1, 1, 0}, lengths);
    const auto r = orch::lpt(c, 2);
    orch::test::check_partition_invariants(c, 2, r);
    CHECK(r.max_load == c[0]);
    CHECK(r.proven_optimal);
    // Five such items no longer sum within int64: reported as overflow, not wrapped.
    const std::vector<cost_t> big(5, c[0]);
    CHECK_THROWS_AS((void)orch::lpt(big, 2), orch::overflow);
  }
}

TEST_CASE("lpt: bad input throws orch::error with a useful message") {
  const std::vector<cost_t> c{1, 2, 3};
  try {
    (void)orch::lpt(c, 0);
    FAIL("expected throw");
  } catch (const orch::invalid_argument& e) {
    CHECK(std::string(e.what()).find("bins") != std::string::npos);
  }
  const std::vector<cost_t> neg{1, -2, 3};
  try {
    (void)orch::lpt(neg, 2);
    FAIL("expected throw");
  } catch (const orch::invalid_argument& e) {
    CHECK(std::string(e.what()).find("item 1") != std::string::npos);
  }
  CHECK_THROWS_AS((void)orch::lpt(c, -3), orch::error);
}

TEST_CASE("lpt: deterministic and stable on workload-shaped input") {
  for (std::uint64_t seed : {11u, 12u, 13u}) {
    CAPTURE(seed);
    const auto lengths = orch::test::lognormal_lengths(seed, 4096, 6.0, 1.0, 32768);
    const auto c = orch::compute_costs(orch::attention_cost{64, 1, 0}, lengths);
    const auto a = orch::lpt(c, 128);
    const auto b = orch::lpt(c, 128);
    CHECK(a.bin_of == b.bin_of);
    CHECK(a.loads == b.loads);
    orch::test::check_partition_invariants(c, 128, a);
    // 32 items per bin: LPT is within a small fraction of the bound on lognormal lengths.
    CHECK(a.ratio_to_lower_bound() < 1.05);
  }
}

TEST_CASE("lpt: the tournament tree matches a naive LPT, with 64- and 128-bit keys") {
  const auto naive = [](const std::vector<cost_t>& c, rank_t k) {
    std::vector<std::size_t> order(c.size());
    for (std::size_t i = 0; i < order.size(); ++i) {
      order[i] = i;
    }
    std::stable_sort(order.begin(), order.end(),
                     [&](std::size_t a, std::size_t b) { return c[a] > c[b]; });
    std::vector<cost_t> load(static_cast<std::size_t>(k), 0);
    std::vector<rank_t> bin_of(c.size(), 0);
    for (const auto i : order) {
      std::size_t best = 0;
      for (std::size_t b = 1; b < load.size(); ++b) {
        if (load[b] < load[best]) {
          best = b;
        }
      }
      bin_of[i] = static_cast<rank_t>(best);
      load[best] += c[i];
    }
    return bin_of;
  };
  for (std::uint64_t seed = 1; seed <= 120; ++seed) {
    std::mt19937_64 rng(seed);
    const auto n = static_cast<std::size_t>(orch::test::uniform_int(rng, 0, 500));
    const auto k = static_cast<rank_t>(orch::test::uniform_int(rng, 1, 70));
    // Up to 2^20 per item the keys fit 64 bits; with items up to 2^52, Σ (up to 2^61) leaves
    // no room for the bin bits and the tree switches to 128-bit keys.
    const cost_t hi = seed % 2 == 0 ? cost_t{1} << 20 : cost_t{1} << 52;
    const auto c = orch::test::uniform_costs(seed, n, 0, hi);
    CAPTURE(seed);
    CAPTURE(n);
    CAPTURE(k);
    const auto r = orch::lpt(c, k);
    orch::test::check_partition_invariants(c, k, r);
    CHECK(r.bin_of == naive(c, k));
  }
}
