// SPDX-License-Identifier: Apache-2.0
/// The node-wise schedule of an exchange plan: one rail-aligned inter-node stage, then one
/// intra-node stage, each an exchange plan of its own.
#pragma once

#include <orch/config.hpp>
#include <orch/exchange/layout.hpp>
#include <orch/exchange/plan.hpp>
#include <orch/topology.hpp>
#include <orch/types.hpp>

#include <cstddef>
#include <utility>
#include <vector>

namespace orch {

/// A plan split into two stages over the same ranks:
///  1. `inter_node` moves every item that changes node to the *staging rank*: the rank of the
///     destination node with the sender's local index (the same rail), modulo the size of the
///     destination node. Items that stay on their node do not move in this stage (self).
///  2. `intra_node` moves every item from its staging rank to its destination rank, which is
///     on the same node.
/// So in stage 1 a rank sends to at most one rank per other node — (nodes − 1) remote peers
/// instead of up to (ranks − ranks_per_node) — and stage 2 never leaves a node.
///
/// Staging buffer: on each rank, the items staged there (stage 1's destination buffer and
/// stage 2's source buffer) in the slot order of `staging`: by (destination rank, destination
/// slot). Stage 2's send buffer is therefore identical to the staging buffer (its
/// `pack_is_identity` is true on every rank): a transport may send from it directly.
///
/// Nodes of different sizes are supported: the local index wraps modulo the destination node's
/// size, so a rank still sends to at most one rank per remote node, but a rank of a small node
/// may receive from several ranks of a larger node (not strictly rail-aligned).
/// Executing both stages delivers exactly what the flat plan delivers, byte for byte.
struct node_schedule {
  orch::topology topology;
  layout staging;                     ///< where each item sits between the stages
  exchange_plan inter_node;           ///< stage 1: from → staging
  exchange_plan intra_node;           ///< stage 2: staging → to
  std::vector<bytes_t> staging_bytes; ///< per rank: size of the staging buffer

  /// Ranks on other nodes that `rank` sends to in stage 1. Complexity: O(pairs).
  /// Throws: orch::invalid_argument (rank out of range).
  [[nodiscard]] rank_t remote_peers(rank_t rank) const {
    check_rank(rank);
    rank_t count = 0;
    for (const auto& t : inter_node.pairs()) {
      count += t.source == rank && t.destination != rank ? 1 : 0;
    }
    return count;
  }
  /// The largest remote_peers over all ranks. Complexity: O(ranks + pairs).
  [[nodiscard]] rank_t max_remote_peers() const {
    std::vector<rank_t> count(static_cast<std::size_t>(inter_node.ranks()), 0);
    rank_t best = 0;
    for (const auto& t : inter_node.pairs()) {
      if (t.source != t.destination) {
        auto& c = count[static_cast<std::size_t>(t.source)];
        best = ++c > best ? c : best;
      }
    }
    return best;
  }

private:
  void check_rank(rank_t rank) const {
    if (rank < 0 || rank >= inter_node.ranks()) {
      throw_invalid_argument("node_schedule::remote_peers: rank ", rank, " is outside [0, ",
                             inter_node.ranks(), ")");
    }
  }
};

/// The node-wise schedule of `flat` on `topo` (see node_schedule).
/// Complexity: O(items + ranks): one staging layout and two plan builds.
/// Throws: orch::invalid_argument (the topology has another number of ranks than the plan).
[[nodiscard]] inline node_schedule make_schedule(const exchange_plan& flat, const topology& topo) {
  if (flat.ranks() != topo.ranks()) {
    throw_invalid_argument("make_schedule: plan on ", flat.ranks(), " ranks but topology of ",
                           topo.ranks(), " ranks");
  }
  const auto k = static_cast<std::size_t>(topo.ranks());
  const auto n = static_cast<std::size_t>(flat.items());
  const auto node = topo.node_of_ranks();
  const auto local = topo.local_indices();
  const auto from_rank = flat.from().rank_of_items();

  // Staging rank of every item, computed walking `to` in (rank, slot) order; distributing
  // those positions stably by staging rank then sorts each staging rank by (to rank, to slot).
  const auto to_first = flat.to().first_on();
  const auto to_order = flat.to().order();
  std::vector<rank_t> mid(n);    // per item
  std::vector<rank_t> mid_at(n); // per position of to_order
  std::vector<index_t> first(k + 1, 0);
  for (std::size_t d = 0; d < k; ++d) {
    const rank_t dest_node = node[d];
    const auto on = topo.ranks_on(dest_node);
    for (auto x = static_cast<std::size_t>(to_first[d]);
         x < static_cast<std::size_t>(to_first[d + 1]); ++x) {
      const auto item = static_cast<std::size_t>(to_order[x]);
      const rank_t s = from_rank[item];
      const auto si = static_cast<std::size_t>(s);
      const rank_t m =
          node[si] == dest_node ? s : on[static_cast<std::size_t>(local[si]) % on.size()];
      mid[item] = m;
      mid_at[x] = m;
      ++first[static_cast<std::size_t>(m) + 1];
    }
  }
  for (std::size_t r = 0; r < k; ++r) {
    first[r + 1] += first[r];
  }
  std::vector<index_t> order(n);
  {
    std::vector<index_t> next(first.begin(), first.end() - 1);
    for (std::size_t x = 0; x < n; ++x) {
      order[static_cast<std::size_t>(next[static_cast<std::size_t>(mid_at[x])]++)] = to_order[x];
    }
  }
  node_schedule s;
  s.topology = topo;
  s.staging = detail::layout_access::from_order(topo.ranks(), std::move(mid), std::move(first),
                                                std::move(order));
  const auto& bytes = detail::plan_access::shared_bytes(flat);
  s.inter_node = detail::build_plan(flat.from(), s.staging, bytes, "make_schedule");
  s.intra_node = detail::build_plan(s.staging, flat.to(), bytes, "make_schedule");
  s.staging_bytes.resize(k);
  for (rank_t r = 0; r < topo.ranks(); ++r) {
    s.staging_bytes[static_cast<std::size_t>(r)] = s.inter_node.destination_bytes(r);
  }
  return s;
}

} // namespace orch
