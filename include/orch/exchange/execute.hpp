// SPDX-License-Identifier: Apache-2.0
/// The reference transport: executes an exchange plan or a node-wise schedule for all ranks in
/// one process on byte buffers, with exactly the plan's pack/unpack offsets.
#pragma once

#include <orch/config.hpp>
#include <orch/exchange/plan.hpp>
#include <orch/exchange/schedule.hpp>
#include <orch/types.hpp>

#include <algorithm>
#include <cstddef>
#include <cstring>
#include <span>
#include <vector>

namespace orch {

/// One byte buffer per rank, indexed by rank.
using rank_buffers = std::vector<std::vector<std::byte>>;

namespace detail {

inline void copy_bytes(std::byte* to, const std::byte* from, bytes_t n) {
  if (n > 0) { // memcpy with a null pointer is undefined even for 0 bytes
    std::memcpy(to, from, static_cast<std::size_t>(n));
  }
}

inline void check_buffers(const exchange_plan& plan, const rank_buffers& buffers,
                          const char* where) {
  if (buffers.size() != static_cast<std::size_t>(plan.ranks())) {
    throw_invalid_argument(where, ": ", buffers.size(), " buffers for ", plan.ranks(), " ranks");
  }
  for (rank_t r = 0; r < plan.ranks(); ++r) {
    const bytes_t want = plan.source_bytes(r);
    const auto have = buffers[static_cast<std::size_t>(r)].size();
    if (have != static_cast<std::size_t>(want)) {
      throw_invalid_argument(where, ": the source buffer of rank ", r, " has ", have,
                             " bytes, the plan needs ", want);
    }
  }
}

} // namespace detail

/// Packs one rank's source buffer into its send buffer: for every send entry e,
/// send[packed[e], +size[e]) = source[source_offset[e], +size[e]). This is the loop the CUDA
/// pack kernel runs. Complexity: O(entries + bytes).
/// Throws: orch::invalid_argument (a buffer smaller than the view's source / send bytes).
inline void pack(const rank_view& view, std::span<const std::byte> source,
                 std::span<std::byte> send) {
  if (source.size() < static_cast<std::size_t>(view.source_bytes) ||
      send.size() < static_cast<std::size_t>(view.source_bytes)) {
    throw_invalid_argument("pack: rank ", view.rank, " needs ", view.source_bytes,
                           " bytes of source and send buffer, got ", source.size(), " and ",
                           send.size());
  }
  for (std::size_t e = 0; e < view.send_items.size(); ++e) {
    detail::copy_bytes(send.data() + view.send_packed_offsets[e],
                       source.data() + view.send_source_offsets[e], view.send_sizes[e]);
  }
}

/// Unpacks one rank's receive buffer into its destination buffer: for every receive entry e,
/// destination[destination_offset[e], +size[e]) = recv[packed[e], +size[e]).
/// Complexity: O(entries + bytes). Throws: orch::invalid_argument (buffers too small).
inline void unpack(const rank_view& view, std::span<const std::byte> recv,
                   std::span<std::byte> destination) {
  if (recv.size() < static_cast<std::size_t>(view.destination_bytes) ||
      destination.size() < static_cast<std::size_t>(view.destination_bytes)) {
    throw_invalid_argument("unpack: rank ", view.rank, " needs ", view.destination_bytes,
                           " bytes of receive and destination buffer, got ", recv.size(), " and ",
                           destination.size());
  }
  for (std::size_t e = 0; e < view.recv_items.size(); ++e) {
    detail::copy_bytes(destination.data() + view.recv_destination_offsets[e],
                       recv.data() + view.recv_packed_offsets[e], view.recv_sizes[e]);
  }
}

/// The all-to-all(v) itself, given every rank's view: chunk (s → d) of every send buffer
/// lands at the receiver's displacement for s. Checks that both sides of every pair agree on
/// the items and bytes (what NCCL needs in order not to hang).
/// Complexity: O(pairs log peers + bytes).
/// Throws: orch::invalid_argument (buffer count or sizes do not match the views).
[[nodiscard]] inline rank_buffers all_to_all(std::span<const rank_view> views,
                                             const rank_buffers& send) {
  if (send.size() != views.size()) {
    throw_invalid_argument("all_to_all: ", send.size(), " send buffers for ", views.size(),
                           " ranks");
  }
  for (std::size_t r = 0; r < views.size(); ++r) {
    if (send[r].size() != static_cast<std::size_t>(views[r].source_bytes)) {
      throw_invalid_argument("all_to_all: the send buffer of rank ", r, " has ", send[r].size(),
                             " bytes, the plan needs ", views[r].source_bytes);
    }
  }
  rank_buffers recv(send.size());
  for (std::size_t d = 0; d < views.size(); ++d) {
    const auto& v = views[d];
    auto& out = recv[d];
    out.resize(static_cast<std::size_t>(v.destination_bytes));
    for (std::size_t p = 0; p < v.recv_peers.size(); ++p) {
      const auto& sv = views[static_cast<std::size_t>(v.recv_peers[p])];
      const auto it =
          std::lower_bound(sv.send_peers.begin(), sv.send_peers.end(), static_cast<rank_t>(d));
      ORCH_ASSERT(it != sv.send_peers.end() && *it == static_cast<rank_t>(d));
      const auto q = static_cast<std::size_t>(it - sv.send_peers.begin());
      ORCH_ASSERT(sv.send_peer_bytes[q] == v.recv_peer_bytes[p]);
      ORCH_ASSERT(sv.send_peer_items[q] == v.recv_peer_items[p]);
      detail::copy_bytes(out.data() + v.recv_peer_displs[p],
                         send[static_cast<std::size_t>(v.recv_peers[p])].data() +
                             sv.send_peer_displs[q],
                         v.recv_peer_bytes[p]);
    }
  }
  return recv;
}

/// Executes `plan` on every rank's source buffer (plan.source_bytes(r) bytes each) and
/// returns every rank's destination buffer: pack, all_to_all, unpack — what each rank of a
/// real job does with its own view.
/// Complexity: O(items log items per rank + pairs log peers + bytes).
/// Throws: orch::invalid_argument (buffer count or sizes do not match the plan).
[[nodiscard]] inline rank_buffers execute(const exchange_plan& plan, const rank_buffers& source) {
  detail::check_buffers(plan, source, "execute");
  std::vector<rank_view> views;
  views.reserve(source.size());
  for (rank_t r = 0; r < plan.ranks(); ++r) {
    views.push_back(plan.view(r));
  }
  rank_buffers send(source.size());
  for (std::size_t r = 0; r < source.size(); ++r) {
    send[r].resize(source[r].size());
    pack(views[r], source[r], send[r]);
  }
  const rank_buffers recv = all_to_all(views, send);
  rank_buffers destination(source.size());
  for (std::size_t r = 0; r < source.size(); ++r) {
    destination[r].resize(recv[r].size());
    unpack(views[r], recv[r], destination[r]);
  }
  return destination;
}

/// Executes a node-wise schedule: stage 1 into the staging buffers, stage 2 from them. The
/// result is byte-identical to execute(flat plan, source).
/// Complexity: twice execute. Throws: as execute.
[[nodiscard]] inline rank_buffers execute(const node_schedule& schedule,
                                          const rank_buffers& source) {
  const rank_buffers staging = execute(schedule.inter_node, source);
  return execute(schedule.intra_node, staging);
}

} // namespace orch
