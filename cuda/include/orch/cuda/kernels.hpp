// SPDX-License-Identifier: Apache-2.0
/// The pack and unpack copies on the GPU, by either copy engine: cub::DeviceMemcpy::Batched
/// over the program's entries (the default), or the module's tile kernel (one warp per tile,
/// 16-byte vector copies when source and destination share their 16-byte alignment, 4-byte or
/// byte copies else).
#pragma once

#include <orch/cuda/copy_program.hpp>
#include <orch/cuda/device_plan.hpp>
#include <orch/types.hpp>

#include <cuda_runtime_api.h>

#include <cstddef>

namespace orch::cuda {

/// Enqueues `program` on `stream` with the tile kernel: for every entry e,
/// d_dst[dst_offsets[e], +sizes[e]) = d_src[src_offsets[e], +sizes[e]). Any sizes and
/// alignments; nothing is launched for a program without tiles. The buffers must not overlap.
/// Complexity: O(tiles + bytes) on the device. Throws: cuda_error (launch failed).
void launch_copy(const copy_program_ref& program, const void* d_src, void* d_dst,
                 cudaStream_t stream);

/// Enqueues the same copies with cub::DeviceMemcpy::Batched, one buffer per entry (the tile
/// arrays are not read). `d_temp` holds at least detail::batched_copy_temp_bytes(entries)
/// bytes. Nothing is launched for a program without entries.
/// Complexity: O(entries + bytes) on the device. Throws: cuda_error.
void launch_batched_copy(const copy_program_ref& program, index_t entries, const void* d_src,
                         void* d_dst, void* d_temp, std::size_t temp_bytes, cudaStream_t stream);

/// Packs the rank's source buffer into its send buffer (orch::pack on the GPU).
/// Throws: cuda_error.
void pack(const device_plan& plan, const void* d_source, void* d_send, cudaStream_t stream,
          copy_engine engine = copy_engine::cub_batched);

/// Unpacks the rank's receive buffer into its destination buffer (orch::unpack on the GPU).
/// Throws: cuda_error.
void unpack(const device_plan& plan, const void* d_recv, void* d_destination, cudaStream_t stream,
            copy_engine engine = copy_engine::cub_batched);

namespace detail {
/// Bytes of temporary storage cub::DeviceMemcpy::Batched needs for `entries` buffers (a host
/// query, no work is enqueued; it reads the current device's properties).
/// Throws: cuda_error.
[[nodiscard]] std::size_t batched_copy_temp_bytes(index_t entries);
} // namespace detail

} // namespace orch::cuda
