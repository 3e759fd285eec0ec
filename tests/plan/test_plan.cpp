// SPDX-License-Identifier: Apache-2.0
// Exchange plans: the worked example of docs/plans.md, hash stability, validation, offsets
// beyond 32 bits, the sparse pair queries.
#include "plan_support.hpp"

#include <orch/exchange.hpp>
#include <orch/layout.hpp>
#include <orch/locality.hpp>
#include <orch/plan.hpp>
#include <orch/schedule.hpp>
#include <orch/topology.hpp>

#include <doctest/doctest.h>

#include <cstdint>
#include <limits>
#include <span>
#include <vector>

using orch::bytes_t;
using orch::index_t;
using orch::rank_t;

namespace {

template <class T>
std::vector<T> vec(std::span<const T> s) {
  return {s.begin(), s.end()};
}

/// The worked example of docs/plans.md: 4 ranks on 2 nodes, 6 items.
struct worked_example {
  orch::topology topo = orch::topology::uniform(4, 2);
  orch::layout from = orch::layout::contiguous(std::vector<index_t>{2, 2, 1, 1});
  orch::layout to = orch::layout::from_assignment(std::vector<rank_t>{3, 0, 0, 2, 1, 0}, 4);
  std::vector<bytes_t> bytes{100, 20, 30, 40, 50, 60};
};

} // namespace

TEST_CASE("plan: the worked example of docs/plans.md") {
  const worked_example ex;
  const auto plan = orch::make_plan(ex.from, ex.to, ex.bytes);
  orch::test::check_plan_invariants(plan);
  CHECK(plan.source_bytes(0) == 120);
  CHECK(plan.destination_bytes(0) == 110);
  CHECK(plan.total_bytes() == 300);

  const auto v0 = plan.view(0);
  CHECK(v0.send_items == std::vector<index_t>{1, 0});
  CHECK(v0.send_source_offsets == std::vector<bytes_t>{100, 0});
  CHECK(v0.send_packed_offsets == std::vector<bytes_t>{0, 20});
  CHECK(v0.send_peers == std::vector<rank_t>{0, 3});
  CHECK(v0.send_peer_bytes == std::vector<bytes_t>{20, 100});
  CHECK(v0.send_peer_displs == std::vector<bytes_t>{0, 20});
  CHECK(v0.recv_items == std::vector<index_t>{1, 2, 5});
  CHECK(v0.recv_peers == std::vector<rank_t>{0, 1, 3});
  CHECK(v0.recv_peer_bytes == std::vector<bytes_t>{20, 30, 60});
  CHECK(v0.recv_destination_offsets == std::vector<bytes_t>{0, 20, 50});
  CHECK(v0.self_bytes == 20);
  CHECK_FALSE(v0.pack_is_identity);
  CHECK(v0.unpack_is_identity);
  CHECK(plan.view(1).pack_is_identity);

  CHECK(plan.pair(0, 3).bytes == 100);
  CHECK(plan.pair(3, 0).bytes == 60);
  CHECK(plan.pair(0, 1).items == 0);
  CHECK(plan.pair_count() == 6);

  const auto t = orch::measure_traffic(plan, ex.topo);
  CHECK(t == orch::traffic{20, 30, 250});

  const auto s = orch::make_schedule(plan, ex.topo);
  CHECK(vec(s.staging.items_on(0)) == std::vector<index_t>{1, 4});
  CHECK(vec(s.staging.items_on(1)) == std::vector<index_t>{2, 5});
  CHECK(vec(s.staging.items_on(2)) == std::vector<index_t>{0});
  CHECK(vec(s.staging.items_on(3)) == std::vector<index_t>{3});
  CHECK(s.staging_bytes == std::vector<bytes_t>{70, 90, 100, 40});
  CHECK(s.max_remote_peers() == 1);
  CHECK(orch::measure_traffic(s.inter_node, ex.topo) == orch::traffic{50, 0, 250});
  CHECK(orch::measure_traffic(s.intra_node, ex.topo) == orch::traffic{20, 280, 0});
}

TEST_CASE("plan: the hash is a golden value and sees every field") {
  const worked_example ex;
  const auto plan = orch::make_plan(ex.from, ex.to, ex.bytes);
  // Golden values, also reproduced by an independent Python transcription of the algorithm in
  // docs/plans.md: a change here breaks agreement between ranks running different builds.
  CHECK(plan.hash() == 0xE1421CB31B2D7A00ULL);
  CHECK(orch::exchange_plan{}.hash() == 0xC6BEF8761050E570ULL);
  auto bytes = ex.bytes;
  bytes[5] = 61;
  CHECK(orch::make_plan(ex.from, ex.to, bytes).hash() != plan.hash());
  const auto swapped = orch::layout::from_placements(4, {3, 0, 0, 2, 1, 0}, {0, 1, 0, 0, 0, 2});
  CHECK(orch::make_plan(ex.from, swapped, ex.bytes).hash() != plan.hash());
  CHECK(orch::inverse(plan).hash() != plan.hash());
  CHECK(orch::make_plan(ex.from, ex.to, ex.bytes).hash() == plan.hash());
}

TEST_CASE("plan: bad input names the item or rank") {
  const worked_example ex;
  const auto five = orch::layout::from_assignment(std::vector<rank_t>{0, 1, 2, 3, 0}, 4);
  CHECK_THROWS_WITH_AS(static_cast<void>(orch::make_plan(ex.from, five, ex.bytes)),
                       doctest::Contains("different item counts"), orch::invalid_argument);
  const auto three_ranks = orch::layout::from_assignment(std::vector<rank_t>{0, 1, 2, 0, 1, 2}, 3);
  CHECK_THROWS_WITH_AS(static_cast<void>(orch::make_plan(ex.from, three_ranks, ex.bytes)),
                       doctest::Contains("different rank counts"), orch::invalid_argument);
  CHECK_THROWS_AS(static_cast<void>(orch::make_plan(ex.from, ex.to, std::vector<bytes_t>{1, 2})),
                  orch::invalid_argument);
  CHECK_THROWS_WITH_AS(
      static_cast<void>(orch::make_plan(ex.from, ex.to, std::vector<bytes_t>{1, 2, 3, -4, 5, 6})),
      doctest::Contains("item 3 has negative size"), orch::invalid_argument);
  // Two items of 2^62 bytes on rank 0: its buffer cannot be addressed.
  const bytes_t big = bytes_t{1} << 62;
  CHECK_THROWS_WITH_AS(static_cast<void>(orch::make_plan(
                           ex.from, ex.to, std::vector<bytes_t>{big, big, 1, 1, 1, 1})),
                       doctest::Contains("buffer of rank 0 exceeds 2^63 - 1 bytes at item 1"),
                       orch::overflow);
  // Every rank fits on its own, the total does not.
  const auto spread = orch::layout::from_assignment(std::vector<rank_t>{0, 1, 2}, 4);
  CHECK_THROWS_WITH_AS(
      static_cast<void>(orch::make_plan(spread, spread, std::vector<bytes_t>{big, big, big})),
      doctest::Contains("all ranks exceed"), orch::overflow);
  // Overflow is an orch::error like every other failure.
  CHECK_THROWS_AS(static_cast<void>(
                      orch::make_plan(ex.from, ex.to, std::vector<bytes_t>{big, big, 1, 1, 1, 1})),
                  orch::error);

  const auto plan = orch::make_plan(ex.from, ex.to, ex.bytes);
  CHECK_THROWS_WITH_AS(static_cast<void>(plan.view(4)), doctest::Contains("rank 4"),
                       orch::invalid_argument);
  CHECK_THROWS_AS(static_cast<void>(plan.pair(-1, 0)), orch::invalid_argument);
  CHECK_THROWS_WITH_AS(static_cast<void>(plan.source_offset(6)), doctest::Contains("item 6"),
                       orch::invalid_argument);

  // compose: the middle layouts must match, and so must the item sizes.
  const auto other = orch::make_plan(ex.from, ex.to, ex.bytes);
  CHECK_THROWS_WITH_AS(static_cast<void>(orch::compose(plan, other)), doctest::Contains("item 0"),
                       orch::invalid_argument);
  auto bytes = ex.bytes;
  bytes[4] = 7;
  const auto next = orch::make_plan(ex.to, ex.from, bytes);
  CHECK_THROWS_WITH_AS(static_cast<void>(orch::compose(plan, next)),
                       doctest::Contains("item 4 has 50 bytes"), orch::invalid_argument);
  const auto small = orch::make_plan(five, five, std::vector<bytes_t>(5, 1));
  CHECK_THROWS_WITH_AS(static_cast<void>(orch::compose(plan, small)),
                       doctest::Contains("different sizes"), orch::invalid_argument);
  CHECK_THROWS_WITH_AS(static_cast<void>(orch::make_schedule(plan, orch::topology::uniform(8, 2))),
                       doctest::Contains("topology of 8 ranks"), orch::invalid_argument);
  CHECK_THROWS_AS(static_cast<void>(orch::measure_traffic(plan, orch::topology::uniform(2, 1))),
                  orch::invalid_argument);
}

TEST_CASE("plan: offsets beyond 32 bits are exact") {
  const bytes_t gib3 = bytes_t{3} << 30;
  const auto from = orch::layout::from_assignment(std::vector<rank_t>{0, 0, 0, 1}, 2);
  const auto to = orch::layout::from_assignment(std::vector<rank_t>{1, 1, 0, 1}, 2);
  const auto plan = orch::make_plan(from, to, std::vector<bytes_t>{gib3, gib3 + 1, gib3, 5});
  orch::test::check_plan_invariants(plan);
  CHECK(plan.source_offset(2) == 2 * gib3 + 1);
  CHECK(plan.source_bytes(0) == 3 * gib3 + 1);
  const auto v1 = plan.view(1);
  CHECK(v1.recv_items == std::vector<index_t>{0, 1, 3});
  CHECK(v1.recv_destination_offsets == std::vector<bytes_t>{0, gib3, 2 * gib3 + 1});
  CHECK(plan.pair(0, 1).bytes == 2 * gib3 + 1);
  CHECK(plan.destination_bytes(1) == 2 * gib3 + 6);
}

TEST_CASE("plan: a rank's view is sparse") {
  // 512 ranks, each sends its 4 items to 2 peers: views hold 4 entries and 2 peers, the plan
  // 1024 pairs, not 512 × 512.
  const rank_t ranks = 512;
  std::vector<rank_t> dest;
  for (rank_t r = 0; r < ranks; ++r) {
    for (rank_t j = 0; j < 4; ++j) {
      dest.push_back((r + 1 + (j % 2) * 7) % ranks);
    }
  }
  const auto from = orch::layout::contiguous(std::vector<index_t>(ranks, 4));
  const auto to = orch::layout::from_assignment(dest, ranks);
  const auto plan = orch::make_plan(from, to, std::vector<bytes_t>(dest.size(), 8));
  CHECK(plan.pair_count() == 2 * ranks);
  for (rank_t r = 0; r < ranks; ++r) {
    const auto v = plan.view(r);
    CHECK(v.send_items.size() == 4);
    CHECK(v.send_peers.size() == 2);
    CHECK(v.recv_peers.size() == 2);
  }
  const auto all = plan.pairs();
  CHECK(all.size() == 2 * static_cast<std::size_t>(ranks));
  CHECK(all.front().source == 0);
  CHECK(all.front().destination == 1);
  CHECK(all.front().bytes == 16);
}

TEST_CASE("plan: empty and default plans") {
  const orch::exchange_plan none;
  CHECK(none.ranks() == 1);
  CHECK(none.items() == 0);
  CHECK(none.view(0).send_items.empty());
  const auto empty = orch::layout::from_assignment(std::vector<rank_t>{}, 3);
  const auto plan = orch::make_plan(empty, empty, std::vector<bytes_t>{});
  orch::test::check_plan_invariants(plan);
  CHECK(plan.pair_count() == 0);
  CHECK(orch::execute(plan, orch::rank_buffers(3)) == orch::rank_buffers(3));
  CHECK(orch::compose(plan, orch::inverse(plan)) == plan);
}
