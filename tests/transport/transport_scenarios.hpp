// SPDX-License-Identifier: Apache-2.0
// Seeded exchange scenarios of the transport tests (the backend-neutral core here, the MPI
// module's multi-process tests too): empty ranks, zero-byte items, all-to-one, identity, one
// item over 1 MiB, on uniform, non-uniform and scattered nodes of 1, 2 or 4 ranks.
#pragma once

#include <plan/plan_support.hpp>

#include <orch/exchange/layout.hpp>
#include <orch/exchange/plan.hpp>
#include <orch/exchange/schedule.hpp>
#include <orch/topology.hpp>
#include <orch/types.hpp>

#include <support/generators.hpp>

#include <algorithm>
#include <cstdint>
#include <random>
#include <vector>

namespace orch::test {

enum class transport_shape {
  random,
  empty_ranks,
  all_zero,
  all_to_one,
  identity,
  huge_item,
  one_to_all,
  dense
};
inline constexpr int transport_shapes = 8;

struct transport_scenario {
  topology topo;
  layout from;
  layout to;
  std::vector<bytes_t> bytes;
  transport_shape kind = transport_shape::random;
};

/// Scenario `seed` on `ranks` ranks: nodes of `node_size` ranks (the last node smaller when it
/// does not divide ranks, or shuffled node numbers one time in four: non-uniform nodes), up to
/// 6 items per rank of 0..400 bytes (one in four of zero bytes), shaped by seed % shapes.
/// `huge` is the size of the huge item.
inline transport_scenario make_transport_scenario(std::uint64_t seed, rank_t ranks,
                                                  rank_t node_size, bytes_t huge) {
  std::mt19937_64 rng(mix64(seed) + static_cast<std::uint64_t>(ranks));
  transport_scenario s;
  s.kind = static_cast<transport_shape>(seed % transport_shapes);
  s.topo = make_topology(rng, ranks, node_size, uniform_int(rng, 0, 3) == 0);
  const auto n = static_cast<std::size_t>(uniform_int(rng, 0, 6 * ranks));
  s.bytes.resize(n);
  for (auto& b : s.bytes) {
    b = uniform_int(rng, 0, 3) == 0 ? 0 : uniform_int(rng, 1, 400);
  }
  rank_t active = ranks;
  switch (s.kind) {
  case transport_shape::empty_ranks:
    active = static_cast<rank_t>(uniform_int(rng, 1, (ranks + 1) / 2));
    break;
  case transport_shape::all_zero:
    std::fill(s.bytes.begin(), s.bytes.end(), 0);
    break;
  case transport_shape::huge_item:
    if (n > 0) {
      s.bytes[static_cast<std::size_t>(uniform_int(rng, 0, static_cast<std::int64_t>(n) - 1))] =
          huge;
    }
    break;
  default:
    break;
  }
  auto from_rank = random_ranks(rng, n, ranks, active);
  auto to_rank = random_ranks(rng, n, ranks, active);
  if (s.kind == transport_shape::all_to_one) {
    std::fill(to_rank.begin(), to_rank.end(), static_cast<rank_t>(uniform_int(rng, 0, ranks - 1)));
  }
  if (s.kind == transport_shape::one_to_all) {
    std::fill(from_rank.begin(), from_rank.end(),
              static_cast<rank_t>(uniform_int(rng, 0, ranks - 1)));
  }
  if (s.kind == transport_shape::dense) {
    // Every rank sends one item to every rank: all pairs communicate.
    const auto k = static_cast<std::size_t>(ranks);
    s.bytes.resize(k * k);
    from_rank.resize(k * k);
    to_rank.resize(k * k);
    for (std::size_t i = 0; i < k * k; ++i) {
      s.bytes[i] = uniform_int(rng, 1, 300);
      from_rank[i] = static_cast<rank_t>(i / k);
      to_rank[i] = static_cast<rank_t>(i % k);
    }
  }
  s.from = random_layout(rng, from_rank, ranks);
  s.to = s.kind == transport_shape::identity ? s.from : random_layout(rng, to_rank, ranks);
  return s;
}

} // namespace orch::test
