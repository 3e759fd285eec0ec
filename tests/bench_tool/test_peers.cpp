// SPDX-License-Identifier: Apache-2.0
// The peer balancers of bench/peers/: invariants, and each behaves as documented on small
// instances worked out by hand.
#include "peer_algorithms.hpp"

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
namespace peers = orch_bench::peers;

namespace {

std::vector<std::size_t> counts_of(const orch::partition_result& r, rank_t bins) {
  std::vector<std::size_t> counts(static_cast<std::size_t>(bins), 0);
  for (const auto b : r.bin_of) {
    ++counts[static_cast<std::size_t>(b)];
  }
  return counts;
}

} // namespace

TEST_CASE("peers: every peer keeps the partition invariants and is deterministic") {
  for (std::uint64_t seed = 1; seed <= 60; ++seed) {
    std::mt19937_64 rng(seed);
    const auto k = static_cast<rank_t>(orch::test::uniform_int(rng, 1, 9));
    // Multiples of k, so the equal-count peers accept every instance.
    const auto n = static_cast<std::size_t>(k * orch::test::uniform_int(rng, 0, 8));
    const cost_t hi = seed % 3 == 0 ? 3 : (seed % 3 == 1 ? 1000 : 1'000'000'000);
    const auto c = orch::test::uniform_costs(seed * 104729, n, 0, hi);
    CAPTURE(seed);
    CAPTURE(n);
    CAPTURE(k);
    for (const auto& p : peers::peer_list()) {
      CAPTURE(std::string(p.name));
      const auto r = peers::run_peer(p.name, c, k);
      orch::test::check_partition_invariants(c, k, r);
      CHECK(r.algorithm == p.name);
      CHECK(peers::run_peer(p.name, c, k).bin_of == r.bin_of);
      if (p.equal_counts) {
        const auto counts = counts_of(r, k);
        CHECK(*std::max_element(counts.begin(), counts.end()) -
                  *std::min_element(counts.begin(), counts.end()) <=
              1);
      }
    }
  }
}

TEST_CASE("peers: lookup by name") {
  CHECK(peers::is_peer("verl_kk"));
  CHECK(peers::is_peer("no_balancing"));
  CHECK_FALSE(peers::is_peer("auto"));
  CHECK_FALSE(peers::is_peer("lpt"));
  const std::vector<cost_t> c{1, 2};
  CHECK_THROWS_AS(static_cast<void>(peers::run_peer("nope", c, 2)), orch::invalid_argument);
  CHECK_THROWS_AS(static_cast<void>(peers::run_peer("verl_kk", c, 0)), orch::invalid_argument);
  const std::vector<cost_t> negative{1, -2};
  for (const auto& p : peers::peer_list()) {
    CAPTURE(std::string(p.name));
    CHECK_THROWS_AS(static_cast<void>(peers::run_peer(p.name, negative, 2)),
                    orch::invalid_argument);
  }
}

TEST_CASE("verl_kk: the differencing steps worked by hand") {
  // k = 2, costs 8 7 6 5 4 (items 0..4). Singletons pop by spread: {8} with {7} → (8 | 7),
  // {6} with {5} → (6 | 5); then {4} (spread 4) with (8 | 7) (spread 1, larger top than
  // (6 | 5)): 4 joins 7 → (4,7 = 11 | 8); then with (6 | 5): 11 + 5 = 16, 8 + 6 = 14.
  // Bin 0 = the larger subset {4, 7, 5} = items 4, 1, 3. The optimum is 15 (8+7 | 6+5+4).
  const std::vector<cost_t> c{8, 7, 6, 5, 4};
  const auto r = peers::verl_kk(c, 2, false);
  orch::test::check_partition_invariants(c, 2, r);
  CHECK(r.bin_of == std::vector<rank_t>{1, 0, 1, 0, 0});
  CHECK(r.loads == std::vector<cost_t>{16, 14});
  CHECK(r.algorithm == "verl_kk");
  CHECK(orch::test::brute_force_optimum(c, 2) == 15);
}

TEST_CASE("verl_kk: equal counts, ties broken by the first item's index") {
  // Costs 1..6, k = 2: runs (1,2), (3,4), (5,6) become states (2 | 1), (4 | 3), (6 | 5), all of
  // spread 1; (6 | 5) pops first (largest top), then (4 | 3): 6+3 = 9 and 5+4 = 9 tie on sum
  // and count, so the set whose first item has the larger index (item 5, cost 6) sorts first.
  // Then (2 | 1) (spread 1) absorbs that (spread 0): 2 + (5,4) = 11, 1 + (6,3) = 10.
  const std::vector<cost_t> c{1, 2, 3, 4, 5, 6};
  const auto r = peers::verl_kk(c, 2, true);
  orch::test::check_partition_invariants(c, 2, r);
  CHECK(r.bin_of == std::vector<rank_t>{1, 0, 1, 0, 0, 1});
  CHECK(r.loads == std::vector<cost_t>{11, 10});
  CHECK(r.algorithm == "verl_kk_equal");
}

TEST_CASE("verl_kk: equal counts are exact, and need n to be a multiple of k") {
  const auto c = orch::test::uniform_costs(77, 60, 1, 1000);
  const auto r = peers::verl_kk(c, 6, true);
  CHECK(counts_of(r, 6) == std::vector<std::size_t>(6, 10));
  const std::vector<cost_t> seven{5, 5, 4, 4, 3, 3, 3};
  try {
    static_cast<void>(peers::verl_kk(seven, 3, true));
    FAIL("expected orch::invalid_argument");
  } catch (const orch::invalid_argument& e) {
    const std::string what = e.what();
    CHECK(what.find("verl_kk_equal") != std::string::npos);
    CHECK(what.find("n = 7") != std::string::npos);
  }
}

TEST_CASE("verl_kk: fewer items than bins leaves the trailing bins empty") {
  const std::vector<cost_t> c{3, 9};
  const auto r = peers::verl_kk(c, 4, false);
  orch::test::check_partition_invariants(c, 4, r);
  CHECK(r.bin_of == std::vector<rank_t>{1, 0});
  CHECK(r.loads == std::vector<cost_t>{9, 3, 0, 0});
  CHECK(r.proven_optimal);
}

TEST_CASE("veomni_greedy: LPT with VeOmni's seeding and (load, rank) ties") {
  const std::vector<cost_t> c{7, 7, 6, 6, 5, 5, 4, 4, 4};
  const auto r = peers::veomni_greedy(c, 4);
  orch::test::check_partition_invariants(c, 4, r);
  CHECK(r.bin_of == std::vector<rank_t>{0, 1, 2, 3, 2, 3, 0, 1, 0});
  CHECK(r.max_load == 15);
  // The seeding gives each of the k largest items its own rank even when it costs 0; orch's
  // LPT would stack zero-cost items on bin 0 (load 0, lowest index).
  const std::vector<cost_t> zeros{0, 0, 0};
  CHECK(peers::veomni_greedy(zeros, 3).bin_of == std::vector<rank_t>{0, 1, 2});
  CHECK(orch::lpt(zeros, 3).bin_of == std::vector<rank_t>{0, 0, 0});
}

TEST_CASE("veomni_greedy: equals LPT on positive costs, within Graham's 4/3 - 1/(3k)") {
  for (std::uint64_t seed = 1; seed <= 150; ++seed) {
    std::mt19937_64 rng(seed);
    const auto n = static_cast<std::size_t>(orch::test::uniform_int(rng, 1, 10));
    const auto k = static_cast<rank_t>(orch::test::uniform_int(rng, 1, 4));
    const auto c = orch::test::uniform_costs(seed * 31, n, 1, seed % 2 == 0 ? 10 : 100000);
    CAPTURE(seed);
    const auto r = peers::veomni_greedy(c, k);
    CHECK(r.bin_of == orch::lpt(c, k).bin_of);
    const cost_t opt = orch::test::brute_force_optimum(c, k);
    CHECK(3 * k * r.max_load <= (4 * k - 1) * opt);
  }
}

TEST_CASE("veomni_greedy_unsorted: list scheduling in sampled order, within 2 - 1/k") {
  // 1 → rank 0, 2 → rank 1 (seeds); 3 → rank 0 (load 1 < 2); 4 → rank 1 (load 2 < 4).
  const std::vector<cost_t> c{1, 2, 3, 4};
  const auto r = peers::veomni_greedy(c, 2, peers::greedy_order::given);
  CHECK(r.bin_of == std::vector<rank_t>{0, 1, 0, 1});
  CHECK(r.loads == std::vector<cost_t>{4, 6});
  CHECK(r.algorithm == "veomni_greedy_unsorted");
  for (std::uint64_t seed = 1; seed <= 150; ++seed) {
    std::mt19937_64 rng(seed);
    const auto n = static_cast<std::size_t>(orch::test::uniform_int(rng, 1, 10));
    const auto k = static_cast<rank_t>(orch::test::uniform_int(rng, 1, 4));
    const auto costs = orch::test::uniform_costs(seed * 37, n, 1, 1000);
    CAPTURE(seed);
    const auto u = peers::veomni_greedy(costs, k, peers::greedy_order::given);
    const cost_t opt = orch::test::brute_force_optimum(costs, k);
    CHECK(k * u.max_load <= (2 * k - 1) * opt);
  }
}

TEST_CASE("mindspeed_greedy: a full rank is closed") {
  // 10, 9, 8 seed ranks 0, 1, 2 (argmin of equal loads: first); the three 1s go to the least
  // loaded open rank: rank 2 (8, now full), rank 1 (9, now full), rank 0.
  const std::vector<cost_t> c{10, 9, 8, 1, 1, 1};
  const auto r = peers::mindspeed_greedy(c, 3, 2);
  orch::test::check_partition_invariants(c, 3, r);
  CHECK(r.bin_of == std::vector<rank_t>{0, 1, 2, 2, 1, 0});
  CHECK(r.loads == std::vector<cost_t>{11, 10, 9});
  try {
    static_cast<void>(peers::mindspeed_greedy(c, 2, 2));
    FAIL("expected orch::infeasible");
  } catch (const orch::infeasible& e) {
    const std::string what = e.what();
    CHECK(what.find("mindspeed_greedy") != std::string::npos);
    CHECK(what.find("capacity 2") != std::string::npos);
  }
  CHECK_THROWS_AS(static_cast<void>(peers::mindspeed_greedy(c, 3, 0)), orch::invalid_argument);
}

TEST_CASE("llava_grouped: split_to_even_chunks, and striding when k does not divide n") {
  // Sorted: 6 (item 5), 5 (0), 4 (2), 3 (4), 2 (3), 1 (1); three per chunk. 6 → c0, 5 → c1,
  // 4 → c1 (5 < 6), 3 → c0 (6 < 9), 2 → c0 (9 = 9, first chunk; c0 now full), 1 → c1.
  const std::vector<cost_t> c{5, 1, 4, 2, 3, 6};
  const auto r = peers::llava_grouped(c, 2);
  orch::test::check_partition_invariants(c, 2, r);
  CHECK(r.bin_of == std::vector<rank_t>{1, 1, 1, 0, 0, 0});
  CHECK(r.loads == std::vector<cost_t>{11, 10});
  // Divisible: the same rule as MindSpeed's greedy with capacity n/k.
  const auto d = orch::test::uniform_costs(5, 48, 1, 5000);
  CHECK(peers::llava_grouped(d, 8).bin_of == peers::mindspeed_greedy(d, 8, 6).bin_of);
  // Not divisible: `indices[i::k]` of the sorted order, i.e. sorted round-robin.
  const auto odd = orch::test::uniform_costs(6, 50, 1, 5000);
  CHECK(peers::llava_grouped(odd, 8).bin_of == peers::sorted_round_robin(odd, 8).bin_of);
}

TEST_CASE("sorted_round_robin and no_balancing") {
  // Sorted: 6 (item 5), 5 (0), 4 (2), 3 (4), 2 (3), 1 (1) dealt to 0, 1, 0, 1, 0, 1.
  const std::vector<cost_t> c{5, 1, 4, 2, 3, 6};
  const auto s = peers::sorted_round_robin(c, 2);
  CHECK(s.bin_of == std::vector<rank_t>{1, 1, 0, 0, 1, 0});
  CHECK(s.loads == std::vector<cost_t>{12, 9});
  // Contiguous blocks as sampled: ⌊i · k / n⌋.
  const std::vector<cost_t> five{1, 1, 1, 1, 1};
  CHECK(peers::no_balancing(five, 2).bin_of == std::vector<rank_t>{0, 0, 0, 1, 1});
  const std::vector<cost_t> two{4, 4};
  const auto sparse = peers::no_balancing(two, 4);
  orch::test::check_partition_invariants(two, 4, sparse);
  CHECK(sparse.bin_of == std::vector<rank_t>{0, 2});
  const std::vector<cost_t> none;
  CHECK(peers::no_balancing(none, 3).max_load == 0);
}
