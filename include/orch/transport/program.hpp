// SPDX-License-Identifier: Apache-2.0
/// Exchange programs: everything one rank of a backend (MPI, NCCL) executes for a flat exchange
/// or the two stages of a node-wise one — pack copies, self copy, sends and receives, unpack
/// copies and the workspace layout — computed once on the host from a plan or a schedule.
#pragma once

#include <orch/config.hpp>
#include <orch/exchange/plan.hpp>
#include <orch/exchange/schedule.hpp>
#include <orch/transport/copy_list.hpp>
#include <orch/transport/transfers.hpp>
#include <orch/transport/workspace.hpp>
#include <orch/types.hpp>

#include <array>
#include <cstdint>

namespace orch::transport {

/// One rank's flat exchange, in the order a backend runs it:
///  1. pack: source buffer → send buffer (skipped when pack.identity: send from the source);
///  2. the self copy: send buffer → receive buffer (transfers.self);
///  3. the sends and receives of transfers (any order, all posted before waiting);
///  4. unpack: receive buffer → destination buffer (skipped when unpack.identity: receive
///     directly into the destination).
/// The send and receive buffers live in the workspace at workspace.send_offset / recv_offset
/// when they are needed. The result is byte-identical to orch::execute's for this rank.
struct flat_program {
  rank_t rank = 0;
  rank_t ranks = 1;
  std::uint64_t plan_hash = 0;   ///< what the ranks agree on before moving payload
  bytes_t source_bytes = 0;      ///< the caller's source buffer holds exactly this many bytes
  bytes_t destination_bytes = 0; ///< the caller's destination buffer holds exactly this many
  copy_list pack;
  copy_list unpack;
  transfer_list transfers;
  flat_workspace workspace;

  /// Point-to-point messages the rank posts. Complexity: O(1).
  [[nodiscard]] index_t messages() const noexcept { return transfers.messages(); }
};

/// The flat program of `view`'s rank in a plan of `ranks` ranks with hash `plan_hash`, its
/// workspace regions from `base`.
/// Complexity: O(items and peers of the rank).
/// Throws: orch::invalid_argument (a malformed view, the rank outside [0, ranks), bad base or
/// alignment), orch::overflow.
[[nodiscard]] inline flat_program make_flat_program(const rank_view& view, rank_t ranks,
                                                    std::uint64_t plan_hash, bytes_t base = 0,
                                                    bytes_t alignment = default_alignment) {
  if (ranks <= 0 || view.rank < 0 || view.rank >= ranks) {
    throw_invalid_argument("orch::transport::make_flat_program: rank ", view.rank,
                           " outside a plan of ", ranks, " ranks");
  }
  flat_program p;
  p.rank = view.rank;
  p.ranks = ranks;
  p.plan_hash = plan_hash;
  p.source_bytes = view.source_bytes;
  p.destination_bytes = view.destination_bytes;
  p.pack = make_pack_list(view);
  p.unpack = make_unpack_list(view);
  p.transfers = make_transfers(view);
  p.workspace = make_flat_workspace(p.pack, p.unpack, base, alignment);
  return p;
}

/// The flat program of `rank` in `plan`.
/// Complexity: O(m log m) for the m items the rank sends and receives (plan.view).
/// Throws: orch::invalid_argument (rank out of range, bad alignment), orch::overflow.
[[nodiscard]] inline flat_program make_flat_program(const exchange_plan& plan, rank_t rank,
                                                    bytes_t alignment = default_alignment) {
  return make_flat_program(plan.view(rank), plan.ranks(), plan.hash(), 0, alignment);
}

/// One rank's node-wise exchange: stage 1 (inter-node, rail-aligned) from the source buffer
/// into the staging buffer, then stage 2 (intra-node) from the staging buffer into the
/// destination buffer. The staging buffer is stage 1's destination and stage 2's source, at
/// workspace.staging_offset; each stage's send / receive buffers are at its own flat_workspace
/// inside `workspace`. Stage 2 never packs (its send buffer is the staging buffer). The result
/// is byte-identical to the flat exchange of the schedule's plan.
struct nodewise_program {
  flat_program inter_node;
  flat_program intra_node;
  nodewise_workspace workspace;

  /// The plan hashes of both stages, what the ranks agree on. Complexity: O(1).
  [[nodiscard]] std::array<std::uint64_t, 2> plan_hashes() const noexcept {
    return {inter_node.plan_hash, intra_node.plan_hash};
  }
  /// Point-to-point messages the rank posts over both stages. Complexity: O(1).
  [[nodiscard]] index_t messages() const noexcept {
    return inter_node.messages() + intra_node.messages();
  }
};

/// The node-wise program of `rank` in `schedule`.
/// Complexity: O(m log m) for the m items the rank sends, stages and receives.
/// Throws: orch::invalid_argument (rank out of range, bad alignment), orch::overflow.
[[nodiscard]] inline nodewise_program make_nodewise_program(const node_schedule& schedule,
                                                            rank_t rank,
                                                            bytes_t alignment = default_alignment) {
  const rank_t ranks = schedule.inter_node.ranks();
  if (rank < 0 || rank >= ranks) {
    throw_invalid_argument("orch::transport::make_nodewise_program: rank ", rank,
                           " outside a schedule of ", ranks, " ranks");
  }
  nodewise_program p;
  p.inter_node = make_flat_program(schedule.inter_node, rank, alignment);
  p.intra_node = make_flat_program(schedule.intra_node, rank, alignment);
  p.workspace = make_nodewise_workspace(p.inter_node.destination_bytes, p.inter_node.pack,
                                        p.inter_node.unpack, p.intra_node.pack, p.intra_node.unpack,
                                        alignment);
  p.inter_node.workspace = p.workspace.inter_node;
  p.intra_node.workspace = p.workspace.intra_node;
  return p;
}

} // namespace orch::transport
