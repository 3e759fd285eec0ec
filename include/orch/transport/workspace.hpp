// SPDX-License-Identifier: Apache-2.0
/// Workspace layouts: where one rank keeps its send, receive and staging buffers inside one
/// scratch allocation, for a flat exchange and for the two stages of a node-wise exchange.
#pragma once

#include <orch/config.hpp>
#include <orch/detail/primitives/checked.hpp>
#include <orch/transport/copy_list.hpp>
#include <orch/types.hpp>

#include <algorithm>

namespace orch::transport {

/// Default alignment of workspace regions: 256 bytes, what cudaMalloc guarantees for a base
/// pointer (the CUDA pack kernels keep their 16-byte vector path) and a multiple of any CPU's
/// cache line.
inline constexpr bytes_t default_alignment = 256;

/// `bytes` rounded up to a multiple of `alignment`.
/// Complexity: O(1).
/// Throws: orch::invalid_argument (bytes < 0 or alignment ≤ 0), orch::overflow.
[[nodiscard]] inline bytes_t align_up(bytes_t bytes, bytes_t alignment = default_alignment) {
  if (bytes < 0 || alignment <= 0) {
    throw_invalid_argument("orch::transport::align_up: ", bytes, " bytes at alignment ", alignment);
  }
  return orch::detail::checked_mul(orch::detail::ceil_div(bytes, alignment), alignment,
                                   "orch::transport::align_up");
}

/// Where a flat exchange of one rank keeps its buffers inside the workspace (offsets from the
/// workspace's start): a send buffer only when packing is not the identity (else the source
/// buffer is sent directly), a receive buffer only when unpacking is not (else the rank
/// receives directly into its destination buffer).
struct flat_workspace {
  bytes_t send_offset = 0;
  bytes_t send_bytes = 0; ///< 0: the source buffer is the send buffer
  bytes_t recv_offset = 0;
  bytes_t recv_bytes = 0; ///< 0: the destination buffer is the receive buffer
  bytes_t end = 0;        ///< first byte after the regions (aligned): workspace bytes needed
  /// Member-wise equality.
  friend bool operator==(const flat_workspace&, const flat_workspace&) = default;
};

/// The flat workspace of an exchange with these pack and unpack copies, its regions starting at
/// `base` (a multiple of `alignment`), each region aligned.
/// Complexity: O(1). Throws: orch::invalid_argument (bad base / alignment), orch::overflow.
[[nodiscard]] inline flat_workspace make_flat_workspace(const copy_list& pack,
                                                        const copy_list& unpack, bytes_t base = 0,
                                                        bytes_t alignment = default_alignment) {
  if (base < 0 || alignment <= 0 || base % alignment != 0) {
    throw_invalid_argument("orch::transport::make_flat_workspace: base ", base,
                           " is not a non-negative multiple of the alignment ", alignment);
  }
  const char* where = "orch::transport::make_flat_workspace";
  flat_workspace w;
  w.send_offset = base;
  w.send_bytes = pack.identity ? 0 : pack.dst_bytes;
  w.recv_offset = orch::detail::checked_add(base, align_up(w.send_bytes, alignment), where);
  w.recv_bytes = unpack.identity ? 0 : unpack.src_bytes;
  w.end = orch::detail::checked_add(w.recv_offset, align_up(w.recv_bytes, alignment), where);
  return w;
}

/// The workspace of a node-wise exchange on one rank: the staging buffer first (stage 1's
/// destination and stage 2's source, so stage 2 never packs), then the stages' own send and
/// receive buffers, which share one region because the stages run one after the other.
struct nodewise_workspace {
  bytes_t staging_offset = 0; ///< always 0
  bytes_t staging_bytes = 0;
  flat_workspace inter_node; ///< stage 1's regions (offsets from the workspace's start)
  flat_workspace intra_node; ///< stage 2's regions
  bytes_t end = 0;           ///< workspace bytes needed
  /// Member-wise equality.
  friend bool operator==(const nodewise_workspace&, const nodewise_workspace&) = default;
};

/// The node-wise workspace for a staging buffer of `staging_bytes` and the stages' copies.
/// Complexity: O(1). Throws: as make_flat_workspace, and orch::invalid_argument
/// (staging_bytes < 0).
[[nodiscard]] inline nodewise_workspace
make_nodewise_workspace(bytes_t staging_bytes, const copy_list& inter_pack,
                        const copy_list& inter_unpack, const copy_list& intra_pack,
                        const copy_list& intra_unpack, bytes_t alignment = default_alignment) {
  if (staging_bytes < 0) {
    throw_invalid_argument("orch::transport::make_nodewise_workspace: negative staging size ",
                           staging_bytes);
  }
  nodewise_workspace w;
  w.staging_bytes = staging_bytes;
  const bytes_t base = align_up(staging_bytes, alignment);
  w.inter_node = make_flat_workspace(inter_pack, inter_unpack, base, alignment);
  w.intra_node = make_flat_workspace(intra_pack, intra_unpack, base, alignment);
  w.end = std::max(w.inter_node.end, w.intra_node.end);
  return w;
}

} // namespace orch::transport
