// SPDX-License-Identifier: Apache-2.0
/// One rank's part of an exchange plan in rows of a tensor: the split sizes of one
/// all_to_all_single and the gather indices that pack and unpack it (what orch.torch runs).
#pragma once

#include <orch/config.hpp>
#include <orch/exchange/plan.hpp>
#include <orch/types.hpp>

#include <cstddef>
#include <cstdint>
#include <vector>

namespace orch {

/// An exchange as one rank runs it on a tensor whose rows are its items laid end to end in
/// slot order (the packed "varlen" layout: an item of b bytes is b / bytes_per_row rows):
///
///     send        = source[pack_index]          (skipped when pack_index is empty)
///     received    = all_to_all_single(send, recv_splits, send_splits)
///     destination = received[unpack_index]      (skipped when unpack_index is empty)
///
/// Splits are in rows, one entry per rank of the plan (every rank, zero where the two do not
/// talk), as all_to_all_single takes them. An index is left empty when it is the identity, so
/// a rank copies only what it must: packing is the identity when the rank's items already
/// lie in destination-peer order, unpacking when the receive order is the destination order.
struct row_exchange {
  rank_t rank = 0;
  index_t source_rows = 0;          ///< rows of the rank's source tensor (= send rows)
  index_t destination_rows = 0;     ///< rows of its destination tensor (= received rows)
  std::vector<index_t> send_splits; ///< rows to each rank
  std::vector<index_t> recv_splits; ///< rows from each rank
  /// Source row of every send row; empty when packing is the identity.
  std::vector<index_t> pack_index;
  /// Received row of every destination row; empty when unpacking is the identity.
  std::vector<index_t> unpack_index;
};

/// The row form of `plan` for `rank`, with rows of `bytes_per_row` bytes.
/// Complexity: O(ranks + m log m + rows of the rank), m its items (one view()).
/// Throws: orch::invalid_argument (rank out of range; bytes_per_row ≤ 0; an item of the rank
/// whose bytes are not a multiple of bytes_per_row — naming the item, the rank and both sizes).
[[nodiscard]] inline row_exchange make_row_exchange(const exchange_plan& plan, rank_t rank,
                                                    bytes_t bytes_per_row) {
  if (bytes_per_row <= 0) {
    throw_invalid_argument("make_row_exchange: bytes_per_row must be positive, got ",
                           bytes_per_row);
  }
  const rank_view v = plan.view(rank);
  const auto rows = [&](bytes_t bytes, index_t item) {
    if (bytes % bytes_per_row != 0) {
      throw_invalid_argument("make_row_exchange: item ", item, " of rank ", rank, " has ", bytes,
                             " bytes, not a multiple of the ", bytes_per_row, " bytes of a row");
    }
    return bytes / bytes_per_row;
  };
  row_exchange x;
  x.rank = rank;
  x.source_rows = v.source_bytes / bytes_per_row;
  x.destination_rows = v.destination_bytes / bytes_per_row;
  const auto ranks = static_cast<std::size_t>(plan.ranks());
  x.send_splits.assign(ranks, 0);
  x.recv_splits.assign(ranks, 0);
  for (std::size_t e = 0; e < v.send_items.size(); ++e) {
    static_cast<void>(rows(v.send_sizes[e], v.send_items[e])); // every item checked once
  }
  for (std::size_t e = 0; e < v.recv_items.size(); ++e) {
    static_cast<void>(rows(v.recv_sizes[e], v.recv_items[e]));
  }
  // Peer byte counts are sums of checked item sizes: exact multiples.
  for (std::size_t p = 0; p < v.send_peers.size(); ++p) {
    x.send_splits[static_cast<std::size_t>(v.send_peers[p])] = v.send_peer_bytes[p] / bytes_per_row;
  }
  for (std::size_t p = 0; p < v.recv_peers.size(); ++p) {
    x.recv_splits[static_cast<std::size_t>(v.recv_peers[p])] = v.recv_peer_bytes[p] / bytes_per_row;
  }
  if (!v.pack_is_identity) {
    x.pack_index.reserve(static_cast<std::size_t>(x.source_rows));
    for (std::size_t e = 0; e < v.send_items.size(); ++e) {
      const index_t first = v.send_source_offsets[e] / bytes_per_row;
      const index_t n = v.send_sizes[e] / bytes_per_row;
      for (index_t j = 0; j < n; ++j) {
        x.pack_index.push_back(first + j);
      }
    }
  }
  if (!v.unpack_is_identity) {
    x.unpack_index.assign(static_cast<std::size_t>(x.destination_rows), 0);
    for (std::size_t e = 0; e < v.recv_items.size(); ++e) {
      const index_t to = v.recv_destination_offsets[e] / bytes_per_row;
      const index_t from = v.recv_packed_offsets[e] / bytes_per_row;
      const index_t n = v.recv_sizes[e] / bytes_per_row;
      for (index_t j = 0; j < n; ++j) {
        x.unpack_index[static_cast<std::size_t>(to + j)] = from + j;
      }
    }
  }
  return x;
}

} // namespace orch
