// SPDX-License-Identifier: Apache-2.0
// Packing internals of locality: best_fit against an ordered-set reference, repair_lists'
// search against the lists it indexes, and measure_traffic's one-pass validation against its
// item-by-item checks.
#include <orch/config.hpp>
#include <orch/detail/placement/best_fit.hpp>
#include <orch/detail/placement/repair_lists.hpp>
#include <orch/locality.hpp>
#include <orch/topology.hpp>

#include <support/generators.hpp>

#include <doctest/doctest.h>

#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <iterator>
#include <limits>
#include <random>
#include <set>
#include <string>
#include <utility>
#include <vector>

using orch::bytes_t;
using orch::cost_t;
using orch::rank_t;

namespace {

// The definition best_fit implements: (room, rank) pairs in order; take = the least room ≥
// cost (lowest rank among equals), take_most_room = the most room, lowest rank among equals.
class reference_fit {
public:
  void add(rank_t rank, cost_t room) { rooms_.emplace(room, rank); }
  rank_t take(cost_t cost) {
    const auto it = rooms_.lower_bound({cost, std::numeric_limits<rank_t>::min()});
    return it == rooms_.end() ? -1 : shrink(it, cost);
  }
  rank_t take_most_room(cost_t cost) {
    const cost_t most = std::prev(rooms_.end())->first;
    return shrink(rooms_.lower_bound({most, std::numeric_limits<rank_t>::min()}), cost);
  }

private:
  rank_t shrink(std::set<std::pair<cost_t, rank_t>>::iterator it, cost_t cost) {
    const auto [room, rank] = *it;
    rooms_.erase(it);
    rooms_.emplace(room - cost, rank);
    return rank;
  }
  std::set<std::pair<cost_t, rank_t>> rooms_;
};

} // namespace

TEST_CASE("best_fit: same ranks as the ordered-set definition") {
  for (std::uint64_t seed = 1; seed <= 300; ++seed) {
    CAPTURE(seed);
    std::mt19937_64 rng(seed);
    const auto ranks = static_cast<rank_t>(orch::test::uniform_int(rng, 1, 40));
    // Small room ranges force equal rooms (the rank tie-break); negative rooms occur.
    const cost_t spread = seed % 3 == 0 ? 4 : 1000;
    orch::detail::best_fit fit;
    reference_fit ref;
    for (rank_t r = 0; r < ranks; ++r) {
      const cost_t room = orch::test::uniform_int(rng, -spread / 4, spread);
      fit.add(r, room);
      ref.add(r, room);
    }
    // Falling costs (how packing calls it) in most runs, arbitrary ones in the others; now
    // and then a rank added late and the most-room fallback.
    const bool falling = seed % 4 != 0;
    cost_t cost = spread;
    rank_t next = ranks;
    for (int step = 0; step < 200; ++step) {
      CAPTURE(step);
      cost = falling ? std::max<cost_t>(0, cost - orch::test::uniform_int(rng, 0, spread / 20 + 1))
                     : orch::test::uniform_int(rng, 0, spread);
      const auto what = orch::test::uniform_int(rng, 0, 19);
      if (what == 0) {
        const cost_t room = orch::test::uniform_int(rng, -spread / 4, spread);
        fit.add(next, room);
        ref.add(next, room);
        ++next;
      } else if (what == 1) {
        CHECK(fit.take_most_room(cost) == ref.take_most_room(cost));
      } else {
        const rank_t expected = ref.take(cost);
        REQUIRE(fit.take(cost) == expected);
        if (expected < 0) {
          CHECK(fit.take_most_room(cost) == ref.take_most_room(cost));
        }
      }
    }
  }
}

TEST_CASE("best_fit: most room before any take, and equal rooms by rank") {
  orch::detail::best_fit fit;
  fit.add(3, 10);
  fit.add(1, 10);
  fit.add(2, 4);
  CHECK(fit.take_most_room(7) == 1); // rooms: 3 → 10, 1 → 3, 2 → 4
  CHECK(fit.take(5) == 3);           // 3 → 5
  CHECK(fit.take(4) == 2);           // the least room ≥ 4 is rank 2's 4 (rank 3 has 5)
  CHECK(fit.take(6) == -1);
  CHECK(fit.take_most_room(6) == 3); // 5 is the most
}

TEST_CASE("repair_lists: first_costing and cost_at follow the lists through replace and insert") {
  using orch::detail::repair_lists;
  for (std::uint64_t seed = 1; seed <= 200; ++seed) {
    std::mt19937_64 rng(seed);
    const auto pick = [&](std::size_t lo, std::size_t hi) { // in [lo, hi]
      return static_cast<std::size_t>(orch::test::uniform_int(rng, static_cast<std::int64_t>(lo),
                                                              static_cast<std::int64_t>(hi)));
    };
    const std::size_t ranks = pick(1, 9);
    const std::size_t m = pick(ranks, 60);
    // Narrow costs on some seeds, so that equal costs (ties by slot) are common.
    const cost_t max_cost = seed % 3 == 0 ? 4 : 1'000;
    std::vector<cost_t> cost(m);
    std::vector<bytes_t> size(m);
    std::vector<std::size_t> items(m);
    std::vector<std::size_t> local(m);
    std::vector<std::size_t> count(ranks, 0);
    for (std::size_t s = 0; s < m; ++s) {
      cost[s] = orch::test::uniform_int(rng, 0, max_cost);
      size[s] = orch::test::uniform_int(rng, 0, 50);
      items[s] = m - s;
      // About one slot in five is on no rank (in no list) and may be replaced or inserted.
      local[s] = orch::test::uniform_int(rng, 0, 4) == 0 ? repair_lists::npos : pick(0, ranks - 1);
      if (local[s] != repair_lists::npos) {
        ++count[local[s]];
      }
    }
    const std::size_t spare = 8;
    repair_lists lists;
    lists.new_node();
    lists.build(cost, size, items, count, spare, [&](std::size_t s) { return local[s]; });
    const auto check = [&] {
      for (std::size_t l = 0; l < ranks; ++l) {
        const auto list = lists.list(l);
        for (std::size_t k = 0; k < list.size(); ++k) {
          REQUIRE(lists.cost_at(l, k) == cost[list[k]]);
        }
        for (cost_t least = -2; least <= max_cost + 2; least += max_cost > 4 ? 37 : 1) {
          const auto expected = static_cast<std::size_t>(
              std::partition_point(list.begin(), list.end(),
                                   [&](std::size_t y) { return cost[y] < least; }) -
              list.begin());
          REQUIRE(lists.first_costing(l, least) == expected);
        }
      }
    };
    check();
    // Slots in no list take the place of listed ones or join a list, as repair() does.
    for (std::size_t step = 0; step < spare; ++step) {
      std::vector<std::size_t> outside;
      for (std::size_t s = 0; s < m; ++s) {
        if (local[s] == repair_lists::npos) {
          outside.push_back(s);
        }
      }
      if (outside.empty()) {
        break;
      }
      const std::size_t x = outside[pick(0, outside.size() - 1)];
      const std::size_t l = pick(0, ranks - 1);
      const auto list = lists.list(l);
      if (!list.empty() && orch::test::uniform_int(rng, 0, 1) == 0) {
        const std::size_t y = list[pick(0, list.size() - 1)];
        lists.replace(l, y, x);
        local[y] = repair_lists::npos;
      } else {
        lists.insert(l, x);
      }
      local[x] = l;
      check();
    }
  }
}

TEST_CASE("measure_traffic: the one-pass check accepts what the item checks accept") {
  const auto topo = orch::topology::uniform(6, 3);
  const std::vector<rank_t> from{0, 1, 4, 5};
  const std::vector<rank_t> to{0, 2, 1, 5};
  const std::vector<bytes_t> bytes{7, 11, 13, 17};
  const auto t = orch::measure_traffic(from, to, bytes, topo);
  CHECK(t == orch::traffic{24, 11, 13});
  // Sizes too large for the one-pass bound whose sums still fit: the checked walk sums them.
  const bytes_t half = bytes_t{1} << 61;
  const auto big = orch::measure_traffic(from, to, std::vector<bytes_t>{half, half, half, 3}, topo);
  CHECK(big == orch::traffic{half + 3, half, half});
  // Errors name the same item and limit as before: a bad destination, a bad source (checked
  // first), a negative size, an overflowing class.
  const auto message = [&](std::vector<rank_t> f, std::vector<rank_t> d, std::vector<bytes_t> b) {
    try {
      static_cast<void>(orch::measure_traffic(f, d, b, topo));
    } catch (const orch::error& e) {
      return std::string(e.what());
    }
    return std::string("no error");
  };
  CHECK(message(from, {0, 2, 6, 5}, bytes) ==
        "measure_traffic: item 2 goes to rank 6 outside the topology's [0, 6)");
  CHECK(message({0, -1, 4, 5}, {0, 2, 6, 5}, bytes) ==
        "measure_traffic: item 1 is on rank -1 outside the topology's [0, 6)");
  CHECK(message(from, to, {7, -2, 13, 17}).find("item 1 has negative size -2") !=
        std::string::npos);
  CHECK_THROWS_AS(
      static_cast<void>(orch::measure_traffic(std::vector<rank_t>{1, 1}, std::vector<rank_t>{1, 1},
                                              std::vector<bytes_t>{orch::max_cost, 1}, topo)),
      orch::overflow);
}
