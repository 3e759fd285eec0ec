// SPDX-License-Identifier: Apache-2.0
/// The loopback transport: N virtual ranks on one GPU, each with its own buffers, exchanging
/// through device-to-device copies with the same pack / unpack kernels and schedule code as
/// the NCCL communicator — multi-rank behaviour tested on a single GPU.
#pragma once

#include <orch/cuda/device_buffer.hpp>
#include <orch/cuda/device_plan.hpp>
#include <orch/plan.hpp>
#include <orch/schedule.hpp>
#include <orch/types.hpp>

#include <cuda_runtime_api.h>

#include <span>
#include <vector>

namespace orch::cuda {

/// N virtual ranks on the current device. exchange() runs, for every rank, upload → pack,
/// then every chunk with bytes as one cudaMemcpyAsync between the ranks' buffers
/// (make_routes), then unpack — all on one stream, asynchronously. Workspaces: one per
/// virtual rank, sized like the communicator's. Move-only.
class loopback {
public:
  /// `ranks` virtual ranks. Throws: orch::invalid_argument (ranks ≤ 0).
  explicit loopback(rank_t ranks, bytes_t tile_bytes = default_tile_bytes);

  /// Number of virtual ranks. Complexity: O(1).
  [[nodiscard]] rank_t ranks() const noexcept { return static_cast<rank_t>(plans_.size()); }

  /// Flat exchange: d_src[r] holds plan.source_bytes(r) bytes, d_dst[r]
  /// plan.destination_bytes(r) bytes (any pointer, even null, for 0 bytes).
  /// Throws: orch::invalid_argument (plan or pointer counts differ from ranks()), cuda_error.
  void exchange(const exchange_plan& plan, std::span<const void* const> d_src,
                std::span<void* const> d_dst, cudaStream_t stream);
  /// Node-wise exchange through per-rank staging buffers. Throws: as the flat exchange.
  void exchange(const node_schedule& schedule, std::span<const void* const> d_src,
                std::span<void* const> d_dst, cudaStream_t stream);

private:
  void run_flat(const exchange_plan& plan, std::span<const void* const> d_src,
                std::span<void* const> d_dst, bytes_t workspace_offset, cudaStream_t stream);

  bytes_t tile_bytes_;
  std::vector<device_plan> plans_;
  std::vector<device_buffer> workspaces_;
};

} // namespace orch::cuda
