// SPDX-License-Identifier: Apache-2.0
/// The transfers of one rank in a flat exchange: the copy of its own chunk and the ordered
/// point-to-point sends and receives (non-empty pairs only) that every backend issues, plus the
/// dense all-to-all(v) count and displacement arrays for backends that prefer one collective.
#pragma once

#include <orch/config.hpp>
#include <orch/exchange/plan.hpp>
#include <orch/types.hpp>

#include <algorithm>
#include <cstddef>
#include <vector>

namespace orch::transport {

/// One message of a rank: `bytes` bytes (always > 0) to or from `peer` (never the rank itself),
/// starting at `offset` of the rank's send buffer (a send) or receive buffer (a receive).
struct chunk {
  rank_t peer = 0;
  bytes_t offset = 0;
  bytes_t bytes = 0;
  /// Member-wise equality.
  friend bool operator==(const chunk&, const chunk&) = default;
};

/// The chunk a rank sends to itself: send[send_offset, +bytes) → recv[recv_offset, +bytes).
/// bytes == 0 means there is nothing to copy.
struct self_copy {
  bytes_t send_offset = 0;
  bytes_t recv_offset = 0;
  bytes_t bytes = 0;
  /// Member-wise equality.
  friend bool operator==(const self_copy&, const self_copy&) = default;
};

/// Everything a rank moves in a flat exchange between its send buffer (send_bytes bytes: the
/// items packed by destination peer) and its receive buffer (recv_bytes bytes: packed by
/// source peer). sends and recvs list only peers other than the rank with at least one byte,
/// peers ascending. Both sides of a pair see the same chunk size, so they skip the same empty
/// pairs and every send has exactly one matching receive (no call is left unmatched, which
/// NCCL and MPI both need in order not to hang).
struct transfer_list {
  rank_t rank = 0;
  bytes_t send_bytes = 0;
  bytes_t recv_bytes = 0;
  transport::self_copy self;
  std::vector<chunk> sends;
  std::vector<chunk> recvs;

  /// Point-to-point messages the rank posts (sends + receives). Complexity: O(1).
  [[nodiscard]] index_t messages() const noexcept {
    return static_cast<index_t>(sends.size() + recvs.size());
  }
  /// Bytes that leave the rank (the self chunk excluded). Complexity: O(sends).
  [[nodiscard]] bytes_t remote_send_bytes() const noexcept {
    bytes_t b = 0; // ≤ send_bytes: no overflow
    for (const auto& c : sends) {
      b += c.bytes;
    }
    return b;
  }
  /// Member-wise equality.
  friend bool operator==(const transfer_list&, const transfer_list&) = default;
};

/// The transfers of `view`'s rank (see transfer_list).
/// Complexity: O(peers of the rank).
/// Throws: orch::invalid_argument (a malformed view: the self chunk listed on one side only or
/// with different sizes).
[[nodiscard]] inline transfer_list make_transfers(const rank_view& view) {
  transfer_list t;
  t.rank = view.rank;
  t.send_bytes = view.source_bytes;
  t.recv_bytes = view.destination_bytes;
  const auto self_send =
      std::lower_bound(view.send_peers.begin(), view.send_peers.end(), view.rank);
  const auto self_recv =
      std::lower_bound(view.recv_peers.begin(), view.recv_peers.end(), view.rank);
  const bool sends_self = self_send != view.send_peers.end() && *self_send == view.rank;
  const bool recvs_self = self_recv != view.recv_peers.end() && *self_recv == view.rank;
  if (sends_self != recvs_self) {
    throw_invalid_argument("orch::transport::make_transfers: rank ", view.rank,
                           sends_self ? " sends to" : " receives from",
                           " itself only on one side of its view");
  }
  if (sends_self) {
    const auto p = static_cast<std::size_t>(self_send - view.send_peers.begin());
    const auto q = static_cast<std::size_t>(self_recv - view.recv_peers.begin());
    if (view.send_peer_bytes[p] != view.recv_peer_bytes[q]) {
      throw_invalid_argument("orch::transport::make_transfers: rank ", view.rank, " sends ",
                             view.send_peer_bytes[p], " bytes to itself but receives ",
                             view.recv_peer_bytes[q]);
    }
    if (view.send_peer_bytes[p] > 0) {
      t.self = {view.send_peer_displs[p], view.recv_peer_displs[q], view.send_peer_bytes[p]};
    }
  }
  t.sends.reserve(view.send_peers.size());
  t.recvs.reserve(view.recv_peers.size());
  for (std::size_t p = 0; p < view.send_peers.size(); ++p) {
    if (view.send_peers[p] != view.rank && view.send_peer_bytes[p] > 0) {
      t.sends.push_back({view.send_peers[p], view.send_peer_displs[p], view.send_peer_bytes[p]});
    }
  }
  for (std::size_t p = 0; p < view.recv_peers.size(); ++p) {
    if (view.recv_peers[p] != view.rank && view.recv_peer_bytes[p] > 0) {
      t.recvs.push_back({view.recv_peers[p], view.recv_peer_displs[p], view.recv_peer_bytes[p]});
    }
  }
  return t;
}

/// Dense per-peer arrays of one rank for an all-to-all(v) collective (MPI_Alltoallv and the
/// like), every array of `ranks` entries indexed by peer: bytes to / from the peer and their
/// displacement in the send / receive buffer. Peers without bytes have count 0 and
/// displacement 0.
struct alltoallv_arrays {
  std::vector<bytes_t> send_counts;
  std::vector<bytes_t> send_displs;
  std::vector<bytes_t> recv_counts;
  std::vector<bytes_t> recv_displs;
};

/// The all-to-all(v) arrays of `t` on a communicator of `ranks` ranks. With `include_self` the
/// self chunk is in the arrays (the collective copies it); without, its count is 0 and the
/// backend copies t.self itself.
/// Complexity: O(ranks + peers) — a dense collective is O(ranks) per rank by nature.
/// Throws: orch::invalid_argument (ranks ≤ t.rank or a peer outside [0, ranks)).
[[nodiscard]] inline alltoallv_arrays make_alltoallv_arrays(const transfer_list& t, rank_t ranks,
                                                            bool include_self) {
  if (ranks <= 0 || t.rank < 0 || t.rank >= ranks) {
    throw_invalid_argument("orch::transport::make_alltoallv_arrays: rank ", t.rank,
                           " outside a communicator of ", ranks, " ranks");
  }
  const auto k = static_cast<std::size_t>(ranks);
  alltoallv_arrays a{std::vector<bytes_t>(k, 0), std::vector<bytes_t>(k, 0),
                     std::vector<bytes_t>(k, 0), std::vector<bytes_t>(k, 0)};
  const auto put = [&](const std::vector<chunk>& list, std::vector<bytes_t>& counts,
                       std::vector<bytes_t>& displs) {
    for (const auto& c : list) {
      if (c.peer < 0 || c.peer >= ranks) {
        throw_invalid_argument("orch::transport::make_alltoallv_arrays: rank ", t.rank,
                               " has a chunk for rank ", c.peer, " outside [0, ", ranks, ")");
      }
      counts[static_cast<std::size_t>(c.peer)] = c.bytes;
      displs[static_cast<std::size_t>(c.peer)] = c.offset;
    }
  };
  put(t.sends, a.send_counts, a.send_displs);
  put(t.recvs, a.recv_counts, a.recv_displs);
  if (include_self && t.self.bytes > 0) {
    const auto r = static_cast<std::size_t>(t.rank);
    a.send_counts[r] = t.self.bytes;
    a.send_displs[r] = t.self.send_offset;
    a.recv_counts[r] = t.self.bytes;
    a.recv_displs[r] = t.self.recv_offset;
  }
  return a;
}

} // namespace orch::transport
