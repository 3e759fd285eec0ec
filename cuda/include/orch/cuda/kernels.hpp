// SPDX-License-Identifier: Apache-2.0
/// The pack and unpack kernels: one warp per tile of a copy program, 16-byte vector copies
/// when source and destination share their 16-byte alignment, 4-byte or byte copies else.
#pragma once

#include <orch/cuda/copy_program.hpp>
#include <orch/cuda/device_plan.hpp>

#include <cuda_runtime_api.h>

namespace orch::cuda {

/// Enqueues `program` on `stream`: for every entry e,
/// d_dst[dst_offsets[e], +sizes[e]) = d_src[src_offsets[e], +sizes[e]). Any sizes and
/// alignments; nothing is launched for a program without tiles. The buffers must not overlap.
/// Complexity: O(tiles + bytes) on the device. Throws: cuda_error (launch failed).
void launch_copy(const copy_program_ref& program, const void* d_src, void* d_dst,
                 cudaStream_t stream);

/// Packs the rank's source buffer into its send buffer (orch::pack on the GPU).
/// Throws: cuda_error.
void pack(const device_plan& plan, const void* d_source, void* d_send, cudaStream_t stream);

/// Unpacks the rank's receive buffer into its destination buffer (orch::unpack on the GPU).
/// Throws: cuda_error.
void unpack(const device_plan& plan, const void* d_recv, void* d_destination, cudaStream_t stream);

} // namespace orch::cuda
