// SPDX-License-Identifier: Apache-2.0
/// Copy lists: the pack (source → send buffer) and unpack (receive → destination buffer) copies
/// of one rank with zero-byte entries dropped and contiguous runs merged into one copy, and
/// the identity detected so that a backend skips the copy and uses one buffer as the other.
#pragma once

#include <orch/config.hpp>
#include <orch/detail/primitives/checked.hpp>
#include <orch/exchange/plan.hpp>
#include <orch/types.hpp>

#include <cstddef>
#include <cstring>
#include <span>
#include <vector>

namespace orch::transport {

/// The copies dst[dst_offsets[e], +sizes[e]) = src[src_offsets[e], +sizes[e]) of one buffer
/// into another, every size > 0, in the order of the entries they were built from, merged
/// wherever entry e + 1 continues entry e in both buffers. The copies never overlap in the
/// destination (each destination byte belongs to one item).
///
/// `identity`: every copy keeps its offset (src_offsets[e] == dst_offsets[e]), so the
/// destination equals the source byte for byte and a backend may skip the copy and use the
/// source buffer as the destination buffer (send directly from the source, receive directly
/// into the destination). An identity list has at most one entry once merged.
struct copy_list {
  std::vector<bytes_t> src_offsets;
  std::vector<bytes_t> dst_offsets;
  std::vector<bytes_t> sizes;
  bytes_t src_bytes = 0; ///< the source buffer holds this many bytes
  bytes_t dst_bytes = 0; ///< the destination buffer holds this many bytes
  bool identity = true;

  /// Number of copies after merging. Complexity: O(1).
  [[nodiscard]] index_t entries() const noexcept { return static_cast<index_t>(sizes.size()); }
  /// Bytes copied (Σ sizes). Complexity: O(entries).
  [[nodiscard]] bytes_t bytes() const noexcept {
    bytes_t b = 0; // ≤ dst_bytes: the copies do not overlap in the destination
    for (const bytes_t s : sizes) {
      b += s;
    }
    return b;
  }
  /// Member-wise equality.
  friend bool operator==(const copy_list&, const copy_list&) = default;
};

/// Checks explicit copies (entry e: sizes[e] bytes from src_offsets[e] to dst_offsets[e])
/// between buffers of src_bytes and dst_bytes bytes, the input of every copy-list builder
/// (make_copy_list here, the CUDA module's make_copy_program); `where` names the caller in
/// the message. Zero-byte entries are checked too: a malformed entry is an error even when it
/// moves nothing.
/// Complexity: O(entries).
/// Throws: orch::invalid_argument (lists of different lengths, a negative offset, size or
/// buffer size, a copy outside its buffers — naming the entry), orch::overflow.
inline void check_copies(const char* where, std::span<const bytes_t> src_offsets,
                         std::span<const bytes_t> dst_offsets, std::span<const bytes_t> sizes,
                         bytes_t src_bytes, bytes_t dst_bytes) {
  if (src_offsets.size() != sizes.size() || dst_offsets.size() != sizes.size()) {
    throw_invalid_argument(where, ": ", src_offsets.size(), " source offsets, ", dst_offsets.size(),
                           " destination offsets and ", sizes.size(), " sizes");
  }
  if (src_bytes < 0 || dst_bytes < 0) {
    throw_invalid_argument(where, ": negative buffer size (source ", src_bytes, ", destination ",
                           dst_bytes, ")");
  }
  for (std::size_t e = 0; e < sizes.size(); ++e) {
    if (sizes[e] < 0 || src_offsets[e] < 0 || dst_offsets[e] < 0) {
      throw_invalid_argument(where, ": entry ", e, " has a negative offset or size (", sizes[e],
                             " bytes from ", src_offsets[e], " to ", dst_offsets[e], ")");
    }
    if (orch::detail::checked_add(src_offsets[e], sizes[e], where) > src_bytes ||
        orch::detail::checked_add(dst_offsets[e], sizes[e], where) > dst_bytes) {
      throw_invalid_argument(where, ": entry ", e, " copies ", sizes[e], " bytes from offset ",
                             src_offsets[e], " to offset ", dst_offsets[e],
                             ", outside the buffers of ", src_bytes, " and ", dst_bytes, " bytes");
    }
  }
}

/// The merged copy list of explicit copies (entry e: sizes[e] bytes from src_offsets[e] to
/// dst_offsets[e]) between buffers of src_bytes and dst_bytes bytes.
/// Complexity: O(entries).
/// Throws: as check_copies.
[[nodiscard]] inline copy_list make_copy_list(std::span<const bytes_t> src_offsets,
                                              std::span<const bytes_t> dst_offsets,
                                              std::span<const bytes_t> sizes, bytes_t src_bytes,
                                              bytes_t dst_bytes) {
  check_copies("orch::transport::make_copy_list", src_offsets, dst_offsets, sizes, src_bytes,
               dst_bytes);
  copy_list c;
  c.src_bytes = src_bytes;
  c.dst_bytes = dst_bytes;
  for (std::size_t e = 0; e < sizes.size(); ++e) {
    if (sizes[e] == 0) {
      continue; // nothing to move; its offsets decide nothing
    }
    c.identity = c.identity && src_offsets[e] == dst_offsets[e];
    const std::size_t last = c.sizes.size();
    if (last > 0 && c.src_offsets[last - 1] + c.sizes[last - 1] == src_offsets[e] &&
        c.dst_offsets[last - 1] + c.sizes[last - 1] == dst_offsets[e]) {
      c.sizes[last - 1] += sizes[e]; // within the checked buffers: no overflow
    } else {
      c.src_offsets.push_back(src_offsets[e]);
      c.dst_offsets.push_back(dst_offsets[e]);
      c.sizes.push_back(sizes[e]);
    }
  }
  return c;
}

/// The pack copies of `view`'s rank: source buffer → send buffer (what orch::pack does).
/// Complexity: O(items the rank sends). Throws: as make_copy_list (a malformed view).
[[nodiscard]] inline copy_list make_pack_list(const rank_view& view) {
  return make_copy_list(view.send_source_offsets, view.send_packed_offsets, view.send_sizes,
                        view.source_bytes, view.source_bytes);
}

/// The unpack copies of `view`'s rank: receive buffer → destination buffer (orch::unpack).
/// Complexity: O(items the rank receives). Throws: as make_copy_list (a malformed view).
[[nodiscard]] inline copy_list make_unpack_list(const rank_view& view) {
  return make_copy_list(view.recv_packed_offsets, view.recv_destination_offsets, view.recv_sizes,
                        view.destination_bytes, view.destination_bytes);
}

/// Runs the copies of `list` from `src` into `dst` on the CPU. An identity list run in place
/// (src and dst the same memory) copies nothing.
/// Complexity: O(entries + bytes).
/// Throws: orch::invalid_argument (a buffer smaller than the list's src_bytes / dst_bytes; the
/// same memory as source and destination of a list that is not the identity).
inline void run_copies(const copy_list& list, std::span<const std::byte> src,
                       std::span<std::byte> dst) {
  if (src.size() < static_cast<std::size_t>(list.src_bytes) ||
      dst.size() < static_cast<std::size_t>(list.dst_bytes)) {
    throw_invalid_argument("orch::transport::run_copies: buffers of ", src.size(), " and ",
                           dst.size(), " bytes, the copy list needs ", list.src_bytes, " and ",
                           list.dst_bytes);
  }
  if (src.data() == dst.data() && list.bytes() > 0) {
    if (list.identity) {
      return;
    }
    throw_invalid_argument("orch::transport::run_copies: a copy list that moves bytes cannot run "
                           "in place");
  }
  for (std::size_t e = 0; e < list.sizes.size(); ++e) {
    std::memcpy(dst.data() + list.dst_offsets[e], src.data() + list.src_offsets[e],
                static_cast<std::size_t>(list.sizes[e])); // sizes > 0: the pointers are valid
  }
}

} // namespace orch::transport
