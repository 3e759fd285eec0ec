// SPDX-License-Identifier: Apache-2.0
#include <orch/partition/improver_state.hpp>

#include <support/generators.hpp>

#include <doctest/doctest.h>

#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <random>
#include <vector>

using orch::cost_t;
using orch::rank_t;
using orch::detail::improver_state;

namespace {

/// Checks every view of the state against a recount from its assignment: each bin's list
/// holds exactly its items by cost descending, index ascending; loads, counts and resource
/// sums match; the bin order is by (load, bin) ascending and holds every bin once.
void check_consistent(improver_state& s, const std::vector<cost_t>& c,
                      const std::vector<cost_t>& res, rank_t k) {
  const auto& bin_of = s.bin_of();
  REQUIRE(bin_of.size() == c.size());
  for (rank_t b = 0; b < k; ++b) {
    std::vector<improver_state::entry> want;
    cost_t load = 0;
    cost_t r = 0;
    for (std::size_t i = 0; i < c.size(); ++i) {
      if (bin_of[i] == b) {
        want.push_back({c[i], static_cast<std::uint32_t>(i)});
        load += c[i];
        r += res.empty() ? 0 : res[i];
      }
    }
    std::sort(want.begin(), want.end(), [](const auto& x, const auto& y) {
      return x.c > y.c || (x.c == y.c && x.id < y.id);
    });
    const auto got = s.items(b);
    REQUIRE(got.size() == want.size());
    for (std::size_t x = 0; x < want.size(); ++x) {
      CHECK(got[x].c == want[x].c);
      CHECK(got[x].id == want[x].id);
    }
    CHECK(s.load(b) == load);
    CHECK(s.count(b) == static_cast<orch::index_t>(want.size()));
    CHECK(s.resource(b) == r);
  }
  std::vector<char> seen(static_cast<std::size_t>(k), 0);
  const auto& order = s.order();
  rank_t prev = -1;
  for (auto at = order.first(); order.valid(at); order.next(at)) {
    const rank_t b = order[at];
    CHECK(seen[static_cast<std::size_t>(b)] == 0);
    seen[static_cast<std::size_t>(b)] = 1;
    if (prev >= 0) {
      CHECK((s.load(prev) < s.load(b) || (s.load(prev) == s.load(b) && prev < b)));
    }
    prev = b;
  }
  CHECK(std::count(seen.begin(), seen.end(), 1) == k);
}

} // namespace

TEST_CASE("improver_state: moves and swaps keep lists, loads, counts, resources and order "
          "consistent") {
  // Few and many items per bin: swap_items takes the in-place path for lists of up to
  // improver_lists::replace_max items and two move_item calls above it.
  for (const std::size_t per_bin : {3U, 20U, 80U}) {
    for (std::uint64_t seed = 1; seed <= 4; ++seed) {
      CAPTURE(per_bin);
      CAPTURE(seed);
      const rank_t k = 3 + static_cast<rank_t>(seed % 3) * 40;
      const std::size_t n = per_bin * static_cast<std::size_t>(k);
      const auto c = orch::test::uniform_costs(seed * 977 + per_bin, n, 0, 50);
      std::mt19937_64 rng(seed);
      std::vector<rank_t> start(n);
      for (auto& b : start) {
        b = static_cast<rank_t>(rng() % static_cast<std::uint64_t>(k));
      }
      std::vector<cost_t> res(n);
      for (auto& r : res) {
        r = static_cast<cost_t>(rng() % 5);
      }
      orch::detail::bin_rules rules;
      rules.resource = res;
      rules.resource_capacity = static_cast<cost_t>(n) * 5;
      improver_state s(c, k, start, rules);
      check_consistent(s, c, res, k);
      for (int step = 0; step < 60; ++step) {
        // Between the last bin of the order (the search's critical bin) and the first (its
        // partner), as the search does, so that settle() applies.
        const auto& order = s.order();
        const auto at_m = order.last();
        const auto at_b = order.first();
        const rank_t m = order[at_m];
        const rank_t b = order[at_b];
        if (m == b) {
          break;
        }
        const auto mi = s.items(m);
        const auto bi = s.items(b);
        if (mi.empty()) {
          break;
        }
        const std::uint32_t i = mi[rng() % mi.size()].id;
        if (bi.empty() || step % 2 == 0) {
          s.move_item(i, m, b);
        } else {
          s.swap_items(i, bi[rng() % bi.size()].id, m, b);
        }
        s.settle(at_m, at_b);
        check_consistent(s, c, res, k);
      }
    }
  }
}

TEST_CASE("improver_state: pairs are cached until a step touches the bin, and rebuilds are "
          "counted") {
  const std::vector<cost_t> c{9, 7, 7, 4, 3, 1};
  const std::vector<rank_t> start{0, 0, 0, 0, 1, 1};
  improver_state s(c, 2, start, orch::detail::bin_rules{});
  std::int64_t units = 0;
  const auto& p = s.pairs(0, units);
  CHECK(units == 6 + 1); // C(4, 2) pairs, plus one
  REQUIRE(p.size() == 6);
  // By sum descending, ties by the first item, then the second.
  CHECK(p[0].sum == 16);
  CHECK(p[0].a == 0);
  CHECK(p[0].b == 1);
  CHECK(p[1].sum == 16);
  CHECK(p[1].a == 0);
  CHECK(p[1].b == 2);
  CHECK(p[5].sum == 11);
  static_cast<void>(s.pairs(0, units));
  CHECK(units == 7); // cached: nothing charged
  // Bin 0 (load 27) is last in the order, bin 1 (load 4) first.
  s.move_item(0, 0, 1);
  s.settle(s.order().last(), s.order().first());
  const auto& q = s.pairs(0, units);
  CHECK(units == 7 + 3 + 1);
  CHECK(q.size() == 3);
  CHECK(q[0].sum == 14);
}
