// SPDX-License-Identifier: Apache-2.0
/// The chunks of a flat exchange seen from all ranks at once: which bytes of which rank's send
/// buffer land where in which rank's receive buffer — what a single-device loopback or an
/// in-process simulation of every rank copies, with both sides of every pair cross-checked.
#pragma once

#include <orch/config.hpp>
#include <orch/exchange/plan.hpp>
#include <orch/types.hpp>

#include <algorithm>
#include <cstddef>
#include <span>
#include <vector>

namespace orch::transport {

/// One chunk of a flat exchange: `bytes` (always > 0) of `source`'s send buffer from
/// `source_offset` into `destination`'s receive buffer at `destination_offset`.
struct route {
  rank_t source = 0;
  bytes_t source_offset = 0;
  rank_t destination = 0;
  bytes_t destination_offset = 0;
  bytes_t bytes = 0;
  /// Member-wise equality.
  friend bool operator==(const route&, const route&) = default;
};

/// Every chunk with bytes of a flat exchange, self chunks included, given every rank's view
/// (views[r].rank == r), by destination then source. Checks that both sides of every pair
/// agree on the items and bytes, as the receiver's and the sender's transport calls must.
/// Complexity: O(pairs log peers).
/// Throws: orch::invalid_argument (a view of another rank, a peer out of range, or two views
/// that disagree — naming the pair).
[[nodiscard]] inline std::vector<route> make_routes(std::span<const rank_view> views) {
  const char* where = "orch::transport::make_routes";
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

} // namespace orch::transport
