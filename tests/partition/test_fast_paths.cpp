// SPDX-License-Identifier: Apache-2.0
// The internal fast paths of the partitioners against plain reference versions: the blocked
// bin order, the 8-ary first-fit tree and FFD's equal-cost shortcut, LPT's recorded trace,
// and local search fed from that trace.
#include <orch/partition/bin_order.hpp>
#include <orch/partition/local_search.hpp>
#include <orch/partition/lpt.hpp>
#include <orch/partition/multifit.hpp>
#include <orch/partition/order.hpp>

#include <support/generators.hpp>

#include <doctest/doctest.h>

#include <algorithm>
#include <cstdint>
#include <random>
#include <vector>

using orch::cost_t;
using orch::rank_t;

namespace {

using entry = orch::detail::bin_order::entry;

bool by_load(const entry& x, const entry& y) {
  return x.load < y.load || (x.load == y.load && x.bin < y.bin);
}

std::vector<rank_t> read_forward(const orch::detail::bin_order& order) {
  std::vector<rank_t> out;
  for (auto c = order.first(); order.valid(c); order.next(c)) {
    out.push_back(order[c]);
  }
  return out;
}

std::vector<rank_t> read_backward(const orch::detail::bin_order& order) {
  std::vector<rank_t> out;
  auto c = order.last();
  do {
    out.push_back(order[c]);
  } while (order.prev(c));
  std::reverse(out.begin(), out.end());
  return out;
}

/// The reference: bins sorted by (load, index) from scratch.
std::vector<rank_t> sorted_bins(const std::vector<cost_t>& load) {
  std::vector<entry> e;
  for (std::size_t b = 0; b < load.size(); ++b) {
    e.push_back({load[b], static_cast<rank_t>(b)});
  }
  std::sort(e.begin(), e.end(), by_load);
  std::vector<rank_t> out;
  for (const auto& x : e) {
    out.push_back(x.bin);
  }
  return out;
}

/// First fit by a linear scan: the lowest bin with room ≥ c.
rank_t naive_first_fit(const std::vector<cost_t>& room, cost_t c) {
  for (std::size_t b = 0; b < room.size(); ++b) {
    if (room[b] >= c) {
      return static_cast<rank_t>(b);
    }
  }
  return -1;
}

} // namespace

TEST_CASE("bin_order: stays sorted under moves between the ends and the middle") {
  for (const std::uint64_t seed : {1u, 2u}) {
    for (const std::size_t k : {std::size_t{1}, std::size_t{2}, std::size_t{63}, std::size_t{64},
                                std::size_t{65}, std::size_t{300}, std::size_t{2560}}) {
      CAPTURE(seed);
      CAPTURE(k);
      std::mt19937_64 rng(seed * 1000 + k);
      std::vector<cost_t> load(k);
      for (auto& l : load) {
        l = orch::test::uniform_int(rng, 0, 50); // many ties: the index decides
      }
      std::vector<entry> start;
      for (const rank_t b : sorted_bins(load)) {
        start.push_back({load[static_cast<std::size_t>(b)], b});
      }
      orch::detail::bin_order order;
      order.assign(start);
      REQUIRE(read_forward(order) == sorted_bins(load));
      // Each step re-sorts from scratch to compare: fewer steps at the widest size.
      const int steps = k > 300 ? 40 : 300;
      for (int step = 0; step < steps; ++step) {
        // As local search does: the last bin (or a random one) loses load to an earlier one.
        const auto ref = read_forward(order);
        const std::size_t pm = step % 3 == 0 ? k - 1
                                             : static_cast<std::size_t>(orch::test::uniform_int(
                                                   rng, 0, static_cast<std::int64_t>(k) - 1));
        if (pm == 0) {
          continue;
        }
        const auto pb = static_cast<std::size_t>(
            orch::test::uniform_int(rng, 0, static_cast<std::int64_t>(pm) - 1));
        auto cm = order.first();
        auto cb = order.first();
        for (std::size_t t = 0; t < pm; ++t) {
          order.next(cm);
          if (t + 1 <= pb) {
            order.next(cb);
          }
        }
        const rank_t m = order[cm];
        const rank_t b = order[cb];
        REQUIRE(m == ref[pm]);
        REQUIRE(b == ref[pb]);
        const cost_t d = orch::test::uniform_int(rng, 0, 20);
        order.erase(cm);
        order.erase(cb);
        load[static_cast<std::size_t>(m)] -= d;
        load[static_cast<std::size_t>(b)] += d;
        order.insert({load[static_cast<std::size_t>(b)], b}, by_load);
        order.insert({load[static_cast<std::size_t>(m)], m}, by_load);
        const auto want = sorted_bins(load);
        REQUIRE(read_forward(order) == want);
        REQUIRE(read_backward(order) == want);
        REQUIRE(order.back() == want.back());
      }
    }
  }
}

TEST_CASE("first_fit: the 8-ary tree finds the lowest bin with room, like a linear scan") {
  for (const rank_t k : {1, 2, 7, 8, 9, 63, 64, 65, 513, 2560}) {
    CAPTURE(k);
    std::mt19937_64 rng(static_cast<std::uint64_t>(k) * 7 + 1);
    const cost_t capacity = 1000;
    orch::detail::first_fit fit(k, capacity);
    std::vector<cost_t> room(static_cast<std::size_t>(k), capacity);
    for (int step = 0; step < 3000; ++step) {
      const cost_t c = orch::test::uniform_int(rng, 0, 400);
      const rank_t want = naive_first_fit(room, c);
      REQUIRE(fit.find(c) == want);
      if (want >= 0) {
        REQUIRE(fit.fits(want, c));
        fit.take(want, c);
        room[static_cast<std::size_t>(want)] -= c;
      }
    }
    REQUIRE(fit.find(capacity + 1) == -1);
  }
}

TEST_CASE("ffd: equal-cost runs and the sequential cost path give plain first-fit-decreasing") {
  for (const std::uint64_t seed : {11u, 12u, 13u}) {
    for (const rank_t k : {1, 3, 16, 200}) {
      CAPTURE(seed);
      CAPTURE(k);
      std::mt19937_64 rng(seed + static_cast<std::uint64_t>(k));
      const auto n = static_cast<std::size_t>(k) * 9;
      std::vector<cost_t> costs(n);
      for (auto& c : costs) {
        c = orch::test::uniform_int(rng, 1, 6) * 100; // long runs of equal costs
      }
      const auto order = orch::detail::order_desc(costs);
      std::vector<cost_t> sorted;
      for (const auto i : order) {
        sorted.push_back(costs[i]);
      }
      cost_t total = 0;
      for (const auto c : costs) {
        total += c;
      }
      for (const cost_t capacity : {total / k + 600, total / k + 100, total / k}) {
        CAPTURE(capacity);
        // Reference: first fit by linear scan over the same order.
        std::vector<cost_t> room(static_cast<std::size_t>(k), capacity);
        std::vector<rank_t> want(n, 0);
        bool want_ok = true;
        for (const auto i : order) {
          const rank_t b = naive_first_fit(room, costs[i]);
          if (b < 0) {
            want_ok = false;
            break;
          }
          room[static_cast<std::size_t>(b)] -= costs[i];
          want[i] = b;
        }
        std::vector<rank_t> got;
        REQUIRE(orch::detail::ffd(costs, order, k, capacity, got) == want_ok);
        std::vector<rank_t> got_seq;
        REQUIRE(orch::detail::ffd(costs, order, k, capacity, got_seq, sorted) == want_ok);
        if (want_ok) {
          CHECK(got == want);
          CHECK(got_seq == want);
        }
      }
    }
  }
}

TEST_CASE("lpt trace: the visit order, sorted costs and start bins of LPT") {
  for (const std::uint64_t seed : {21u, 22u}) {
    CAPTURE(seed);
    const auto costs = orch::test::uniform_costs(seed, 5000, 0, 300);
    cost_t total = 0;
    for (const auto c : costs) {
      total += c;
    }
    orch::detail::lpt_trace trace;
    const auto with = orch::detail::lpt_unchecked(costs, 37, total, &trace);
    const auto without = orch::detail::lpt_unchecked(costs, 37, total);
    REQUIRE(with.bin_of == without.bin_of);
    REQUIRE(trace.order == orch::detail::order_desc(costs));
    REQUIRE(trace.cost.size() == costs.size());
    REQUIRE(trace.bin.size() == costs.size());
    for (std::size_t p = 0; p < costs.size(); ++p) {
      REQUIRE(trace.cost[p] == costs[trace.order[p]]);
      REQUIRE(trace.bin[p] == with.bin_of[trace.order[p]]);
    }
  }
}

TEST_CASE("improve: fed LPT's trace or not, the same search, result and work") {
  for (const std::uint64_t seed : {31u, 32u, 33u}) {
    for (const rank_t k : {5, 70, 300}) {
      CAPTURE(seed);
      CAPTURE(k);
      const auto costs = orch::test::uniform_costs(seed, static_cast<std::size_t>(k) * 10, 1, 999);
      cost_t total = 0;
      for (const auto c : costs) {
        total += c;
      }
      orch::detail::lpt_trace trace;
      const auto start = orch::detail::lpt_unchecked(costs, k, total, &trace);
      orch::detail::search_plan plan;
      plan.partners = k > 64 ? 16 : 0;
      for (const bool pairs : {false, true}) {
        plan.pair_moves = pairs;
        orch::work_meter a(200'000);
        orch::work_meter b(200'000);
        const auto traced = orch::detail::improve(costs, k, start.bin_of, orch::detail::bin_rules{},
                                                  start.lower_bound, {start.lower_bound, 1}, a,
                                                  plan, "ls", trace.order, trace.cost, trace.bin);
        const auto plain =
            orch::detail::improve(costs, k, start.bin_of, orch::detail::bin_rules{},
                                  start.lower_bound, {start.lower_bound, 1}, b, plan, "ls");
        CHECK(traced.bin_of == plain.bin_of);
        CHECK(traced.loads == plain.loads);
        CHECK(traced.loads == orch::bin_loads(costs, traced.bin_of, k));
        CHECK(traced.work == plain.work);
        CHECK(traced.lower_bound == plain.lower_bound);
        CHECK(traced.max_load <= start.max_load);
      }
    }
  }
}
