// SPDX-License-Identifier: Apache-2.0
// Topologies and layouts: construction, slot orders, validation (against a reference on
// seeded assignments).
#include <orch/exchange/layout.hpp>
#include <orch/topology.hpp>

#include <support/generators.hpp>

#include <doctest/doctest.h>

#include <algorithm>
#include <cstdint>
#include <random>
#include <span>
#include <string>
#include <vector>

using orch::index_t;
using orch::rank_t;

namespace {
template <class T>
std::vector<T> vec(std::span<const T> s) {
  return {s.begin(), s.end()};
}
} // namespace

TEST_CASE("topology: uniform and explicit") {
  const auto t = orch::topology::uniform(8, 4);
  CHECK(t.ranks() == 8);
  CHECK(t.nodes() == 2);
  CHECK(t.node_of(5) == 1);
  CHECK(t.local_index(5) == 1);
  CHECK(t.rank_at(1, 3) == 7);
  CHECK(t.ranks_per_node(0) == 4);
  CHECK(t.is_uniform());

  // Ranks of a node need not be contiguous; local indices follow rank order.
  const auto e = orch::topology::from_node_of_rank({1, 0, 1, 2, 0, 1});
  CHECK(e.nodes() == 3);
  CHECK(vec(e.ranks_on(1)) == std::vector<rank_t>{0, 2, 5});
  CHECK(e.local_index(5) == 2);
  CHECK(e.rank_at(0, 1) == 4);
  CHECK(e.ranks_per_node(2) == 1);
  CHECK(e.max_ranks_per_node() == 3);
  CHECK_FALSE(e.is_uniform());
  CHECK(orch::topology{}.ranks() == 1);
  CHECK(orch::topology::uniform(6, 2) == orch::topology::from_node_of_rank({0, 0, 1, 1, 2, 2}));
}

TEST_CASE("topology: bad input") {
  CHECK_THROWS_AS(static_cast<void>(orch::topology::uniform(0, 1)), orch::invalid_argument);
  CHECK_THROWS_AS(static_cast<void>(orch::topology::uniform(4, 0)), orch::invalid_argument);
  CHECK_THROWS_WITH_AS(static_cast<void>(orch::topology::uniform(10, 4)),
                       doctest::Contains("not a multiple"), orch::invalid_argument);
  CHECK_THROWS_WITH_AS(static_cast<void>(orch::topology::from_node_of_rank({0, 2, 2})),
                       doctest::Contains("node 1 has no rank"), orch::invalid_argument);
  CHECK_THROWS_WITH_AS(static_cast<void>(orch::topology::from_node_of_rank({0, 2147483647})),
                       doctest::Contains("node 1 has no rank"), orch::invalid_argument);
  CHECK_THROWS_WITH_AS(static_cast<void>(orch::topology::from_node_of_rank({0, -1})),
                       doctest::Contains("rank 1 has negative node"), orch::invalid_argument);
  CHECK_THROWS_AS(static_cast<void>(orch::topology::from_node_of_rank({})), orch::invalid_argument);
  const auto t = orch::topology::uniform(4, 2);
  CHECK_THROWS_WITH_AS(static_cast<void>(t.node_of(4)), doctest::Contains("rank 4"),
                       orch::invalid_argument);
  CHECK_THROWS_AS(static_cast<void>(t.rank_at(0, 2)), orch::invalid_argument);
  CHECK_THROWS_AS(static_cast<void>(t.ranks_per_node(2)), orch::invalid_argument);
}

TEST_CASE("layout: from_assignment orders a rank's items by item index") {
  const auto l = orch::layout::from_assignment(std::vector<rank_t>{2, 0, 2, 1, 0}, 4);
  CHECK(l.ranks() == 4);
  CHECK(l.items() == 5);
  CHECK(vec(l.items_on(0)) == std::vector<index_t>{1, 4});
  CHECK(vec(l.items_on(2)) == std::vector<index_t>{0, 2});
  CHECK(l.count_on(3) == 0);
  CHECK(l.slot_of(4) == 1);
  CHECK(l.rank_of(3) == 1);
  CHECK(l.item_at(2, 1) == 2);
  CHECK(vec(l.first_on()) == std::vector<index_t>{0, 2, 3, 5, 5});
  CHECK(vec(l.order()) == std::vector<index_t>{1, 4, 3, 0, 2});
}

TEST_CASE("layout: from_keys orders by (key, secondary key, item)") {
  const std::vector<rank_t> rank{0, 0, 0, 0, 1};
  const std::vector<index_t> key{2, 1, 2, 1, 0};
  const std::vector<index_t> second{5, 9, 4, 9, 0};
  const auto a = orch::layout::from_keys(rank, 2, key);
  CHECK(vec(a.items_on(0)) == std::vector<index_t>{1, 3, 0, 2});
  const auto b = orch::layout::from_keys(rank, 2, key, second);
  CHECK(vec(b.items_on(0)) == std::vector<index_t>{1, 3, 2, 0});
  CHECK_THROWS_AS(static_cast<void>(orch::layout::from_keys(rank, 2, std::vector<index_t>{1})),
                  orch::invalid_argument);
}

TEST_CASE("layout: from_placements validates every slot") {
  const auto l = orch::layout::from_placements(2, {1, 0, 1, 0}, {1, 1, 0, 0});
  CHECK(vec(l.items_on(0)) == std::vector<index_t>{3, 1});
  CHECK(vec(l.items_on(1)) == std::vector<index_t>{2, 0});
  CHECK(l == orch::layout::from_placements(2, {1, 0, 1, 0}, {1, 1, 0, 0}));
  CHECK_FALSE(l == orch::layout::from_assignment(std::vector<rank_t>{1, 0, 1, 0}, 2));

  CHECK_THROWS_WITH_AS(static_cast<void>(orch::layout::from_placements(2, {0, 0, 0}, {0, 1, 1})),
                       doctest::Contains("rank 0 slot 1 is used by items 1 and 2"),
                       orch::invalid_argument);
  CHECK_THROWS_WITH_AS(static_cast<void>(orch::layout::from_placements(2, {0, 0}, {0, 2})),
                       doctest::Contains("item 1 has slot 2 but rank 0 holds 2 items"),
                       orch::invalid_argument);
  CHECK_THROWS_WITH_AS(static_cast<void>(orch::layout::from_placements(2, {0, 2}, {0, 0})),
                       doctest::Contains("item 1 is on rank 2 outside [0, 2)"),
                       orch::invalid_argument);
  CHECK_THROWS_AS(static_cast<void>(orch::layout::from_placements(2, {0}, {0, 0})),
                  orch::invalid_argument);
  CHECK_THROWS_AS(static_cast<void>(orch::layout::from_placements(2, {0, 0}, {0, -1})),
                  orch::invalid_argument);
  CHECK_THROWS_AS(static_cast<void>(orch::layout::from_placements(0, {}, {})),
                  orch::invalid_argument);
  CHECK_THROWS_WITH_AS(
      static_cast<void>(orch::layout::from_assignment(std::vector<rank_t>{0, -1}, 2)),
      doctest::Contains("item 1 is on rank -1"), orch::invalid_argument);
}

TEST_CASE("layout: contiguous and accessors") {
  const auto l = orch::layout::contiguous(std::vector<index_t>{2, 0, 3});
  CHECK(l.items() == 5);
  CHECK(vec(l.items_on(2)) == std::vector<index_t>{2, 3, 4});
  CHECK(l.slot_of(4) == 2);
  CHECK(l == orch::layout::from_assignment(std::vector<rank_t>{0, 0, 2, 2, 2}, 3));
  CHECK_THROWS_AS(static_cast<void>(orch::layout::contiguous(std::vector<index_t>{1, -1})),
                  orch::invalid_argument);
  CHECK_THROWS_AS(static_cast<void>(orch::layout::contiguous(std::vector<index_t>{})),
                  orch::invalid_argument);
  CHECK_THROWS_WITH_AS(static_cast<void>(l.item_at(1, 0)), doctest::Contains("no slot 0"),
                       orch::invalid_argument);
  CHECK_THROWS_AS(static_cast<void>(l.rank_of(5)), orch::invalid_argument);
  CHECK_THROWS_AS(static_cast<void>(l.count_on(3)), orch::invalid_argument);
  const orch::layout none;
  CHECK(none.ranks() == 1);
  CHECK(none.items() == 0);
  CHECK(none.count_on(0) == 0);
}

TEST_CASE("layout: builders agree on seeded assignments and name the first bad item") {
  for (std::uint64_t seed = 0; seed < 40; ++seed) {
    CAPTURE(seed);
    std::mt19937_64 rng(seed);
    const auto ranks = static_cast<rank_t>(orch::test::uniform_int(rng, 1, 40));
    const auto n = static_cast<std::size_t>(orch::test::uniform_int(rng, 0, 300));
    std::vector<rank_t> rank(n);
    for (auto& r : rank) {
      r = static_cast<rank_t>(orch::test::uniform_int(rng, 0, ranks - 1));
    }
    if (seed % 2 == 1) {
      std::sort(rank.begin(), rank.end()); // long runs of one rank
    }
    const auto l = orch::layout::from_assignment(rank, ranks);
    // Reference: items of each rank in item order.
    std::vector<index_t> order;
    std::vector<index_t> first{0};
    for (rank_t r = 0; r < ranks; ++r) {
      for (std::size_t i = 0; i < n; ++i) {
        if (rank[i] == r) {
          order.push_back(static_cast<index_t>(i));
        }
      }
      first.push_back(static_cast<index_t>(order.size()));
    }
    CHECK(vec(l.order()) == order);
    CHECK(vec(l.first_on()) == first);
    for (std::size_t p = 0; p < order.size(); ++p) {
      const auto i = order[p];
      CHECK(l.item_at(l.rank_of(i), l.slot_of(i)) == i);
    }
    const auto placed = orch::layout::from_placements(ranks, rank, vec(l.slot_of_items()));
    CHECK(placed == l);
    CHECK(vec(placed.order()) == order);
    CHECK(vec(placed.first_on()) == first);
    if (n >= 2) {
      // Two bad entries: the message names the lower item, whichever end of the range.
      auto bad = rank;
      const auto a = static_cast<std::size_t>(
          orch::test::uniform_int(rng, 0, static_cast<std::int64_t>(n) - 2));
      const auto b = static_cast<std::size_t>(orch::test::uniform_int(
          rng, static_cast<std::int64_t>(a) + 1, static_cast<std::int64_t>(n) - 1));
      bad[a] = seed % 3 == 0 ? -1 : ranks;
      bad[b] = -7;
      const auto expected = "item " + std::to_string(a) + " is on rank " + std::to_string(bad[a]);
      CHECK_THROWS_WITH_AS(static_cast<void>(orch::layout::from_assignment(bad, ranks)),
                           doctest::Contains(expected.c_str()), orch::invalid_argument);
      CHECK_THROWS_WITH_AS(
          static_cast<void>(orch::layout::from_placements(ranks, bad, vec(l.slot_of_items()))),
          doctest::Contains(expected.c_str()), orch::invalid_argument);
      // A slot used twice on a rank: named with the two items, in item order.
      const auto i = static_cast<std::size_t>(order[0]);
      const auto j = static_cast<std::size_t>(order[1]);
      if (rank[i] == rank[j]) {
        auto slots = vec(l.slot_of_items());
        slots[j] = slots[i];
        const auto twice = "is used by items " + std::to_string(std::min(i, j)) + " and " +
                           std::to_string(std::max(i, j));
        CHECK_THROWS_WITH_AS(static_cast<void>(orch::layout::from_placements(ranks, rank, slots)),
                             doctest::Contains(twice.c_str()), orch::invalid_argument);
      }
    }
  }
}
