// SPDX-License-Identifier: Apache-2.0
// Seeded exchange scenarios of the CUDA module's tests (host and gpu): the shapes of the plans
// tests (empty ranks, zero-byte items, one huge item, all-to-one, identity) plus sizes that
// are all multiples of 16 (the vector path) or all odd (the byte path).
#pragma once

#include <plan/plan_support.hpp>

#include <orch/exchange/layout.hpp>
#include <orch/exchange/plan.hpp>
#include <orch/exchange/schedule.hpp>
#include <orch/topology.hpp>

#include <support/generators.hpp>

#include <algorithm>
#include <array>
#include <cstdint>
#include <random>
#include <vector>

namespace orch::test {

enum class cuda_shape {
  random,
  all_to_one,
  empty_ranks,
  identity,
  huge_item,
  all_zero,
  aligned16,
  odd_sizes
};
inline constexpr int cuda_shapes = 8;

struct cuda_scenario {
  topology topo;
  layout from;
  layout to;
  std::vector<bytes_t> bytes;
  cuda_shape kind = cuda_shape::random;
};

/// Scenario `seed`: 1 to 16 ranks on nodes of 1, 2 or 4 ranks (sometimes scattered), up to
/// 6 items per rank of 0..300 bytes, shaped by seed % cuda_shapes. `huge` is the size of the
/// huge item (kept small in the CPU tests, large on the GPU).
inline cuda_scenario make_cuda_scenario(std::uint64_t seed, bytes_t huge = (1 << 20) + 77) {
  std::mt19937_64 rng(seed);
  constexpr std::array<rank_t, 6> rank_counts{1, 2, 3, 4, 8, 16};
  constexpr std::array<rank_t, 3> node_sizes{1, 2, 4};
  const rank_t ranks = rank_counts[(seed / cuda_shapes) % rank_counts.size()];
  const rank_t size = node_sizes[(seed / (cuda_shapes * rank_counts.size())) % node_sizes.size()];
  cuda_scenario s;
  s.kind = static_cast<cuda_shape>(seed % cuda_shapes);
  s.topo = make_topology(rng, ranks, size, uniform_int(rng, 0, 3) == 0);
  const auto n = static_cast<std::size_t>(uniform_int(rng, 0, 6 * ranks));
  s.bytes.resize(n);
  for (auto& b : s.bytes) {
    b = uniform_int(rng, 0, 4) == 0 ? 0 : uniform_int(rng, 1, 300);
  }
  rank_t active = ranks;
  switch (s.kind) {
  case cuda_shape::empty_ranks:
    active = static_cast<rank_t>(uniform_int(rng, 1, (ranks + 1) / 2));
    break;
  case cuda_shape::huge_item:
    if (n > 0) {
      s.bytes[static_cast<std::size_t>(uniform_int(rng, 0, static_cast<std::int64_t>(n) - 1))] =
          huge;
    }
    break;
  case cuda_shape::all_zero:
    std::fill(s.bytes.begin(), s.bytes.end(), 0);
    break;
  case cuda_shape::aligned16:
    for (auto& b : s.bytes) {
      b = 16 * uniform_int(rng, 0, 64);
    }
    break;
  case cuda_shape::odd_sizes:
    for (auto& b : s.bytes) {
      b = 2 * uniform_int(rng, 0, 200) + 1;
    }
    break;
  default:
    break;
  }
  auto from_rank = random_ranks(rng, n, ranks, active);
  auto to_rank = random_ranks(rng, n, ranks, active);
  if (s.kind == cuda_shape::all_to_one) {
    std::fill(to_rank.begin(), to_rank.end(), static_cast<rank_t>(uniform_int(rng, 0, ranks - 1)));
  }
  s.from = random_layout(rng, from_rank, ranks);
  s.to = s.kind == cuda_shape::identity ? s.from : random_layout(rng, to_rank, ranks);
  return s;
}

} // namespace orch::test
