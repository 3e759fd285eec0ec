// SPDX-License-Identifier: Apache-2.0
#include <orch/partition/padded.hpp>

#include <support/generators.hpp>

#include <doctest/doctest.h>

#include <algorithm>
#include <cstdint>
#include <vector>

using orch::cost_t;
using orch::index_t;
using orch::length_t;
using orch::rank_t;

namespace {

/// max over bins of count × longest for an assignment (and whether counts differ by ≤ 1).
cost_t padded_cost(const std::vector<length_t>& len, const std::vector<rank_t>& bin_of, rank_t k,
                   bool* balanced = nullptr) {
  std::vector<index_t> count(static_cast<std::size_t>(k), 0);
  std::vector<length_t> longest(static_cast<std::size_t>(k), 0);
  for (std::size_t i = 0; i < len.size(); ++i) {
    const auto b = static_cast<std::size_t>(bin_of[i]);
    ++count[b];
    longest[b] = std::max(longest[b], len[i]);
  }
  cost_t worst = 0;
  for (std::size_t b = 0; b < count.size(); ++b) {
    worst = std::max(worst, count[b] * longest[b]);
  }
  if (balanced != nullptr) {
    *balanced = *std::max_element(count.begin(), count.end()) -
                    *std::min_element(count.begin(), count.end()) <=
                1;
  }
  return worst;
}

/// The optimum by enumerating all k^n assignments.
cost_t brute_force(const std::vector<length_t>& len, rank_t k, bool equal_counts) {
  std::vector<rank_t> a(len.size(), 0);
  cost_t best = -1;
  for (;;) {
    bool balanced = true;
    const cost_t v = padded_cost(len, a, k, &balanced);
    if ((!equal_counts || balanced) && (best < 0 || v < best)) {
      best = v;
    }
    std::size_t i = 0;
    while (i < a.size() && ++a[i] == k) {
      a[i++] = 0;
    }
    if (i == a.size()) {
      return best;
    }
  }
}

} // namespace

TEST_CASE("padded_partition: equals the brute-force optimum, with and without equal counts") {
  for (std::uint64_t seed = 1; seed <= 250; ++seed) {
    std::mt19937_64 rng(seed);
    const auto n = static_cast<std::size_t>(orch::test::uniform_int(rng, 0, 8));
    const auto k = static_cast<rank_t>(orch::test::uniform_int(rng, 1, 3));
    std::vector<length_t> len(n);
    for (auto& l : len) {
      l = orch::test::uniform_int(rng, 0, seed % 2 == 0 ? 6 : 500);
    }
    for (const bool eq : {false, true}) {
      CAPTURE(seed);
      CAPTURE(eq);
      const auto r = orch::padded_partition(len, k, eq);
      REQUIRE(r.bin_of.size() == n);
      bool balanced = true;
      CHECK(padded_cost(len, r.bin_of, k, &balanced) == r.max_padded);
      if (eq) {
        CHECK(balanced);
      }
      CHECK(r.max_padded == brute_force(len, k, eq));
      CHECK(r.proven_optimal);
      index_t items = 0;
      for (std::size_t b = 0; b < static_cast<std::size_t>(k); ++b) {
        CHECK(r.padded[b] == r.counts[b] * r.longest[b]);
        items += r.counts[b];
      }
      CHECK(items == static_cast<index_t>(n));
    }
  }
}

TEST_CASE("padded_partition: short items share a bin, long ones get their own") {
  // Lengths 100, 10 × 9: with 2 bins, {100} alone (100) and the nine 10s (90).
  std::vector<length_t> len(9, 10);
  len.push_back(100);
  const auto r = orch::padded_partition(len, 2);
  CHECK(r.max_padded == 100);
  CHECK(r.counts[0] == 1);
  // With equal counts (5 and 5): the 100 pads four short items: 500.
  CHECK(orch::padded_partition(len, 2, true).max_padded == 500);
}

TEST_CASE("padded_partition: bad input") {
  const std::vector<length_t> neg{3, -1};
  CHECK_THROWS_AS((void)orch::padded_partition(neg, 2), orch::invalid_argument);
  CHECK_THROWS_AS((void)orch::padded_partition(std::vector<length_t>{1}, 0),
                  orch::invalid_argument);
  const std::vector<length_t> huge(4, orch::max_cost / 2);
  CHECK_THROWS_AS((void)orch::padded_partition(huge, 1), orch::overflow);
}
