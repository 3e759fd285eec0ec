// SPDX-License-Identifier: Apache-2.0
/// Construction of exchange plans (validation, buffer sizes, the sparse pair table) and of the
/// per-rank views (send and receive lists with their offsets).
#pragma once

#include <orch/config.hpp>
#include <orch/detail/exchange/plan_pairs.hpp>
#include <orch/detail/primitives/hash.hpp>
#include <orch/exchange/layout.hpp>
#include <orch/exchange/plan.hpp>
#include <orch/placement/traffic.hpp>
#include <orch/topology.hpp>
#include <orch/types.hpp>

#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <memory>
#include <span>
#include <utility>
#include <vector>

namespace orch::detail {

/// Access to a plan's shared item sizes, so that plans derived from it (inverse, compose,
/// schedule stages) share one array instead of copying it, and to its arrays.
struct plan_access {
  [[nodiscard]] static const std::shared_ptr<const std::vector<bytes_t>>&
  shared_bytes(const exchange_plan& p) noexcept {
    return p.d_->bytes;
  }
  /// The plan's arrays, for readers that walk its pair table without copying it.
  [[nodiscard]] static const plan_data& data(const exchange_plan& p) noexcept { return *p.d_; }
};

/// orch::inverse: everything that make_plan(to, from, bytes) would compute follows from
/// `plan` — the same buffers with the roles of source and destination swapped, so the totals
/// are swapped, self traffic is unchanged and the pair (s, d) becomes (d, s) with the same
/// counts. Transposing the CSR pair table by a counting sort over sources ascending leaves
/// every new row sorted by peer, as build_plan would. No item is read.
[[nodiscard]] inline exchange_plan inverse_plan(const exchange_plan& plan) {
  const plan_data& p = *plan.d_;
  auto data = std::make_shared<plan_data>();
  plan_data& q = *data;
  q.from = p.to;
  q.to = p.from;
  q.bytes = p.bytes;
  q.total = p.total;
  q.source_total = p.destination_total;
  q.destination_total = p.source_total;
  q.self = p.self;
  const std::size_t k = p.source_total.size();
  const std::size_t m = p.pair_peer.size();
  q.pair_first.assign(k + 1, 0);
  for (const rank_t d : p.pair_peer) {
    ++q.pair_first[static_cast<std::size_t>(d) + 1];
  }
  for (std::size_t r = 0; r < k; ++r) {
    q.pair_first[r + 1] += q.pair_first[r];
  }
  q.pair_peer.resize(m);
  q.pair_items.resize(m);
  q.pair_bytes.resize(m);
  std::vector<index_t> next(q.pair_first.begin(), q.pair_first.end() - 1);
  for (std::size_t s = 0; s < k; ++s) {
    for (auto e = static_cast<std::size_t>(p.pair_first[s]);
         e < static_cast<std::size_t>(p.pair_first[s + 1]); ++e) {
      const auto at = static_cast<std::size_t>(next[static_cast<std::size_t>(p.pair_peer[e])]++);
      q.pair_peer[at] = static_cast<rank_t>(s);
      q.pair_items[at] = p.pair_items[e];
      q.pair_bytes[at] = p.pair_bytes[e];
    }
  }
  return exchange_plan(std::move(data));
}

/// Validates the inputs and builds the shared part of a plan: buffer sizes, self bytes and
/// the (source, destination) pair table, and the hash when `with_hash` (make_plan: ranks
/// compare it right away). Layouts and sizes are shared, never copied.
[[nodiscard]] inline exchange_plan build_plan(layout from, layout to,
                                              std::shared_ptr<const std::vector<bytes_t>> sizes,
                                              const char* where, bool with_hash) {
  const auto& bytes = *sizes;
  if (from.items() != to.items()) {
    throw_invalid_argument(where, ": layouts of different item counts (from: ", from.items(),
                           " items, to: ", to.items(), " items)");
  }
  if (from.ranks() != to.ranks()) {
    throw_invalid_argument(where, ": layouts on different rank counts (from: ", from.ranks(),
                           " ranks, to: ", to.ranks(), " ranks)");
  }
  if (static_cast<index_t>(bytes.size()) != from.items()) {
    throw_invalid_argument(where, ": ", bytes.size(), " item sizes for ", from.items(), " items");
  }
  // A negative size sets the sign bit of the OR of all sizes: one branch-free (vectorised)
  // pass, and the item is looked for only when there is one.
  bytes_t any = 0;
  for (const bytes_t b : bytes) {
    any |= b;
  }
  if (any < 0) {
    for (std::size_t i = 0; i < bytes.size(); ++i) {
      if (bytes[i] < 0) {
        throw_invalid_argument(where, ": item ", i, " has negative size ", bytes[i], " bytes");
      }
    }
  }
  auto data = std::make_shared<plan_data>();
  plan_data& p = *data;
  p.from = std::move(from);
  p.to = std::move(to);
  p.bytes = std::move(sizes);
  if (!with_hash) {
    pairs_by_destination(p, where);
  } else if (!pairs_by_source_with_hash(p)) {
    throw_plan_overflow(p, where);
  }
  return exchange_plan(std::move(data));
}

/// The view of one rank: its items sorted into send order (destination rank, destination
/// slot) and receive order (source rank, destination slot), with offsets and peer runs.
[[nodiscard]] inline rank_view build_view(const plan_data& p, rank_t rank) {
  const auto& bytes = *p.bytes;
  const auto from_rank = p.from.rank_of_items();
  const auto to_rank = p.to.rank_of_items();
  const auto to_slot = p.to.slot_of_items();
  rank_view v;
  v.rank = rank;
  const auto r = static_cast<std::size_t>(rank);
  v.source_bytes = p.source_total[r];
  v.destination_bytes = p.destination_total[r];
  v.self_bytes = p.self[r];

  // Offsets of a rank's items in its own buffer, by slot (no sum can overflow: the totals were
  // checked when the plan was built).
  const auto slot_offsets = [&](std::span<const index_t> items) {
    std::vector<bytes_t> off(items.size());
    bytes_t acc = 0;
    for (std::size_t s = 0; s < items.size(); ++s) {
      off[s] = acc;
      acc += bytes[static_cast<std::size_t>(items[s])];
    }
    return off;
  };
  // Lays out entries in `order` (slots of `items`) back to back, opening a peer per run.
  const auto fill = [&](std::span<const index_t> items, const std::vector<bytes_t>& own_offset,
                        const std::vector<std::size_t>& order, std::span<const rank_t> peer_of,
                        std::vector<index_t>& ids, std::vector<bytes_t>& sizes,
                        std::vector<bytes_t>& packed, std::vector<bytes_t>& unpacked,
                        std::vector<rank_t>& peers, std::vector<index_t>& peer_items,
                        std::vector<bytes_t>& peer_bytes, std::vector<bytes_t>& peer_displs,
                        std::vector<index_t>& peer_first, bool& identity) {
    const std::size_t m = order.size();
    ids.resize(m);
    sizes.resize(m);
    packed.resize(m);
    unpacked.resize(m);
    bytes_t acc = 0;
    rank_t peer = -1;
    for (std::size_t e = 0; e < m; ++e) {
      const auto item = static_cast<std::size_t>(items[order[e]]);
      const rank_t q = peer_of[item];
      if (q != peer) {
        peer = q;
        peers.push_back(q);
        peer_items.push_back(0);
        peer_bytes.push_back(0);
        peer_displs.push_back(acc);
        peer_first.push_back(static_cast<index_t>(e));
      }
      ids[e] = static_cast<index_t>(item);
      sizes[e] = bytes[item];
      packed[e] = acc;
      unpacked[e] = own_offset[order[e]];
      identity = identity && unpacked[e] == acc;
      acc += bytes[item];
      ++peer_items.back();
      peer_bytes.back() += bytes[item];
    }
  };

  const auto sent = p.from.items_on(rank);
  std::vector<std::size_t> order(sent.size());
  for (std::size_t s = 0; s < order.size(); ++s) {
    order[s] = s;
  }
  // (destination rank, destination slot) is unique per item: the order is total.
  std::sort(order.begin(), order.end(), [&](std::size_t a, std::size_t b) {
    const auto ia = static_cast<std::size_t>(sent[a]);
    const auto ib = static_cast<std::size_t>(sent[b]);
    return to_rank[ia] != to_rank[ib] ? to_rank[ia] < to_rank[ib] : to_slot[ia] < to_slot[ib];
  });
  fill(sent, slot_offsets(sent), order, to_rank, v.send_items, v.send_sizes, v.send_packed_offsets,
       v.send_source_offsets, v.send_peers, v.send_peer_items, v.send_peer_bytes,
       v.send_peer_displs, v.send_peer_first, v.pack_is_identity);

  const auto received = p.to.items_on(rank);
  order.resize(received.size());
  for (std::size_t s = 0; s < order.size(); ++s) {
    order[s] = s;
  }
  // Slots are already in destination-slot order: a stable sort by source rank is enough.
  std::stable_sort(order.begin(), order.end(), [&](std::size_t a, std::size_t b) {
    return from_rank[static_cast<std::size_t>(received[a])] <
           from_rank[static_cast<std::size_t>(received[b])];
  });
  fill(received, slot_offsets(received), order, from_rank, v.recv_items, v.recv_sizes,
       v.recv_packed_offsets, v.recv_destination_offsets, v.recv_peers, v.recv_peer_items,
       v.recv_peer_bytes, v.recv_peer_displs, v.recv_peer_first, v.unpack_is_identity);
  return v;
}

} // namespace orch::detail

// Public API of orch/exchange/plan.hpp, defined here (see there).
namespace orch {

/// Traffic of `plan` under `topo`. Complexity: O(communicating pairs).
/// Throws: orch::invalid_argument (the topology has another number of ranks).
[[nodiscard]] inline traffic measure_traffic(const exchange_plan& plan, const topology& topo) {
  if (plan.ranks() != topo.ranks()) {
    throw_invalid_argument("measure_traffic: plan on ", plan.ranks(), " ranks but topology of ",
                           topo.ranks(), " ranks");
  }
  const auto node = topo.node_of_ranks();
  // The pair table read in place (plan.pairs() would copy it into a vector of records).
  const auto& d = detail::plan_access::data(plan);
  traffic t;
  for (std::size_t s = 0; s + 1 < d.pair_first.size(); ++s) {
    const auto end = static_cast<std::size_t>(d.pair_first[s + 1]);
    for (auto p = static_cast<std::size_t>(d.pair_first[s]); p < end; ++p) {
      // Σ ≤ plan.total_bytes(), which fits
      detail::class_of(t, node, s, static_cast<std::size_t>(d.pair_peer[p])) += d.pair_bytes[p];
    }
  }
  return t;
}

} // namespace orch
