// SPDX-License-Identifier: Apache-2.0
// Fuzz target: layouts, exchange plans and node-wise schedules. From fuzzed layouts (by
// assignment, by keys, or by explicit and possibly invalid placements), item sizes (possibly
// negative or huge) and a topology: either an orch::error, or compose(p, inverse(p)) is the
// identity, inverse(p) equals make_plan(to, from), compose(a→b, b→c) equals make_plan(a, c),
// the schedule's two stages move the plan's bytes, and the reference executor delivers every
// item byte-exactly through the flat plan, the schedule and back through the inverse.
#define ORCH_FUZZ_NAME "plan"
#include "../fuzz_input.hpp"

#include <orch/exchange/execute.hpp>
#include <orch/exchange/layout.hpp>
#include <orch/exchange/plan.hpp>
#include <orch/exchange/schedule.hpp>
#include <orch/topology.hpp>

#include <cstdint>
#include <vector>

namespace {

using orch::bytes_t;
using orch::index_t;
using orch::rank_t;

orch::layout fuzzed_layout(orch::fuzz::input& in, std::size_t n, rank_t ranks) {
  std::vector<rank_t> rank_of(n);
  for (auto& r : rank_of) {
    r = static_cast<rank_t>(in.uniform(0, 15) == 0 ? in.uniform(-1, ranks)
                                                   : in.uniform(0, ranks - 1));
  }
  switch (in.uniform(0, 2)) {
  case 0:
    return orch::layout::from_assignment(rank_of, ranks);
  case 1: {
    std::vector<index_t> key(n);
    for (auto& k : key) {
      k = in.uniform(0, 7);
    }
    return orch::layout::from_keys(rank_of, ranks, key);
  }
  default: {
    // Explicit slots: the next free slot of the rank, sometimes a wrong one.
    std::vector<index_t> next(static_cast<std::size_t>(ranks) + 1, 0);
    std::vector<index_t> slot_of(n);
    for (std::size_t i = 0; i < n; ++i) {
      const auto r = static_cast<std::size_t>(std::max<rank_t>(0, std::min(rank_of[i], ranks)));
      slot_of[i] = in.uniform(0, 31) == 0 ? in.uniform(-1, 4) : next[r]++;
    }
    return orch::layout::from_placements(ranks, rank_of, slot_of);
  }
  }
}

std::uint8_t fill(index_t item, bytes_t j) {
  return static_cast<std::uint8_t>(
      (static_cast<std::uint64_t>(item) * 131 + static_cast<std::uint64_t>(j) * 7 + 1) & 0xFFU);
}

orch::rank_buffers source_of(const orch::exchange_plan& p) {
  orch::rank_buffers b(static_cast<std::size_t>(p.ranks()));
  for (rank_t r = 0; r < p.ranks(); ++r) {
    b[static_cast<std::size_t>(r)].resize(static_cast<std::size_t>(p.source_bytes(r)));
  }
  for (index_t i = 0; i < p.items(); ++i) {
    auto& buf = b[static_cast<std::size_t>(p.from().rank_of(i))];
    for (bytes_t j = 0; j < p.item_bytes()[static_cast<std::size_t>(i)]; ++j) {
      buf[static_cast<std::size_t>(p.source_offset(i) + j)] = std::byte{fill(i, j)};
    }
  }
  return b;
}

/// Every item's bytes sit at its destination offset on its destination rank.
bool delivered(const orch::exchange_plan& p, const orch::rank_buffers& dst) {
  if (dst.size() != static_cast<std::size_t>(p.ranks())) {
    return false;
  }
  for (rank_t r = 0; r < p.ranks(); ++r) {
    if (dst[static_cast<std::size_t>(r)].size() !=
        static_cast<std::size_t>(p.destination_bytes(r))) {
      return false;
    }
  }
  for (index_t i = 0; i < p.items(); ++i) {
    const auto& buf = dst[static_cast<std::size_t>(p.to().rank_of(i))];
    for (bytes_t j = 0; j < p.item_bytes()[static_cast<std::size_t>(i)]; ++j) {
      if (buf[static_cast<std::size_t>(p.destination_offset(i) + j)] != std::byte{fill(i, j)}) {
        return false;
      }
    }
  }
  return true;
}

} // namespace

int orch_fuzz_plan(const std::uint8_t* data, std::size_t size) {
  orch::fuzz::input in(data, size);
  const auto ranks = static_cast<rank_t>(in.uniform(1, 12));
  const auto n = static_cast<std::size_t>(in.uniform(0, 40));
  const bool huge = in.uniform(0, 7) == 0;
  std::vector<bytes_t> bytes(n);
  for (auto& b : bytes) {
    b = huge ? in.length(64) : in.uniform(0, 24);
  }
  std::vector<rank_t> node_of(static_cast<std::size_t>(ranks));
  const auto per_node = static_cast<rank_t>(in.uniform(1, 4));
  const bool scattered = in.boolean();
  std::vector<rank_t> renumber(static_cast<std::size_t>(ranks) + 1, -1);
  rank_t nodes = 0;
  for (rank_t r = 0; r < ranks; ++r) {
    // Scattered: nodes in any order, numbered by first appearance (ids must be 0..nodes-1).
    const auto raw =
        static_cast<std::size_t>(scattered ? in.uniform(0, ranks / per_node) : r / per_node);
    if (renumber[raw] < 0) {
      renumber[raw] = nodes++;
    }
    node_of[static_cast<std::size_t>(r)] = renumber[raw];
  }
  try {
    const auto a = fuzzed_layout(in, n, ranks);
    const auto b = fuzzed_layout(in, n, ranks);
    const auto c = fuzzed_layout(in, n, ranks);
    const auto topo = orch::topology::from_node_of_rank(node_of);
    const auto ab = orch::make_plan(a, b, bytes);
    const auto bc = orch::make_plan(b, c, bytes);
    const auto back = orch::inverse(ab);
    ORCH_FUZZ_CHECK(back == orch::make_plan(b, a, bytes));
    ORCH_FUZZ_CHECK(back.hash() == orch::make_plan(b, a, bytes).hash());
    const auto identity = orch::compose(ab, back);
    ORCH_FUZZ_CHECK(identity == orch::make_plan(a, a, bytes));
    ORCH_FUZZ_CHECK(identity.hash() == orch::make_plan(a, a, bytes).hash());
    for (rank_t r = 0; r < ranks; ++r) {
      ORCH_FUZZ_CHECK(identity.self_bytes(r) == identity.source_bytes(r));
    }
    const auto ac = orch::compose(ab, bc);
    ORCH_FUZZ_CHECK(ac == orch::make_plan(a, c, bytes) &&
                    ac.hash() == orch::make_plan(a, c, bytes).hash());
    bytes_t total = 0;
    for (const auto x : bytes) {
      total += x;
    }
    if (total > (bytes_t{1} << 20)) {
      return 0; // plans of huge items are checked above; buffers of them are not allocated
    }
    ORCH_FUZZ_CHECK(ab.total_bytes() == total);
    const auto schedule = orch::make_schedule(ab, topo);
    ORCH_FUZZ_CHECK(schedule.inter_node.total_bytes() == total &&
                    schedule.intra_node.total_bytes() == total);
    ORCH_FUZZ_CHECK(schedule.inter_node.from() == a && schedule.intra_node.to() == b);
    for (rank_t r = 0; r < ranks; ++r) {
      ORCH_FUZZ_CHECK(schedule.staging_bytes[static_cast<std::size_t>(r)] ==
                      schedule.inter_node.destination_bytes(r));
    }
    // Stage 2 never leaves a node.
    for (index_t i = 0; i < ab.items(); ++i) {
      ORCH_FUZZ_CHECK(topo.node_of(schedule.intra_node.from().rank_of(i)) ==
                      topo.node_of(schedule.intra_node.to().rank_of(i)));
    }
    const auto src = source_of(ab);
    const auto flat = orch::execute(ab, src);
    ORCH_FUZZ_CHECK(delivered(ab, flat));
    ORCH_FUZZ_CHECK(orch::execute(schedule, src) == flat);
    const auto returned = orch::execute(back, flat);
    ORCH_FUZZ_CHECK(returned == src);
  } catch (const orch::error&) {
    return 0;
  }
  return 0;
}
