// SPDX-License-Identifier: Apache-2.0
// Exchange plans: the worked example of docs/plans.md, hash stability, validation, offsets
// beyond 32 bits, the sparse pair queries, inverse against the plan built backwards.
#include "plan_support.hpp"

#include <orch/exchange/execute.hpp>
#include <orch/exchange/layout.hpp>
#include <orch/exchange/plan.hpp>
#include <orch/exchange/schedule.hpp>
#include <orch/locality.hpp>
#include <orch/topology.hpp>

#include <doctest/doctest.h>

#include <algorithm>
#include <array>
#include <cstdint>
#include <limits>
#include <random>
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
  CHECK(plan.hash() == 0xF32E95D01D059983ULL);
  CHECK(orch::exchange_plan{}.hash() == 0xAFD5689DE35808A2ULL);
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

namespace {

/// Two views hold the same lists and sizes (one assertion per view keeps the test fast).
bool same_view(const orch::rank_view& a, const orch::rank_view& b) {
  return a.rank == b.rank && a.source_bytes == b.source_bytes &&
         a.destination_bytes == b.destination_bytes && a.self_bytes == b.self_bytes &&
         a.send_items == b.send_items && a.send_sizes == b.send_sizes &&
         a.send_source_offsets == b.send_source_offsets &&
         a.send_packed_offsets == b.send_packed_offsets && a.send_peers == b.send_peers &&
         a.send_peer_items == b.send_peer_items && a.send_peer_bytes == b.send_peer_bytes &&
         a.send_peer_displs == b.send_peer_displs && a.send_peer_first == b.send_peer_first &&
         a.recv_items == b.recv_items && a.recv_sizes == b.recv_sizes &&
         a.recv_packed_offsets == b.recv_packed_offsets &&
         a.recv_destination_offsets == b.recv_destination_offsets && a.recv_peers == b.recv_peers &&
         a.recv_peer_items == b.recv_peer_items && a.recv_peer_bytes == b.recv_peer_bytes &&
         a.recv_peer_displs == b.recv_peer_displs && a.recv_peer_first == b.recv_peer_first &&
         a.pack_is_identity == b.pack_is_identity && a.unpack_is_identity == b.unpack_is_identity;
}

/// A seeded plan shape: rank count (1 to 33), item count (up to 5 per rank) and how many
/// ranks hold items (all, or some for one seed in three).
struct plan_shape {
  rank_t ranks;
  std::size_t items;
  rank_t active;
};
plan_shape seeded_shape(std::mt19937_64& rng, std::uint64_t seed) {
  constexpr std::array<rank_t, 7> rank_counts{1, 2, 3, 5, 8, 16, 33};
  const rank_t ranks = rank_counts[seed % rank_counts.size()];
  const auto n = static_cast<std::size_t>(orch::test::uniform_int(rng, 0, 5 * ranks));
  const auto active =
      static_cast<rank_t>(seed % 3 == 0 ? orch::test::uniform_int(rng, 1, ranks) : ranks);
  return {ranks, n, active};
}

/// Every accessor of two plans agrees: hash, totals, per-rank buffers, pairs and every view.
void check_same_plan(const orch::exchange_plan& a, const orch::exchange_plan& b) {
  REQUIRE(a.ranks() == b.ranks());
  CHECK(a == b);
  CHECK(a.hash() == b.hash());
  CHECK(a.items() == b.items());
  CHECK(a.total_bytes() == b.total_bytes());
  CHECK(a.pair_count() == b.pair_count());
  CHECK(a.pairs() == b.pairs());
  for (rank_t r = 0; r < a.ranks(); ++r) {
    CAPTURE(r);
    const bool buffers = a.source_bytes(r) == b.source_bytes(r) &&
                         a.destination_bytes(r) == b.destination_bytes(r) &&
                         a.self_bytes(r) == b.self_bytes(r);
    CHECK(buffers);
    CHECK(same_view(a.view(r), b.view(r)));
  }
}

} // namespace

TEST_CASE("plan: inverse equals the plan built backwards, accessor for accessor") {
  // inverse() transposes the pair table instead of rebuilding from the items; the result must
  // be indistinguishable from make_plan(to, from, bytes), whatever the shape.
  for (std::uint64_t seed = 0; seed < 42; ++seed) {
    CAPTURE(seed);
    std::mt19937_64 rng(seed);
    const auto [ranks, n, active] = seeded_shape(rng, seed);
    auto from_rank = orch::test::random_ranks(rng, n, ranks, active);
    auto to_rank = orch::test::random_ranks(rng, n, ranks, active);
    if (seed % 5 == 1) {
      std::sort(from_rank.begin(), from_rank.end()); // runs, as sampled data comes
    }
    if (seed % 7 == 2) {
      std::fill(to_rank.begin(), to_rank.end(), rank_t{0}); // all to one
    }
    std::vector<bytes_t> bytes(n);
    for (auto& b : bytes) {
      b = seed % 4 == 3 || orch::test::uniform_int(rng, 0, 4) == 0
              ? 0
              : orch::test::uniform_int(rng, 1, 1000);
    }
    const auto from = orch::test::random_layout(rng, from_rank, ranks);
    const auto to = orch::test::random_layout(rng, to_rank, ranks);
    const auto plan = orch::make_plan(from, to, bytes);
    const auto back = orch::inverse(plan);
    CHECK(back.from() == to);
    CHECK(back.to() == from);
    check_same_plan(back, orch::make_plan(to, from, bytes));
    check_same_plan(orch::inverse(back), plan);
    // The hash make_plan computes while building equals the one computed on request (a plan
    // derived by compose has no precomputed hash).
    const auto same = orch::compose(plan, orch::make_plan(to, to, bytes));
    CHECK(same.hash() == plan.hash());
    CHECK(orch::compose(plan, back).hash() == orch::make_plan(from, from, bytes).hash());
  }
  check_same_plan(orch::inverse(orch::exchange_plan{}), orch::exchange_plan{});
}

TEST_CASE("plan: between copies of one layout, equals the plan between equal separate layouts") {
  // make_plan(l, l, ...) takes a shortcut when both layouts share their arrays (every item
  // stays in its slot); the plan must be the one built from two layouts that are equal but
  // distinct (the general pass), accessor for accessor, hash included.
  for (std::uint64_t seed = 0; seed < 30; ++seed) {
    CAPTURE(seed);
    std::mt19937_64 rng(seed);
    const auto [ranks, n, active] = seeded_shape(rng, seed);
    std::vector<bytes_t> bytes(n);
    for (auto& b : bytes) {
      b = orch::test::uniform_int(rng, 0, 4) == 0 ? 0 : orch::test::uniform_int(rng, 1, 1000);
    }
    const auto l =
        orch::test::random_layout(rng, orch::test::random_ranks(rng, n, ranks, active), ranks);
    const auto rank_of = l.rank_of_items();
    const auto slot_of = l.slot_of_items();
    const auto separate = orch::layout::from_placements(ranks, {rank_of.begin(), rank_of.end()},
                                                        {slot_of.begin(), slot_of.end()});
    REQUIRE(separate == l);
    REQUIRE((n == 0 || separate.rank_of_items().data() != rank_of.data())); // distinct arrays
    const auto shared = orch::make_plan(l, l, bytes);
    check_same_plan(shared, orch::make_plan(l, separate, bytes));
    CHECK(shared.hash() == orch::make_plan(separate, l, bytes).hash());
    // One pair per rank holding items, to itself, carrying the rank's buffer.
    std::size_t holding = 0;
    for (rank_t r = 0; r < ranks; ++r) {
      holding += l.count_on(r) > 0 ? std::size_t{1} : std::size_t{0};
    }
    CHECK(shared.pairs().size() == holding);
    for (const auto& pair : shared.pairs()) {
      CHECK(pair.source == pair.destination);
      CHECK(pair.bytes == shared.source_bytes(pair.source));
    }
  }
  // Overflow: the same error as the general pass (a source buffer of rank 1).
  const bytes_t big = bytes_t{1} << 62;
  const auto l = orch::layout::from_assignment(std::vector<rank_t>{1, 1, 0}, 2);
  CHECK_THROWS_WITH_AS(
      static_cast<void>(orch::make_plan(l, l, std::vector<bytes_t>{big, big, 1})),
      doctest::Contains("the destination buffer of rank 1 exceeds 2^63 - 1 bytes at item 1"),
      orch::overflow);
}

TEST_CASE("plan: overflow names the first buffer in check order") {
  // Destinations are checked before sources, lower ranks first.
  const bytes_t big = bytes_t{1} << 62;
  const auto from = orch::layout::from_assignment(std::vector<rank_t>{1, 1, 0, 0}, 3);
  const auto to = orch::layout::from_assignment(std::vector<rank_t>{2, 0, 2, 2}, 3);
  // Rank 1 sends 2^63 (source overflow); rank 2 receives 2^63 + 1 (destination overflow).
  CHECK_THROWS_WITH_AS(
      static_cast<void>(orch::make_plan(from, to, std::vector<bytes_t>{big, big, big, 1})),
      doctest::Contains("the destination buffer of rank 2 exceeds 2^63 - 1 bytes at item 2"),
      orch::overflow);
  // Only the source buffer of rank 1 overflows: items 0 and 1 go to different ranks.
  const auto spread = orch::layout::from_assignment(std::vector<rank_t>{2, 0, 1, 1}, 3);
  CHECK_THROWS_WITH_AS(
      static_cast<void>(orch::make_plan(from, spread, std::vector<bytes_t>{big, big, 1, 1})),
      doctest::Contains("make_plan: the source buffer of rank 1 exceeds 2^63 - 1 bytes at item 1"),
      orch::overflow);
  // The inverse of a valid plan never overflows, and neither does composing it.
  const auto ok = orch::make_plan(from, spread, std::vector<bytes_t>{big, big / 2, 7, 9});
  check_same_plan(orch::inverse(ok),
                  orch::make_plan(spread, from, std::vector<bytes_t>{big, big / 2, 7, 9}));
  CHECK(orch::compose(ok, orch::inverse(ok)).total_bytes() == ok.total_bytes());
}

TEST_CASE("plan: make_plan taking the sizes over equals the copying make_plan") {
  const worked_example ex;
  const auto copied = orch::make_plan(ex.from, ex.to, std::span<const bytes_t>(ex.bytes));
  auto sizes = ex.bytes;
  const auto taken = orch::make_plan(ex.from, ex.to, std::move(sizes));
  CHECK(taken == copied);
  CHECK(taken.hash() == 0xF32E95D01D059983ULL);
  CHECK(taken.pairs() == copied.pairs());
  for (rank_t r = 0; r < 4; ++r) {
    CHECK(taken.source_bytes(r) == copied.source_bytes(r));
    CHECK(taken.destination_bytes(r) == copied.destination_bytes(r));
    CHECK(taken.self_bytes(r) == copied.self_bytes(r));
  }
  // Seeded random layouts, many items per rank pair: the pair table and hash agree too.
  std::mt19937_64 rng(17);
  for (int round = 0; round < 20; ++round) {
    CAPTURE(round);
    const rank_t ranks = static_cast<rank_t>(1 + round % 7);
    std::vector<rank_t> a(static_cast<std::size_t>(40 + round));
    std::vector<rank_t> b(a.size());
    std::vector<bytes_t> bytes(a.size());
    for (std::size_t i = 0; i < a.size(); ++i) {
      a[i] = static_cast<rank_t>(rng() % static_cast<std::uint64_t>(ranks));
      b[i] = static_cast<rank_t>(rng() % static_cast<std::uint64_t>(ranks));
      bytes[i] = static_cast<bytes_t>(rng() % 1000);
    }
    const auto from = orch::layout::from_assignment(a, ranks);
    const auto to = orch::layout::from_assignment(b, ranks);
    const auto one = orch::make_plan(from, to, std::span<const bytes_t>(bytes));
    const auto two = orch::make_plan(from, to, std::vector<bytes_t>(bytes));
    CHECK(one.hash() == two.hash());
    CHECK(one.pairs() == two.pairs());
    orch::test::check_plan_invariants(two);
  }
}
