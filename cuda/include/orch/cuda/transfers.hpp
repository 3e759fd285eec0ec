// SPDX-License-Identifier: Apache-2.0
/// The transfers of an exchange between send and receive buffers: the per-rank list of
/// self copies and point-to-point sends / receives a communicator issues, and the
/// buffer-to-buffer copies of the single-GPU loopback transport. Plain C++.
#pragma once

#include <orch/config.hpp>
#include <orch/plan.hpp>
#include <orch/types.hpp>

#include <algorithm>
#include <cstddef>
#include <span>
#include <vector>

namespace orch::cuda {

/// One transfer of a rank in a flat exchange.
struct p2p_op {
  enum class kind { self_copy, send, recv };
  kind what = kind::send;
  rank_t peer = 0;         ///< the other rank (the rank itself for self_copy)
  bytes_t send_offset = 0; ///< in the send buffer (send, self_copy)
  bytes_t recv_offset = 0; ///< in the receive buffer (recv, self_copy)
  bytes_t bytes = 0;       ///< always > 0
};

/// The transfers of `view`'s rank: first the copy of its own chunk (if it has bytes), then
/// one send per destination peer and one receive per source peer with bytes to move, peers
/// ascending. Peers whose chunk has zero bytes (all their items are empty) are skipped; both
/// sides see the same chunk sizes, so they skip the same pairs and no call is left unmatched.
/// Complexity: O(peers).
[[nodiscard]] inline std::vector<p2p_op> make_p2p_ops(const rank_view& view) {
  std::vector<p2p_op> ops;
  ops.reserve(view.send_peers.size() + view.recv_peers.size());
  const auto self_send =
      std::lower_bound(view.send_peers.begin(), view.send_peers.end(), view.rank);
  const auto self_recv =
      std::lower_bound(view.recv_peers.begin(), view.recv_peers.end(), view.rank);
  if (self_send != view.send_peers.end() && *self_send == view.rank) {
    const auto p = static_cast<std::size_t>(self_send - view.send_peers.begin());
    ORCH_ASSERT(self_recv != view.recv_peers.end() && *self_recv == view.rank);
    const auto q = static_cast<std::size_t>(self_recv - view.recv_peers.begin());
    ORCH_ASSERT(view.send_peer_bytes[p] == view.recv_peer_bytes[q]);
    if (view.send_peer_bytes[p] > 0) {
      ops.push_back({p2p_op::kind::self_copy, view.rank, view.send_peer_displs[p],
                     view.recv_peer_displs[q], view.send_peer_bytes[p]});
    }
  }
  for (std::size_t p = 0; p < view.send_peers.size(); ++p) {
    if (view.send_peers[p] != view.rank && view.send_peer_bytes[p] > 0) {
      ops.push_back({p2p_op::kind::send, view.send_peers[p], view.send_peer_displs[p], 0,
                     view.send_peer_bytes[p]});
    }
  }
  for (std::size_t p = 0; p < view.recv_peers.size(); ++p) {
    if (view.recv_peers[p] != view.rank && view.recv_peer_bytes[p] > 0) {
      ops.push_back({p2p_op::kind::recv, view.recv_peers[p], 0, view.recv_peer_displs[p],
                     view.recv_peer_bytes[p]});
    }
  }
  return ops;
}

/// One copy of the loopback transport: a chunk of `source`'s send buffer into
/// `destination`'s receive buffer.
struct route {
  rank_t source = 0;
  bytes_t source_offset = 0;
  rank_t destination = 0;
  bytes_t destination_offset = 0;
  bytes_t bytes = 0; ///< always > 0
  /// Member-wise equality.
  friend bool operator==(const route&, const route&) = default;
};

/// Every chunk with bytes of a flat exchange, given every rank's view (views[r].rank == r),
/// by destination then source. Checks that both sides of every pair agree on the items and
/// bytes, as the receiver's and the sender's NCCL calls must.
/// Complexity: O(pairs log peers).
/// Throws: orch::invalid_argument (a view of another rank, or two views that disagree —
/// naming the pair).
[[nodiscard]] inline std::vector<route> make_routes(std::span<const rank_view> views) {
  const char* where = "orch::cuda::make_routes";
  std::vector<route> out;
  std::size_t sends = 0;
  std::size_t recvs = 0;
  for (const auto& v : views) {
    sends += v.send_peers.size();
    recvs += v.recv_peers.size();
  }
  if (sends != recvs) { // with every receive matched below, equal counts make a bijection
    throw_invalid_argument(where, ": the views list ", sends, " sending pairs but ", recvs,
                           " receiving pairs");
  }
  for (std::size_t d = 0; d < views.size(); ++d) {
    const auto& v = views[d];
    if (v.rank != static_cast<rank_t>(d)) {
      throw_invalid_argument(where, ": view ", d, " belongs to rank ", v.rank);
    }
    for (std::size_t p = 0; p < v.recv_peers.size(); ++p) {
      const rank_t s = v.recv_peers[p];
      if (s < 0 || static_cast<std::size_t>(s) >= views.size()) {
        throw_invalid_argument(where, ": rank ", d, " receives from rank ", s, " outside [0, ",
                               views.size(), ")");
      }
      const auto& sv = views[static_cast<std::size_t>(s)];
      const auto it = std::lower_bound(sv.send_peers.begin(), sv.send_peers.end(), v.rank);
      if (it == sv.send_peers.end() || *it != v.rank) {
        throw_invalid_argument(where, ": rank ", d, " expects data from rank ", s,
                               " which sends it nothing");
      }
      const auto q = static_cast<std::size_t>(it - sv.send_peers.begin());
      if (sv.send_peer_bytes[q] != v.recv_peer_bytes[p] ||
          sv.send_peer_items[q] != v.recv_peer_items[p]) {
        throw_invalid_argument(where, ": rank ", s, " sends ", sv.send_peer_items[q], " items of ",
                               sv.send_peer_bytes[q], " bytes to rank ", d, " which expects ",
                               v.recv_peer_items[p], " items of ", v.recv_peer_bytes[p], " bytes");
      }
      if (v.recv_peer_bytes[p] > 0) {
        out.push_back(
            {s, sv.send_peer_displs[q], v.rank, v.recv_peer_displs[p], v.recv_peer_bytes[p]});
      }
    }
  }
  return out;
}

} // namespace orch::cuda
