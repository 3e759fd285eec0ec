// SPDX-License-Identifier: Apache-2.0
// Helpers of the plan tests: payload bytes generated from (item, byte index) so that receivers
// verify without a reference copy, random layouts and topologies from a seed.
#pragma once

#include <orch/exchange/execute.hpp>
#include <orch/exchange/layout.hpp>
#include <orch/exchange/plan.hpp>
#include <orch/placement/engine.hpp>
#include <orch/placement/rearrange.hpp>
#include <orch/quality.hpp>
#include <orch/topology.hpp>

#include <support/generators.hpp>

#include <doctest/doctest.h>

#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <numeric>
#include <random>
#include <vector>

namespace orch::test {

/// The ring plan: rank r's one item of `bytes` bytes moves to rank (r + 1) mod ranks (with
/// one rank, the item stays). The smallest plan in which every rank sends and receives.
inline exchange_plan ring_plan(rank_t ranks, bytes_t bytes) {
  std::vector<rank_t> from;
  std::vector<rank_t> to;
  for (rank_t r = 0; r < ranks; ++r) {
    from.push_back(r);
    to.push_back((r + 1) % ranks);
  }
  return make_plan(layout::from_assignment(from, ranks), layout::from_assignment(to, ranks),
                   std::vector<bytes_t>(static_cast<std::size_t>(ranks), bytes));
}

/// splitmix64 step: a bijective mixer, so neighbouring (item, word) pairs give unrelated bytes.
inline std::uint64_t mix64(std::uint64_t x) {
  x += 0x9E3779B97F4A7C15ULL;
  x = (x ^ (x >> 30)) * 0xBF58476D1CE4E5B9ULL;
  x = (x ^ (x >> 27)) * 0x94D049BB133111EBULL;
  return x ^ (x >> 31);
}

/// Byte `index` of the payload of `item`.
inline std::byte payload_byte(index_t item, bytes_t index) {
  const auto word =
      mix64((static_cast<std::uint64_t>(item) << 40) ^ static_cast<std::uint64_t>(index >> 3));
  return static_cast<std::byte>((word >> (8 * (index & 7))) & 0xFFU);
}

/// Writes item's payload at `offset` of `buffer`.
inline void fill_item(std::vector<std::byte>& buffer, bytes_t offset, index_t item, bytes_t size) {
  for (bytes_t b = 0; b < size; ++b) {
    buffer[static_cast<std::size_t>(offset + b)] = payload_byte(item, b);
  }
}

/// Number of bytes of `item` at `offset` that differ from its payload (0 = delivered intact).
inline bytes_t wrong_bytes(const std::vector<std::byte>& buffer, bytes_t offset, index_t item,
                           bytes_t size) {
  bytes_t wrong = 0;
  for (bytes_t b = 0; b < size; ++b) {
    wrong += buffer[static_cast<std::size_t>(offset + b)] != payload_byte(item, b) ? 1 : 0;
  }
  return wrong;
}

/// Source buffers of every rank for `plan`, each item's payload at its source offset.
inline rank_buffers make_source(const exchange_plan& plan) {
  rank_buffers src(static_cast<std::size_t>(plan.ranks()));
  for (rank_t r = 0; r < plan.ranks(); ++r) {
    src[static_cast<std::size_t>(r)].assign(static_cast<std::size_t>(plan.source_bytes(r)),
                                            std::byte{0xEE});
  }
  for (index_t i = 0; i < plan.items(); ++i) {
    fill_item(src[static_cast<std::size_t>(plan.from().rank_of(i))], plan.source_offset(i), i,
              plan.item_bytes()[static_cast<std::size_t>(i)]);
  }
  return src;
}

/// Bytes in destination buffers that are not the expected payload, plus size mismatches.
inline bytes_t wrong_in_destination(const exchange_plan& plan, const rank_buffers& dst) {
  bytes_t wrong = 0;
  for (rank_t r = 0; r < plan.ranks(); ++r) {
    if (dst[static_cast<std::size_t>(r)].size() !=
        static_cast<std::size_t>(plan.destination_bytes(r))) {
      return -1;
    }
  }
  for (index_t i = 0; i < plan.items(); ++i) {
    wrong +=
        wrong_bytes(dst[static_cast<std::size_t>(plan.to().rank_of(i))], plan.destination_offset(i),
                    i, plan.item_bytes()[static_cast<std::size_t>(i)]);
  }
  return wrong;
}

/// A topology of `ranks` ranks with nodes of `size` ranks (the last one smaller when size does
/// not divide ranks); `scatter` numbers the nodes of ranks in a shuffled order.
inline topology make_topology(std::mt19937_64& rng, rank_t ranks, rank_t size, bool scatter) {
  if (!scatter && ranks % size == 0) {
    return topology::uniform(ranks, size);
  }
  std::vector<rank_t> node(static_cast<std::size_t>(ranks));
  for (rank_t r = 0; r < ranks; ++r) {
    node[static_cast<std::size_t>(r)] = r / size;
  }
  if (scatter) {
    for (std::size_t i = node.size(); i > 1; --i) {
      const auto j =
          static_cast<std::size_t>(uniform_int(rng, 0, static_cast<std::int64_t>(i) - 1));
      std::swap(node[i - 1], node[j]);
    }
  }
  return topology::from_node_of_rank(node);
}

/// A random layout of `rank_of` with one of three slot orders: item order, a random key, or
/// random explicit placements.
inline layout random_layout(std::mt19937_64& rng, std::vector<rank_t> rank_of, rank_t ranks) {
  const auto mode = uniform_int(rng, 0, 2);
  if (mode == 0) {
    return layout::from_assignment(rank_of, ranks);
  }
  if (mode == 1) {
    std::vector<index_t> key(rank_of.size());
    for (auto& k : key) {
      k = uniform_int(rng, 0, 3);
    }
    return layout::from_keys(rank_of, ranks, key);
  }
  std::vector<std::vector<index_t>> on(static_cast<std::size_t>(ranks));
  for (std::size_t i = 0; i < rank_of.size(); ++i) {
    on[static_cast<std::size_t>(rank_of[i])].push_back(static_cast<index_t>(i));
  }
  std::vector<index_t> slot(rank_of.size());
  for (auto& list : on) {
    for (std::size_t a = list.size(); a > 1; --a) {
      const auto b =
          static_cast<std::size_t>(uniform_int(rng, 0, static_cast<std::int64_t>(a) - 1));
      std::swap(list[a - 1], list[b]);
    }
    for (std::size_t s = 0; s < list.size(); ++s) {
      slot[static_cast<std::size_t>(list[s])] = static_cast<index_t>(s);
    }
  }
  return layout::from_placements(ranks, std::move(rank_of), std::move(slot));
}

/// Random ranks for n items, only on `active` ranks drawn from [0, ranks).
inline std::vector<rank_t> random_ranks(std::mt19937_64& rng, std::size_t n, rank_t ranks,
                                        rank_t active) {
  std::vector<rank_t> pool(static_cast<std::size_t>(ranks));
  std::iota(pool.begin(), pool.end(), 0);
  for (std::size_t i = pool.size(); i > 1; --i) {
    const auto j = static_cast<std::size_t>(uniform_int(rng, 0, static_cast<std::int64_t>(i) - 1));
    std::swap(pool[i - 1], pool[j]);
  }
  std::vector<rank_t> out(n);
  for (auto& r : out) {
    r = pool[static_cast<std::size_t>(uniform_int(rng, 0, active - 1))];
  }
  return out;
}

/// A seeded plan for the one-rank helpers' tests: 1 to 9 ranks, some of them empty on either
/// side; item sizes are `unit` × (0 with probability 1/4, else 1..max_units), so zero-byte
/// items occur and every size is a multiple of `unit`.
inline exchange_plan random_unit_plan(std::uint64_t seed, bytes_t unit, std::int64_t max_units) {
  std::mt19937_64 rng(seed);
  const auto ranks = static_cast<rank_t>(uniform_int(rng, 1, 9));
  const auto n = static_cast<std::size_t>(uniform_int(rng, 0, 5 * ranks));
  std::vector<bytes_t> bytes(n);
  for (auto& b : bytes) {
    b = unit * (uniform_int(rng, 0, 3) == 0 ? 0 : uniform_int(rng, 1, max_units));
  }
  const auto active = [&] { return static_cast<rank_t>(uniform_int(rng, 1, ranks)); };
  const auto from = random_layout(rng, random_ranks(rng, n, ranks, active()), ranks);
  const auto to = random_layout(rng, random_ranks(rng, n, ranks, active()), ranks);
  return make_plan(from, to, bytes);
}

/// Structural invariants of a plan, checked against its layouts: every rank's send entries
/// are its `from` items grouped by destination peer (ascending), then destination slot, laid
/// back to back; receive entries mirror the senders' chunks; pairs agree on both sides.
inline void check_plan_invariants(const exchange_plan& plan) {
  const auto& from = plan.from();
  const auto& to = plan.to();
  const auto bytes = plan.item_bytes();
  index_t pairs = 0;
  bytes_t total = 0;
  for (rank_t r = 0; r < plan.ranks(); ++r) {
    CAPTURE(r);
    const auto v = plan.view(r);
    REQUIRE(v.send_items.size() == static_cast<std::size_t>(from.count_on(r)));
    REQUIRE(v.recv_items.size() == static_cast<std::size_t>(to.count_on(r)));
    bytes_t acc = 0;
    bytes_t self = 0;
    for (std::size_t e = 0; e < v.send_items.size(); ++e) {
      const index_t i = v.send_items[e];
      CHECK(from.rank_of(i) == r);
      CHECK(v.send_sizes[e] == bytes[static_cast<std::size_t>(i)]);
      CHECK(v.send_source_offsets[e] == plan.source_offset(i));
      CHECK(v.send_packed_offsets[e] == acc);
      acc += v.send_sizes[e];
      if (e > 0) {
        const index_t prev = v.send_items[e - 1];
        const bool ordered =
            to.rank_of(prev) < to.rank_of(i) ||
            (to.rank_of(prev) == to.rank_of(i) && to.slot_of(prev) < to.slot_of(i));
        CHECK(ordered);
      }
      self += to.rank_of(i) == r ? v.send_sizes[e] : 0;
    }
    CHECK(acc == v.source_bytes);
    CHECK(self == v.self_bytes);
    CHECK(self == plan.self_bytes(r));
    CHECK(v.source_bytes == plan.source_bytes(r));
    index_t items = 0;
    for (std::size_t p = 0; p < v.send_peers.size(); ++p) {
      CHECK(v.send_peer_items[p] > 0);
      if (p > 0) {
        CHECK(v.send_peers[p - 1] < v.send_peers[p]);
      }
      CHECK(v.send_peer_first[p] == items);
      const auto first = static_cast<std::size_t>(v.send_peer_first[p]);
      CHECK(v.send_peer_displs[p] == v.send_packed_offsets[first]);
      bytes_t b = 0;
      for (index_t x = 0; x < v.send_peer_items[p]; ++x) {
        const index_t i = v.send_items[first + static_cast<std::size_t>(x)];
        CHECK(to.rank_of(i) == v.send_peers[p]);
        b += bytes[static_cast<std::size_t>(i)];
      }
      CHECK(b == v.send_peer_bytes[p]);
      const auto back = plan.pair(r, v.send_peers[p]);
      CHECK(back.items == v.send_peer_items[p]);
      CHECK(back.bytes == v.send_peer_bytes[p]);
      items += v.send_peer_items[p];
    }
    CHECK(items == from.count_on(r));
    pairs += static_cast<index_t>(v.send_peers.size());
    total += v.source_bytes;
    // Receive side: chunk from s equals what s sends to r, item for item.
    acc = 0;
    for (std::size_t e = 0; e < v.recv_items.size(); ++e) {
      const index_t i = v.recv_items[e];
      CHECK(to.rank_of(i) == r);
      CHECK(v.recv_packed_offsets[e] == acc);
      CHECK(v.recv_destination_offsets[e] == plan.destination_offset(i));
      acc += v.recv_sizes[e];
    }
    CHECK(acc == v.destination_bytes);
    for (std::size_t p = 0; p < v.recv_peers.size(); ++p) {
      if (p > 0) {
        CHECK(v.recv_peers[p - 1] < v.recv_peers[p]);
      }
      const auto sv = plan.view(v.recv_peers[p]);
      const auto it = std::find(sv.send_peers.begin(), sv.send_peers.end(), r);
      REQUIRE(it != sv.send_peers.end());
      const auto q = static_cast<std::size_t>(it - sv.send_peers.begin());
      CHECK(sv.send_peer_items[q] == v.recv_peer_items[p]);
      CHECK(sv.send_peer_bytes[q] == v.recv_peer_bytes[p]);
      for (index_t x = 0; x < v.recv_peer_items[p]; ++x) {
        CHECK(sv.send_items[static_cast<std::size_t>(sv.send_peer_first[q] + x)] ==
              v.recv_items[static_cast<std::size_t>(v.recv_peer_first[p] + x)]);
      }
    }
  }
  CHECK(pairs == plan.pair_count());
  CHECK(total == plan.total_bytes());
}

/// What every placement against reference bins must hold: loads under the target and equal
/// to the assignment's, traffic as measured, at least the inter-node bound, and never more
/// bytes across nodes than the reference bins rearranged node-wise.
inline void check_placement_against_reference(const locality_result& res,
                                              const std::vector<cost_t>& costs,
                                              const std::vector<rank_t>& current,
                                              const std::vector<bytes_t>& bytes,
                                              const topology& topo,
                                              const std::vector<rank_t>& reference_bin_of) {
  CHECK(res.max_load <= res.target);
  CHECK(res.loads == bin_loads(costs, res.rank_of, topo.ranks()));
  CHECK(res.moved == measure_traffic(current, res.rank_of, bytes, topo));
  CHECK(res.moved.inter_node >= res.inter_node_lower_bound);
  CHECK(res.moved.inter_node <=
        rearrange_bins(reference_bin_of, current, bytes, topo).moves().inter_node);
}

} // namespace orch::test
