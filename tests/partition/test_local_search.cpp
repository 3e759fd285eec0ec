// SPDX-License-Identifier: Apache-2.0
#include <orch/partition/local_search.hpp>
#include <orch/partition/lpt.hpp>

#include <support/brute_force.hpp>
#include <support/generators.hpp>
#include <support/partition_checks.hpp>

#include <doctest/doctest.h>

#include <algorithm>
#include <cstdint>
#include <vector>

using orch::cost_t;
using orch::rank_t;

namespace {

/// True if some move of one item, or swap of one item each, out of a largest bin lowers it
/// while keeping the partner strictly below the old maximum.
bool single_step_improves(const std::vector<cost_t>& c, const std::vector<rank_t>& bin_of,
                          rank_t bins) {
  const auto loads = orch::bin_loads(c, bin_of, bins);
  const cost_t top = *std::max_element(loads.begin(), loads.end());
  for (rank_t m = 0; m < bins; ++m) {
    if (loads[static_cast<std::size_t>(m)] != top) {
      continue;
    }
    for (std::size_t i = 0; i < c.size(); ++i) {
      if (bin_of[i] != m) {
        continue;
      }
      for (rank_t b = 0; b < bins; ++b) {
        const cost_t lb = loads[static_cast<std::size_t>(b)];
        if (b == m) {
          continue;
        }
        if (c[i] > 0 && lb + c[i] < top) {
          return true;
        }
        for (std::size_t j = 0; j < c.size(); ++j) {
          if (bin_of[j] == b && c[i] > c[j] && lb + c[i] - c[j] < top) {
            return true;
          }
        }
      }
    }
  }
  return false;
}

} // namespace

TEST_CASE("local_search: never worse than the start, valid, and deterministic") {
  for (std::uint64_t seed = 1; seed <= 200; ++seed) {
    std::mt19937_64 rng(seed);
    const auto n = static_cast<std::size_t>(orch::test::uniform_int(rng, 0, 40));
    const auto k = static_cast<rank_t>(orch::test::uniform_int(rng, 1, 8));
    const auto c = orch::test::uniform_costs(seed, n, 0, seed % 2 == 0 ? 100 : 100000);
    // A poor start: round robin in index order.
    std::vector<rank_t> start(n);
    for (std::size_t i = 0; i < n; ++i) {
      start[i] = static_cast<rank_t>(i % static_cast<std::size_t>(k));
    }
    CAPTURE(seed);
    const auto r = orch::local_search(c, k, start);
    orch::test::check_partition_invariants(c, k, r);
    const auto start_loads = orch::bin_loads(c, start, k);
    CHECK(r.max_load <= *std::max_element(start_loads.begin(), start_loads.end()));
    CHECK(orch::local_search(c, k, start).bin_of == r.bin_of);
    // Run to a local optimum (or the bound): no single move or 1–1 swap improves.
    if (!r.proven_optimal) {
      CHECK_FALSE(single_step_improves(c, r.bin_of, k));
    }
  }
}

TEST_CASE("local_search: pair swaps and repartitions find what single steps cannot") {
  // Against brute force on small instances: with pair moves and two-bin repartitions,
  // local search is never below the optimum (a sanity check of the bookkeeping), never worse
  // than LPT, and often better than with single moves and 1–1 swaps only.
  int better = 0;
  for (std::uint64_t seed = 1; seed <= 200; ++seed) {
    const auto c = orch::test::uniform_costs(seed, 12, 1, 1000);
    const auto start = orch::lpt(c, 4).bin_of;
    orch::local_search_options single;
    single.pair_moves = false;
    single.repartition_items = 0;
    const auto a = orch::local_search(c, 4, start, single);
    const auto b = orch::local_search(c, 4, start);
    CAPTURE(seed);
    CHECK(b.max_load >= orch::test::brute_force_optimum(c, 4));
    better += b.max_load < a.max_load ? 1 : 0;
    CHECK(b.max_load <= orch::lpt(c, 4).max_load);
  }
  CHECK(better > 10);
}

TEST_CASE("local_search: stops at the target and within the budget") {
  const auto c = orch::test::uniform_costs(9, 4000, 1, 1000);
  const auto start = orch::lpt(c, 100).bin_of;
  orch::local_search_options o;
  o.work_budget = 50;
  const auto r = orch::local_search(c, 100, start, o);
  orch::test::check_partition_invariants(c, 100, r);
  const auto full = orch::local_search(c, 100, start);
  // The budget is checked between partner evaluations, so a run stops soon after it.
  CHECK(r.work < 5000);
  CHECK(full.work > r.work);
  CHECK(full.max_load <= orch::lpt(c, 100).max_load);
  CHECK(full.ratio_to_lower_bound() < 1.001);
}

TEST_CASE("local_search: honours counts, a second resource and speeds (engine rules)") {
  for (std::uint64_t seed = 1; seed <= 60; ++seed) {
    const auto c = orch::test::uniform_costs(seed, 30, 1, 100);
    const auto mem = orch::test::uniform_costs(seed + 1000, 30, 1, 10);
    orch::detail::bin_rules rules;
    rules.max_items = 6;
    rules.min_items = 5;
    rules.resource = mem;
    rules.resource_capacity = 60;
    // A start that satisfies the rules: items dealt round robin (5 or 6 each, and ≤ 60 of
    // the resource since 6 items of ≤ 10 fit).
    std::vector<rank_t> start(30);
    for (std::size_t i = 0; i < 30; ++i) {
      start[i] = static_cast<rank_t>(i % 6);
    }
    CAPTURE(seed);
    REQUIRE(orch::detail::satisfies(start, 6, rules));
    orch::work_meter meter(1'000'000);
    const auto r = orch::detail::improve(c, 6, start, rules, 0, {0, 1}, meter, {true, 0, 10}, "ls");
    CHECK(orch::detail::satisfies(r.bin_of, 6, rules));
    const auto start_loads = orch::bin_loads(c, start, 6);
    CHECK(r.max_load <= *std::max_element(start_loads.begin(), start_loads.end()));
  }
  // Speeds: the slow bin (speed 1) should end with about half the load of the fast ones.
  const std::vector<cost_t> c(40, 10);
  const std::vector<cost_t> speeds{2, 2, 1};
  orch::detail::bin_rules rules;
  rules.speeds = speeds;
  std::vector<rank_t> start(40, 2); // everything on the slow bin
  orch::work_meter meter(1'000'000);
  const auto r = orch::detail::improve(c, 3, start, rules, 0, {400, 5}, meter, {}, "ls");
  // Optimal time: loads 160/160/80 → 80 each.
  CHECK(r.max_time == doctest::Approx(80.0));
  CHECK(r.proven_optimal);
}

TEST_CASE("local_search: malformed starts throw") {
  const std::vector<cost_t> c{1, 2, 3};
  CHECK_THROWS_AS((void)orch::local_search(c, 2, std::vector<rank_t>{0, 1}),
                  orch::invalid_argument);
  CHECK_THROWS_AS((void)orch::local_search(c, 2, std::vector<rank_t>{0, 2, 1}),
                  orch::invalid_argument);
}

TEST_CASE("local_searcher: same assignment and largest load as local_search, buffers reused") {
  // One searcher over instances of changing size (as node_first uses it, one per node), few
  // and many items per bin (per-bin list sorts and the global order), with and without a
  // target, and runs that end in a local optimum after pair steps (so cached pairs are left
  // behind for the next instance): every run must match a fresh local_search.
  orch::detail::local_searcher searcher;
  for (std::uint64_t seed = 1; seed <= 400; ++seed) {
    std::mt19937_64 rng(seed);
    const bool stuck = seed % 2 == 1; // few bins, few items, ample budget: pair steps and stops
    const auto bins = static_cast<rank_t>(orch::test::uniform_int(rng, 1, stuck ? 4 : 24));
    const auto per_bin = orch::test::uniform_int(rng, 0, stuck ? 5 : (seed % 3 == 0 ? 120 : 12));
    const auto n = static_cast<std::size_t>(per_bin * bins);
    const auto c = orch::test::uniform_costs(seed, n, 0, seed % 4 < 2 ? 50 : 1'000'000);
    std::vector<rank_t> start(n);
    for (auto& b : start) {
      b = static_cast<rank_t>(orch::test::uniform_int(rng, 0, bins - 1));
    }
    orch::local_search_options options;
    options.work_budget = stuck ? 1'000'000 : orch::test::uniform_int(rng, 50, 200'000);
    options.partners = stuck ? 0 : static_cast<rank_t>(orch::test::uniform_int(rng, 0, 3));
    options.repartition_items = stuck && seed % 4 == 1 ? 0 : 10;
    options.target = seed % 8 == 0 ? orch::lower_bound(c, bins) + 5 : 0;
    CAPTURE(seed);
    CAPTURE(n);
    const auto expected = orch::local_search(c, bins, start, options);
    const cost_t top = searcher.run(c, bins, start, options);
    CHECK(top == expected.max_load);
    CHECK(searcher.bin_of() == expected.bin_of);
  }
}
