// SPDX-License-Identifier: Apache-2.0
/// Copy programs: the flat integer arrays the pack / unpack kernels consume (one tile of at
/// most tile_bytes per warp), built on the host from the backend-neutral core's copy lists
/// (orch/transport/copy_list.hpp), plus their CPU emulation. Plain C++: no CUDA needed to
/// build, test or read it.
#pragma once

#include <orch/config.hpp>
#include <orch/detail/primitives/checked.hpp>
#include <orch/transport/copy_list.hpp>
#include <orch/types.hpp>

#include <cstddef>
#include <cstdint>
#include <cstring>
#include <span>
#include <vector>

#if defined(__CUDACC__)
#define ORCH_CUDA_HOST_DEVICE __host__ __device__
#else
#define ORCH_CUDA_HOST_DEVICE
#endif

namespace orch::cuda {

/// Bytes one warp copies per tile (a multiple of 16, so every tile of an item starts with the
/// item's own 16-byte alignment). Large enough to amortise the tile lookup, small enough
/// that one huge item spreads over the whole GPU.
inline constexpr bytes_t default_tile_bytes = 16384;

/// How pack and unpack run a copy program on the GPU.
enum class copy_engine {
  /// cub::DeviceMemcpy::Batched over the program's entries (CUB, shipped with the CUDA
  /// toolkit's CCCL): the default until scripts/device-check.sh measures the tiles faster.
  cub_batched,
  /// The module's own kernel: one warp per tile of at most tile_bytes (tile_at below).
  tiles
};

/// A list of copies dst[dst_offsets[e], +sizes[e]) = src[src_offsets[e], +sizes[e]) split
/// into tiles: entry e owns tiles first_tile[e] .. first_tile[e + 1] - 1, tile t belongs to
/// entry tile_entry[t] and covers bytes [(t - first_tile[e]) · tile_bytes, +tile_bytes) of it
/// (the last tile of an entry is shorter). Zero-byte entries own no tiles.
struct copy_program {
  bytes_t tile_bytes = default_tile_bytes;
  std::vector<bytes_t> src_offsets; ///< per entry
  std::vector<bytes_t> dst_offsets; ///< per entry
  std::vector<bytes_t> sizes;       ///< per entry
  std::vector<bytes_t> first_tile;  ///< per entry + 1
  std::vector<index_t> tile_entry;  ///< per tile
  bytes_t src_bytes = 0;            ///< the source buffer must hold at least this many bytes
  bytes_t dst_bytes = 0;            ///< the destination buffer must hold at least this many

  /// Number of copies. Complexity: O(1).
  [[nodiscard]] index_t entries() const noexcept { return static_cast<index_t>(sizes.size()); }
  /// Number of tiles (warp work units). Complexity: O(1).
  [[nodiscard]] index_t tiles() const noexcept { return static_cast<index_t>(tile_entry.size()); }
};

/// The copy program of explicit copy lists into buffers of `src_bytes` / `dst_bytes`.
/// Complexity: O(entries + tiles).
/// Throws: orch::invalid_argument (tile_bytes not a positive multiple of 16; the copies as
/// transport::check_copies rejects them, naming the entry), orch::overflow (offset + size does
/// not fit bytes_t).
[[nodiscard]] inline copy_program make_copy_program(std::span<const bytes_t> src_offsets,
                                                    std::span<const bytes_t> dst_offsets,
                                                    std::span<const bytes_t> sizes,
                                                    bytes_t src_bytes, bytes_t dst_bytes,
                                                    bytes_t tile_bytes = default_tile_bytes) {
  const char* where = "orch::cuda::make_copy_program";
  if (tile_bytes <= 0 || tile_bytes % 16 != 0) {
    throw_invalid_argument(where, ": tile_bytes ", tile_bytes, " is not a positive multiple of 16");
  }
  transport::check_copies(where, src_offsets, dst_offsets, sizes, src_bytes, dst_bytes);
  copy_program p;
  p.tile_bytes = tile_bytes;
  p.src_bytes = src_bytes;
  p.dst_bytes = dst_bytes;
  p.src_offsets.assign(src_offsets.begin(), src_offsets.end());
  p.dst_offsets.assign(dst_offsets.begin(), dst_offsets.end());
  p.sizes.assign(sizes.begin(), sizes.end());
  p.first_tile.assign(sizes.size() + 1, 0);
  for (std::size_t e = 0; e < sizes.size(); ++e) {
    // Tiles ≤ Σ sizes / 16 + entries, far below 2^63: no overflow.
    p.first_tile[e + 1] = p.first_tile[e] + orch::detail::ceil_div(sizes[e], tile_bytes);
  }
  p.tile_entry.resize(static_cast<std::size_t>(p.first_tile.back()));
  for (std::size_t e = 0; e < sizes.size(); ++e) {
    for (auto t = static_cast<std::size_t>(p.first_tile[e]);
         t < static_cast<std::size_t>(p.first_tile[e + 1]); ++t) {
      p.tile_entry[t] = static_cast<index_t>(e);
    }
  }
  return p;
}

/// The copy program of one of the core's copy lists (a rank's pack or unpack copies, zero-byte
/// items dropped and contiguous runs merged, see transport::make_pack_list).
/// Complexity: O(entries + tiles). Throws: as make_copy_program.
[[nodiscard]] inline copy_program make_copy_program(const transport::copy_list& list,
                                                    bytes_t tile_bytes = default_tile_bytes) {
  return make_copy_program(list.src_offsets, list.dst_offsets, list.sizes, list.src_bytes,
                           list.dst_bytes, tile_bytes);
}

/// Where a copy program's arrays start inside a flat array of 64-bit words (the layout of the
/// blob a device_plan uploads), in words.
struct program_slots {
  std::size_t src_offsets = 0;
  std::size_t dst_offsets = 0;
  std::size_t sizes = 0;
  std::size_t first_tile = 0;
  std::size_t tile_entry = 0;
  index_t tiles = 0;
  bytes_t tile_bytes = default_tile_bytes;
};

/// Appends the arrays of `p` to `words` and returns where they went.
/// Complexity: O(entries + tiles). Throws: nothing but std::bad_alloc.
inline program_slots append_program(std::vector<std::int64_t>& words, const copy_program& p) {
  program_slots s;
  s.tiles = p.tiles();
  s.tile_bytes = p.tile_bytes;
  const auto put = [&words](const auto& array) {
    const std::size_t at = words.size();
    words.insert(words.end(), array.begin(), array.end());
    return at;
  };
  s.src_offsets = put(p.src_offsets);
  s.dst_offsets = put(p.dst_offsets);
  s.sizes = put(p.sizes);
  s.first_tile = put(p.first_tile);
  s.tile_entry = put(p.tile_entry);
  return s;
}

/// A copy program as the kernel sees it: pointers into an uploaded word array (device
/// pointers on the GPU, host pointers in the CPU emulation).
struct copy_program_ref {
  const std::int64_t* src_offsets = nullptr;
  const std::int64_t* dst_offsets = nullptr;
  const std::int64_t* sizes = nullptr;
  const std::int64_t* first_tile = nullptr;
  const std::int64_t* tile_entry = nullptr;
  std::int64_t tiles = 0;
  std::int64_t tile_bytes = default_tile_bytes;
};

/// The program at `slots` of the word array starting at `base`. Complexity: O(1).
[[nodiscard]] inline copy_program_ref program_at(const std::int64_t* base,
                                                 const program_slots& slots) noexcept {
  return {base + slots.src_offsets, base + slots.dst_offsets, base + slots.sizes,
          base + slots.first_tile,  base + slots.tile_entry,  slots.tiles,
          slots.tile_bytes};
}

/// One tile's copy: `bytes` bytes from offset `src` to offset `dst`.
struct tile_copy {
  std::int64_t src = 0;
  std::int64_t dst = 0;
  std::int64_t bytes = 0;
};

/// Tile t of a program (0 ≤ t < tiles). The kernel and the CPU emulation both decode tiles
/// with exactly this function. Complexity: O(1).
ORCH_CUDA_HOST_DEVICE inline tile_copy tile_at(const copy_program_ref& p, std::int64_t t) {
  const std::int64_t e = p.tile_entry[t];
  const std::int64_t begin = (t - p.first_tile[e]) * p.tile_bytes;
  const std::int64_t left = p.sizes[e] - begin;
  return {p.src_offsets[e] + begin, p.dst_offsets[e] + begin,
          left < p.tile_bytes ? left : p.tile_bytes};
}

/// CPU emulation of the copy kernel: every tile of `p`, in any order, as the kernel runs it.
/// The caller guarantees the buffers hold the program's src_bytes / dst_bytes.
/// Complexity: O(tiles + bytes).
inline void run_copy_program(const copy_program_ref& p, const std::byte* src, std::byte* dst) {
  for (std::int64_t t = 0; t < p.tiles; ++t) {
    const tile_copy c = tile_at(p, t);
    std::memcpy(dst + c.dst, src + c.src, static_cast<std::size_t>(c.bytes));
  }
}

} // namespace orch::cuda
