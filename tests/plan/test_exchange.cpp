// SPDX-License-Identifier: Apache-2.0
// Byte-exact delivery of the reference transport over seeded scenarios: flat plan, node-wise
// schedule, inverse, composition.
#include "plan_support.hpp"

#include <orch/exchange/execute.hpp>
#include <orch/exchange/layout.hpp>
#include <orch/exchange/plan.hpp>
#include <orch/exchange/schedule.hpp>
#include <orch/topology.hpp>

#include <support/generators.hpp>

#include <doctest/doctest.h>

#include <array>
#include <cstdint>
#include <random>
#include <string>
#include <vector>

using orch::bytes_t;
using orch::index_t;
using orch::rank_t;

namespace {

enum class shape { random, all_to_one, one_to_all, empty_ranks, identity, huge_item, all_zero };

struct scenario {
  orch::topology topo;
  orch::layout from;
  orch::layout to;
  std::vector<bytes_t> bytes;
  shape kind = shape::random;
};

scenario make_scenario(std::uint64_t seed) {
  std::mt19937_64 rng(seed);
  constexpr std::array<rank_t, 7> rank_counts{1, 2, 3, 4, 8, 16, 64};
  constexpr std::array<rank_t, 4> node_sizes{1, 2, 4, 8};
  const rank_t ranks = rank_counts[seed % rank_counts.size()];
  const rank_t size = node_sizes[(seed / rank_counts.size()) % node_sizes.size()];
  scenario s;
  s.kind = static_cast<shape>(orch::test::uniform_int(rng, 0, 6));
  s.topo = orch::test::make_topology(rng, ranks, size, orch::test::uniform_int(rng, 0, 3) == 0);
  const auto n = static_cast<std::size_t>(orch::test::uniform_int(rng, 0, 6 * ranks));
  s.bytes.resize(n);
  for (auto& b : s.bytes) {
    b = orch::test::uniform_int(rng, 0, 4) == 0 ? 0 : orch::test::uniform_int(rng, 1, 300);
  }
  rank_t active = ranks;
  switch (s.kind) {
  case shape::empty_ranks:
    active = static_cast<rank_t>(orch::test::uniform_int(rng, 1, (ranks + 1) / 2));
    break;
  case shape::huge_item:
    if (n > 0) {
      s.bytes[static_cast<std::size_t>(
          orch::test::uniform_int(rng, 0, static_cast<std::int64_t>(n) - 1))] =
          (1 << 20) + orch::test::uniform_int(rng, 1, 4095);
    }
    break;
  case shape::all_zero:
    std::fill(s.bytes.begin(), s.bytes.end(), 0);
    break;
  default:
    break;
  }
  auto from_rank = orch::test::random_ranks(rng, n, ranks, active);
  auto to_rank = orch::test::random_ranks(rng, n, ranks, active);
  if (s.kind == shape::all_to_one) {
    std::fill(to_rank.begin(), to_rank.end(),
              static_cast<rank_t>(orch::test::uniform_int(rng, 0, ranks - 1)));
  }
  if (s.kind == shape::one_to_all) {
    std::fill(from_rank.begin(), from_rank.end(),
              static_cast<rank_t>(orch::test::uniform_int(rng, 0, ranks - 1)));
  }
  s.from = orch::test::random_layout(rng, from_rank, ranks);
  s.to = s.kind == shape::identity ? s.from : orch::test::random_layout(rng, to_rank, ranks);
  return s;
}

} // namespace

TEST_CASE("exchange: byte-exact delivery over 280 seeded scenarios (flat, schedule, inverse)") {
  int run = 0;
  std::array<int, 7> kinds{};
  for (std::uint64_t seed = 1; seed <= 280; ++seed) {
    const auto s = make_scenario(seed);
    CAPTURE(seed);
    CAPTURE(s.topo.ranks());
    CAPTURE(s.topo.nodes());
    CAPTURE(s.from.items());
    const auto plan = orch::make_plan(s.from, s.to, s.bytes);
    orch::test::check_plan_invariants(plan);
    const auto src = orch::test::make_source(plan);

    const auto flat = orch::execute(plan, src);
    CHECK(orch::test::wrong_in_destination(plan, flat) == 0);

    const auto sched = orch::make_schedule(plan, s.topo);
    orch::test::check_plan_invariants(sched.inter_node);
    orch::test::check_plan_invariants(sched.intra_node);
    const auto staged = orch::execute(sched, src);
    CHECK(staged == flat); // byte-identical to the flat plan
    CHECK(sched.max_remote_peers() <= s.topo.nodes() - 1);
    for (rank_t r = 0; r < s.topo.ranks(); ++r) {
      CHECK(sched.intra_node.view(r).pack_is_identity);
      CHECK(sched.staging_bytes[static_cast<std::size_t>(r)] == sched.intra_node.source_bytes(r));
    }

    const auto back = orch::execute(orch::inverse(plan), flat);
    CHECK(back == src);

    const auto round = orch::compose(plan, orch::inverse(plan));
    CHECK(round == orch::make_plan(s.from, s.from, s.bytes));
    CHECK(round.hash() == orch::make_plan(s.from, s.from, s.bytes).hash());
    for (index_t i = 0; i < round.items(); ++i) {
      CHECK(round.destination_offset(i) == round.source_offset(i));
    }
    for (rank_t r = 0; r < s.topo.ranks(); ++r) {
      const auto v = round.view(r);
      CHECK(v.self_bytes == v.source_bytes);
      CHECK(v.send_peers.size() <= 1);
    }
    ++kinds[static_cast<std::size_t>(s.kind)];
    ++run;
  }
  CHECK(run == 280);
  for (const int k : kinds) {
    CHECK(k >= 20); // every shape is exercised
  }
}

TEST_CASE("exchange: composition is associative and executes like the chain") {
  for (std::uint64_t seed = 1000; seed < 1060; ++seed) {
    std::mt19937_64 rng(seed);
    CAPTURE(seed);
    const auto ranks = static_cast<rank_t>(orch::test::uniform_int(rng, 1, 12));
    const auto n = static_cast<std::size_t>(orch::test::uniform_int(rng, 0, 40));
    std::vector<bytes_t> bytes(n);
    for (auto& b : bytes) {
      b = orch::test::uniform_int(rng, 0, 64);
    }
    std::array<orch::layout, 4> l;
    for (auto& x : l) {
      x = orch::test::random_layout(rng, orch::test::random_ranks(rng, n, ranks, ranks), ranks);
    }
    const auto ab = orch::make_plan(l[0], l[1], bytes);
    const auto bc = orch::make_plan(l[1], l[2], bytes);
    const auto cd = orch::make_plan(l[2], l[3], bytes);
    const auto left = orch::compose(orch::compose(ab, bc), cd);
    const auto right = orch::compose(ab, orch::compose(bc, cd));
    CHECK(left == right);
    CHECK(left.hash() == right.hash());
    CHECK(left == orch::make_plan(l[0], l[3], bytes));
    const auto src = orch::test::make_source(ab);
    const auto chained = orch::execute(cd, orch::execute(bc, orch::execute(ab, src)));
    CHECK(orch::execute(left, src) == chained);
    CHECK(orch::test::wrong_in_destination(left, chained) == 0);
  }
}

TEST_CASE("exchange: buffers that do not match the plan are rejected") {
  const auto from = orch::layout::from_assignment(std::vector<rank_t>{0, 1}, 2);
  const auto to = orch::layout::from_assignment(std::vector<rank_t>{1, 0}, 2);
  const auto plan = orch::make_plan(from, to, std::vector<bytes_t>{3, 5});
  orch::rank_buffers src(2);
  src[0].resize(3);
  src[1].resize(4); // rank 1 should hold 5 bytes
  CHECK_THROWS_WITH_AS(static_cast<void>(orch::execute(plan, src)),
                       doctest::Contains("rank 1 has 4 bytes"), orch::invalid_argument);
  src.resize(1);
  CHECK_THROWS_AS(static_cast<void>(orch::execute(plan, src)), orch::invalid_argument);
  std::vector<std::byte> small(2);
  std::vector<std::byte> big(8);
  CHECK_THROWS_AS(orch::pack(plan.view(0), small, big), orch::invalid_argument);
  CHECK_THROWS_AS(orch::unpack(plan.view(0), big, small), orch::invalid_argument);
}
