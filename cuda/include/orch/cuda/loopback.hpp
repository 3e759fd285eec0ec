// SPDX-License-Identifier: Apache-2.0
/// The loopback transport: N virtual ranks on one GPU, each with its own buffers, exchanging
/// through device-to-device copies with the same pack / unpack kernels and schedule code as
/// the NCCL communicator — multi-rank behaviour tested on a single GPU.
#pragma once

#include <orch/cuda/copy_program.hpp>
#include <orch/cuda/device_buffer.hpp>
#include <orch/cuda/device_plan.hpp>
#include <orch/exchange/plan.hpp>
#include <orch/exchange/schedule.hpp>
#include <orch/transport/routes.hpp>
#include <orch/types.hpp>

#include <cuda_runtime_api.h>

#include <array>
#include <span>
#include <vector>

namespace orch::cuda {

/// N virtual ranks on the current device. An exchange is prepare() — host planning (every
/// rank's program from the exchange core and the chunk routes, transport::make_routes) and
/// the uploads — then run(): device work only, for every rank pack, then every chunk with
/// bytes as one cudaMemcpyAsync between the ranks' buffers, then unpack, all on one stream,
/// asynchronously. run() can be
/// repeated on other buffers of the same sizes (benchmarks time run() alone). Workspaces: one
/// per virtual rank, sized like the communicator's. Move-only.
class loopback {
public:
  /// `ranks` virtual ranks. Throws: orch::invalid_argument (ranks ≤ 0).
  explicit loopback(rank_t ranks, bytes_t tile_bytes = default_tile_bytes,
                    copy_engine engine = copy_engine::cub_batched);

  /// Number of virtual ranks. Complexity: O(1).
  [[nodiscard]] rank_t ranks() const noexcept { return static_cast<rank_t>(stages_[0].size()); }

  /// Prepares a flat exchange of `plan` (uploads on `stream`; waits as device_plan::upload).
  /// Throws: orch::invalid_argument (plan of another size, views that disagree), cuda_error.
  void prepare(const exchange_plan& plan, cudaStream_t stream);
  /// Prepares a node-wise exchange through per-rank staging buffers. Throws: as above.
  void prepare(const node_schedule& schedule, cudaStream_t stream);
  /// Enqueues the prepared exchange: d_src[r] holds source_bytes(r) bytes, d_dst[r]
  /// destination_bytes(r) bytes of the prepared plan (any pointer, even null, for 0 bytes).
  /// Complexity: O(ranks + chunks) launches, no host wait.
  /// Throws: orch::invalid_argument (nothing prepared, pointer counts differ from ranks()),
  /// cuda_error.
  void run(std::span<const void* const> d_src, std::span<void* const> d_dst, cudaStream_t stream);

  /// prepare(plan) then run(). Throws: as both.
  void exchange(const exchange_plan& plan, std::span<const void* const> d_src,
                std::span<void* const> d_dst, cudaStream_t stream);
  /// prepare(schedule) then run(). Throws: as both.
  void exchange(const node_schedule& schedule, std::span<const void* const> d_src,
                std::span<void* const> d_dst, cudaStream_t stream);

private:
  void prepare_stage(std::size_t stage, const exchange_plan& plan, bytes_t base,
                     cudaStream_t stream);
  void run_stage(std::size_t stage, std::span<const void* const> d_src,
                 std::span<void* const> d_dst, cudaStream_t stream);

  bytes_t tile_bytes_;
  copy_engine engine_;
  std::array<std::vector<device_plan>, 2> stages_; // [0]: flat or stage 1, [1]: stage 2
  std::array<std::vector<transport::route>, 2> routes_;
  std::size_t prepared_stages_ = 0; // 0 (nothing), 1 (flat) or 2 (node-wise)
  std::vector<device_buffer> workspaces_;
};

} // namespace orch::cuda
