// SPDX-License-Identifier: Apache-2.0
#include <orch/partition/microbatch.hpp>

#include <support/brute_force.hpp>
#include <support/generators.hpp>
#include <support/partition_checks.hpp>

#include <doctest/doctest.h>

#include <cstdint>
#include <string>
#include <vector>

using orch::cost_t;
using orch::index_t;
using orch::rank_t;

TEST_CASE("min_microbatches: the fewest parts that fit the cap (brute force on small cases)") {
  for (std::uint64_t seed = 1; seed <= 150; ++seed) {
    std::mt19937_64 rng(seed);
    const auto n = static_cast<std::size_t>(orch::test::uniform_int(rng, 1, 9));
    const auto tokens = orch::test::uniform_costs(seed, n, 1, 100);
    const cost_t cap = 100 + orch::test::uniform_int(rng, 0, 150);
    CAPTURE(seed);
    const index_t m = orch::min_microbatches(tokens, cap);
    index_t opt = 1;
    while (orch::test::brute_force_optimum(tokens, static_cast<rank_t>(opt)) > cap) {
      ++opt;
    }
    CHECK(m == opt);
  }
  CHECK(orch::min_microbatches(std::vector<cost_t>{}, 10) == 0);
}

TEST_CASE("split_microbatches: m parts, every part within the cap, balanced by cost") {
  const auto tokens = orch::test::uniform_costs(4, 64, 100, 4000);
  const cost_t cap = 16384;
  const index_t m = orch::min_microbatches(tokens, cap);
  CHECK(m >= 1);
  // FLOPs-like costs: quadratic in tokens.
  std::vector<cost_t> flops(tokens.size());
  for (std::size_t i = 0; i < tokens.size(); ++i) {
    flops[i] = tokens[i] * tokens[i];
  }
  const auto r = orch::split_microbatches(flops, tokens, cap, m);
  orch::test::check_partition_invariants(flops, static_cast<rank_t>(m), r);
  std::vector<cost_t> used(static_cast<std::size_t>(m), 0);
  for (std::size_t i = 0; i < tokens.size(); ++i) {
    used[static_cast<std::size_t>(r.bin_of[i])] += tokens[i];
  }
  for (const auto u : used) {
    CHECK(u <= cap);
  }
  // The same split with one more micro-batch (a rank that follows a slower one) still fits.
  CHECK_NOTHROW((void)orch::split_microbatches(flops, tokens, cap, m + 1));
}

TEST_CASE("common_microbatches: every rank runs the worst rank's count") {
  const std::vector<index_t> per_rank{3, 5, 2, 5, 4};
  CHECK(orch::common_microbatches(per_rank) == 5);
  CHECK_THROWS_AS((void)orch::common_microbatches(std::vector<index_t>{}), orch::invalid_argument);
  CHECK_THROWS_AS((void)orch::common_microbatches(std::vector<index_t>{1, -1}),
                  orch::invalid_argument);
}

TEST_CASE("micro-batches: limits no split can meet throw, naming them") {
  const std::vector<cost_t> tokens{10, 50, 10};
  try {
    (void)orch::min_microbatches(tokens, 40);
    FAIL("expected orch::infeasible");
  } catch (const orch::infeasible& e) {
    CHECK(std::string(e.what()).find("item 1") != std::string::npos);
    CHECK(std::string(e.what()).find("40") != std::string::npos);
  }
  try {
    (void)orch::split_microbatches(tokens, tokens, 50, 1); // 70 tokens in one part of 50
    FAIL("expected orch::infeasible");
  } catch (const orch::infeasible& e) {
    CHECK(std::string(e.what()).find("1 micro-batches of at most 50") != std::string::npos);
  }
  CHECK_THROWS_AS((void)orch::split_microbatches(tokens, tokens, 50, 0), orch::invalid_argument);
  CHECK_THROWS_AS((void)orch::min_microbatches(tokens, 0), orch::invalid_argument);
}
