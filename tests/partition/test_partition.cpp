// SPDX-License-Identifier: Apache-2.0
#include <orch/cost.hpp>
#include <orch/partition/partition.hpp>

#include <support/brute_force.hpp>
#include <support/generators.hpp>
#include <support/partition_checks.hpp>

#include <doctest/doctest.h>

#include <algorithm>
#include <cstdint>
#include <numeric>
#include <string>
#include <vector>

using orch::cost_t;
using orch::index_t;
using orch::rank_t;

namespace {

std::vector<index_t> counts_of(const std::vector<rank_t>& bin_of, rank_t bins) {
  std::vector<index_t> n(static_cast<std::size_t>(bins), 0);
  for (const auto b : bin_of) {
    ++n[static_cast<std::size_t>(b)];
  }
  return n;
}

} // namespace

TEST_CASE("partition: every algorithm gives a valid assignment, never worse than its bound") {
  for (std::uint64_t seed = 1; seed <= 40; ++seed) {
    std::mt19937_64 rng(seed);
    const auto n = static_cast<std::size_t>(orch::test::uniform_int(rng, 0, 60));
    const auto k = static_cast<rank_t>(orch::test::uniform_int(rng, 1, 16));
    const auto c = orch::test::uniform_costs(seed, n, 0, 10000);
    for (const auto a : orch::all_partition_algorithms) {
      const std::string name(orch::to_string(a));
      CAPTURE(seed);
      CAPTURE(name);
      orch::partition_options o;
      o.algorithm = a;
      o.work_budget = 30000; // keeps the searches short; their quality is tested elsewhere
      const auto r = orch::partition(c, k, o);
      orch::test::check_partition_invariants(c, k, r);
      CHECK(r.max_load >= orch::pcmax_lower_bound(c, k)); // nothing beats a valid bound
    }
  }
}

TEST_CASE("partition: auto is optimal on small instances (brute force) and says so") {
  for (std::uint64_t seed = 1; seed <= 300; ++seed) {
    std::mt19937_64 rng(seed);
    const auto n = static_cast<std::size_t>(orch::test::uniform_int(rng, 0, 11));
    const auto k = static_cast<rank_t>(orch::test::uniform_int(rng, 1, 5));
    const auto c = orch::test::uniform_costs(seed * 7, n, 1, seed % 2 == 0 ? 100 : 100000);
    CAPTURE(seed);
    const auto r = orch::partition(c, k);
    orch::test::check_partition_invariants(c, k, r);
    const cost_t opt = orch::test::brute_force_optimum(c, k);
    CHECK(r.max_load == opt);
    CHECK(r.proven_optimal);
    CHECK(r.max_load <= orch::lpt(c, k).max_load);
  }
}

TEST_CASE("partition: many items per bin reach max / lower bound ≤ 1.0002") {
  const rank_t k = 128;
  for (const std::size_t per : {8u, 32u}) {
    const std::size_t n = per * static_cast<std::size_t>(k);
    std::vector<std::vector<cost_t>> inputs;
    inputs.push_back(orch::test::uniform_costs(per, n, 1, 100000));
    inputs.push_back(orch::test::bimodal_costs(per + 1, n, 0.8, 100, 2000, 8000, 32000));
    const auto tokens = orch::test::lognormal_lengths(per + 2, n, 7.0, 1.0, 32768);
    inputs.emplace_back(tokens.begin(), tokens.end());
    const auto lengths = orch::test::lognormal_lengths(per + 3, n, 6.0, 0.7, 16384);
    inputs.push_back(orch::compute_costs(orch::attention_cost{4096, 1, 0}, lengths));
    for (std::size_t d = 0; d < inputs.size(); ++d) {
      CAPTURE(per);
      CAPTURE(d);
      const auto r = orch::partition(inputs[d], k);
      orch::test::check_partition_invariants(inputs[d], k, r);
      CHECK(r.ratio_to_lower_bound() <= 1.0002);
    }
  }
}

TEST_CASE("partition: equal counts on heavy-tailed lengths stay within 1.01 of the bound") {
  for (std::uint64_t seed : {1u, 2u, 3u}) {
    const auto len = orch::test::lognormal_lengths(seed, 1024, 7.0, 1.5, 65536);
    const std::vector<cost_t> c(len.begin(), len.end());
    orch::partition_options o;
    o.equal_counts = true;
    CAPTURE(seed);
    const auto r = orch::partition(c, 64, o);
    orch::test::check_partition_invariants(c, 64, r);
    const auto cnt = counts_of(r.bin_of, 64);
    CHECK(*std::max_element(cnt.begin(), cnt.end()) == 16);
    CHECK(*std::min_element(cnt.begin(), cnt.end()) == 16);
    CHECK(r.ratio_to_lower_bound() <= 1.01);
  }
}

TEST_CASE("partition: constraints are honoured and infeasible ones name the limit") {
  const auto c = orch::test::uniform_costs(8, 100, 1, 1000);
  const auto mem = orch::test::uniform_costs(9, 100, 1, 100);
  orch::partition_options o;
  o.max_items_per_bin = 11;
  o.second_resource = mem;
  o.second_capacity = 700;
  const auto r = orch::partition(c, 10, o);
  orch::test::check_partition_invariants(c, 10, r);
  for (const auto cnt : counts_of(r.bin_of, 10)) {
    CHECK(cnt <= 11);
  }
  std::vector<cost_t> used(10, 0);
  for (std::size_t i = 0; i < c.size(); ++i) {
    used[static_cast<std::size_t>(r.bin_of[i])] += mem[i];
  }
  for (const auto u : used) {
    CHECK(u <= 700);
  }
  CHECK(r.max_load <= orch::lpt(c, 10).max_load * 11 / 10);
  o.max_items_per_bin = 9; // 100 items in 10 bins of at most 9
  try {
    (void)orch::partition(c, 10, o);
    FAIL("expected orch::infeasible");
  } catch (const orch::infeasible& e) {
    CHECK(std::string(e.what()).find("max_items_per_bin = 9") != std::string::npos);
  }
  o.max_items_per_bin = 0;
  o.second_capacity = 60; // Σ mem > 10 × 60
  CHECK_THROWS_AS((void)orch::partition(c, 10, o), orch::infeasible);
  orch::partition_options kk;
  kk.algorithm = orch::partition_algorithm::kk;
  kk.equal_counts = true;
  CHECK_THROWS_AS((void)orch::partition(c, 10, kk), orch::invalid_argument);
}

TEST_CASE("partition: speeds give slow bins less, and the time bound holds") {
  const auto c = orch::test::uniform_costs(12, 400, 1, 1000);
  std::vector<cost_t> speeds(16, 4);
  speeds[0] = 1;
  speeds[7] = 3;
  orch::partition_options o;
  o.speeds = speeds;
  const auto r = orch::partition(c, 16, o);
  REQUIRE(r.bin_of.size() == c.size());
  CHECK(r.max_time >= r.time_lower_bound - 1e-9);
  CHECK(r.max_time <= r.time_lower_bound * 1.01);
  CHECK(r.loads[0] * 3 < r.loads[1]);
  o.speeds = std::vector<cost_t>(15, 1); // wrong size
  CHECK_THROWS_AS((void)orch::partition(c, 16, o), orch::invalid_argument);
}

TEST_CASE("partition: deterministic; budget and time limit respected; bad options throw") {
  const auto c = orch::test::uniform_costs(21, 90, 1, 10000);
  const auto a = orch::partition(c, 30);
  const auto b = orch::partition(c, 30);
  CHECK(a.bin_of == b.bin_of);
  CHECK(a.algorithm == b.algorithm);
  CHECK(a.work == b.work);
  CHECK(a.work <= orch::partition_options{}.work_budget + 100000);
  orch::partition_options tiny;
  tiny.work_budget = 0;
  const auto t = orch::partition(c, 30, tiny);
  orch::test::check_partition_invariants(c, 30, t);
  CHECK(t.max_load <= orch::lpt(c, 30).max_load);
  orch::partition_options timed;
  timed.time_limit_ms = 1;
  orch::test::check_partition_invariants(c, 30, orch::partition(c, 30, timed));
  orch::partition_options unknown;
  unknown.algorithm = static_cast<orch::partition_algorithm>(99); // e.g. a bad cast in a binding
  CHECK_THROWS_WITH_AS((void)orch::partition(c, 30, unknown),
                       doctest::Contains("unknown algorithm value 99"), orch::invalid_argument);
  orch::partition_options negative;
  negative.work_budget = -1;
  CHECK_THROWS_AS((void)orch::partition(c, 30, negative), orch::invalid_argument);
}

TEST_CASE("partition: algorithm names round-trip; unknown names list the valid ones") {
  const std::vector<std::string> names{"auto",     "lpt",        "lpt+ls", "kk",
                                       "multifit", "subset_sum", "exact"};
  REQUIRE(names.size() == orch::all_partition_algorithms.size());
  for (std::size_t i = 0; i < names.size(); ++i) {
    CAPTURE(names[i]);
    const auto a = orch::all_partition_algorithms[i];
    CHECK(orch::to_string(a) == names[i]);
    CHECK(orch::parse_partition_algorithm(names[i]) == a);
  }
  CHECK(orch::parse_partition_algorithm("lpt+ls") == orch::partition_algorithm::lpt_ls);
  CHECK(orch::parse_partition_algorithm("auto") == orch::partition_algorithm::automatic);
  CHECK_THROWS_WITH_AS((void)orch::parse_partition_algorithm("magic"),
                       "unknown partition algorithm 'magic' (expected auto, lpt, lpt+ls, kk, "
                       "multifit, subset_sum or exact)",
                       orch::invalid_argument);
  CHECK_THROWS_AS((void)orch::parse_partition_algorithm("LPT"), orch::invalid_argument);
  CHECK_THROWS_AS((void)orch::parse_partition_algorithm(""), orch::invalid_argument);
  // Algorithms that ignore constraints name themselves when they reject them.
  const auto c = orch::test::uniform_costs(3, 20, 1, 100);
  orch::partition_options o;
  o.algorithm = orch::partition_algorithm::multifit;
  o.max_items_per_bin = 5;
  CHECK_THROWS_WITH_AS((void)orch::partition(c, 4, o),
                       doctest::Contains("algorithm \"multifit\" does not support constraints"),
                       orch::invalid_argument);
}

TEST_CASE("partition: edge cases") {
  const std::vector<cost_t> none;
  const auto e = orch::partition(none, 4);
  orch::test::check_partition_invariants(none, 4, e);
  CHECK(e.proven_optimal);
  const std::vector<cost_t> c{3, 1, 4, 1, 5};
  CHECK(orch::partition(c, 1).max_load == 14);
  const auto wide = orch::partition(c, 8); // k > n
  orch::test::check_partition_invariants(c, 8, wide);
  CHECK(wide.max_load == 5);
  CHECK(wide.proven_optimal);
  const std::vector<cost_t> zeros(9, 0);
  CHECK(orch::partition(zeros, 4).max_load == 0);
  std::vector<cost_t> giant(50, 2);
  giant[17] = 1'000'000;
  const auto g = orch::partition(giant, 4);
  CHECK(g.max_load == 1'000'000);
  CHECK(g.proven_optimal);
  CHECK_THROWS_AS((void)orch::partition(c, 0), orch::invalid_argument);
  const std::vector<cost_t> neg{1, -5};
  CHECK_THROWS_AS((void)orch::partition(neg, 2), orch::invalid_argument);
  const std::vector<cost_t> overflow{orch::max_cost, 1};
  CHECK_THROWS_AS((void)orch::partition(overflow, 2), orch::overflow);
}

TEST_CASE("make_partition_result: any balancer's assignment measured as partition's are") {
  for (std::uint64_t seed = 1; seed <= 20; ++seed) {
    const auto c = orch::test::uniform_costs(seed, 40 + seed, 1, 1000);
    const auto bins = static_cast<orch::rank_t>(2 + seed % 5);
    const auto p = orch::partition(c, bins);
    const auto r = orch::make_partition_result(c, p.bin_of, bins, "mine");
    CAPTURE(seed);
    CHECK(r.bin_of == p.bin_of);
    CHECK(r.loads == orch::bin_loads(c, p.bin_of, bins));
    CHECK(r.max_load == p.max_load);
    CHECK(r.lower_bound == orch::lower_bound(c, bins));
    CHECK(r.proven_optimal == (r.max_load == r.lower_bound));
    CHECK(r.algorithm == "mine");
    CHECK(r.max_time == static_cast<double>(r.max_load));
    // A worse assignment: everything in bin 0.
    const auto all =
        orch::make_partition_result(c, std::vector<orch::rank_t>(c.size(), 0), bins, "all in one");
    CHECK(all.max_load == std::accumulate(c.begin(), c.end(), cost_t{0}));
    CHECK_FALSE(all.proven_optimal);
  }
  try {
    static_cast<void>(orch::make_partition_result(std::vector<cost_t>{1, 2},
                                                  std::vector<orch::rank_t>{0}, 2, "peer_x"));
    FAIL("expected orch::invalid_argument");
  } catch (const orch::invalid_argument& e) {
    CHECK(std::string(e.what()).rfind("peer_x: 2 costs but 1 bin assignments", 0) == 0);
  }
  CHECK_THROWS_AS(static_cast<void>(orch::make_partition_result(
                      std::vector<cost_t>{1}, std::vector<orch::rank_t>{0}, 0, "")),
                  orch::invalid_argument);
}
