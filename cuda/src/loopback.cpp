// SPDX-License-Identifier: Apache-2.0
#include <orch/config.hpp>
#include <orch/cuda/copy_program.hpp>
#include <orch/cuda/error.hpp>
#include <orch/cuda/kernels.hpp>
#include <orch/cuda/loopback.hpp>
#include <orch/cuda/transfers.hpp>
#include <orch/detail/checked.hpp>

#include <cuda_runtime_api.h>

#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <vector>

namespace orch::cuda {

namespace {

void check_counts(rank_t ranks, rank_t plan_ranks, std::size_t src, std::size_t dst) {
  if (plan_ranks != ranks || src != static_cast<std::size_t>(ranks) ||
      dst != static_cast<std::size_t>(ranks)) {
    throw_invalid_argument("orch::cuda::loopback::exchange: plan on ", plan_ranks, " ranks, ", src,
                           " source and ", dst, " destination buffers for ", ranks,
                           " virtual ranks");
  }
}

} // namespace

loopback::loopback(rank_t ranks, bytes_t tile_bytes) : tile_bytes_(tile_bytes) {
  if (ranks <= 0) {
    throw_invalid_argument("orch::cuda::loopback: ranks must be positive, got ", ranks);
  }
  plans_.resize(static_cast<std::size_t>(ranks));
  workspaces_.resize(static_cast<std::size_t>(ranks));
}

void loopback::exchange(const exchange_plan& plan, std::span<const void* const> d_src,
                        std::span<void* const> d_dst, cudaStream_t stream) {
  check_counts(ranks(), plan.ranks(), d_src.size(), d_dst.size());
  run_flat(plan, d_src, d_dst, 0, stream);
}

void loopback::exchange(const node_schedule& schedule, std::span<const void* const> d_src,
                        std::span<void* const> d_dst, cudaStream_t stream) {
  check_counts(ranks(), schedule.inter_node.ranks(), d_src.size(), d_dst.size());
  // Per rank: [staging | stage workspace]; the staging buffers are stage 1's destinations
  // and stage 2's sources.
  std::vector<const void*> staging_src(plans_.size());
  std::vector<void*> staging_dst(plans_.size());
  bytes_t offset = 0;
  for (rank_t r = 0; r < ranks(); ++r) {
    const auto x = static_cast<std::size_t>(r);
    offset = std::max(offset, align_workspace(schedule.staging_bytes[x]));
  }
  for (rank_t r = 0; r < ranks(); ++r) {
    const auto x = static_cast<std::size_t>(r);
    const bytes_t stages = std::max(make_flat_workspace(schedule.inter_node.view(r)).total,
                                    make_flat_workspace(schedule.intra_node.view(r)).total);
    workspaces_[x].reserve(
        orch::detail::checked_add(offset, stages, "orch::cuda::loopback::exchange"));
    staging_dst[x] = workspaces_[x].data();
    staging_src[x] = workspaces_[x].data();
  }
  run_flat(schedule.inter_node, d_src, staging_dst, offset, stream);
  run_flat(schedule.intra_node, staging_src, d_dst, offset, stream);
}

void loopback::run_flat(const exchange_plan& plan, std::span<const void* const> d_src,
                        std::span<void* const> d_dst, bytes_t workspace_offset,
                        cudaStream_t stream) {
  const auto k = plans_.size();
  std::vector<rank_view> views;
  views.reserve(k);
  for (rank_t r = 0; r < ranks(); ++r) {
    views.push_back(plan.view(r));
  }
  const auto routes = make_routes(views); // validates before anything is enqueued
  const std::uint64_t hash = plan.hash();
  std::vector<std::byte*> packed(k); // the send buffer in the workspace, when packing
  std::vector<const std::byte*> send(k);
  std::vector<std::byte*> recv(k);
  for (std::size_t r = 0; r < k; ++r) {
    const flat_workspace w = make_flat_workspace(views[r]);
    workspaces_[r].reserve(
        orch::detail::checked_add(workspace_offset, w.total, "orch::cuda::loopback::exchange"));
    auto* base = static_cast<std::byte*>(workspaces_[r].data()) + workspace_offset;
    packed[r] = base + w.send_offset;
    send[r] = views[r].pack_is_identity ? static_cast<const std::byte*>(d_src[r]) : packed[r];
    recv[r] =
        views[r].unpack_is_identity ? static_cast<std::byte*>(d_dst[r]) : base + w.recv_offset;
  }
  for (std::size_t r = 0; r < k; ++r) {
    plans_[r].upload(views[r], hash, stream, tile_bytes_);
    if (!views[r].pack_is_identity) {
      pack(plans_[r], d_src[r], packed[r], stream);
    }
  }
  for (const route& c : routes) {
    ORCH_CUDA_CHECK(
        cudaMemcpyAsync(recv[static_cast<std::size_t>(c.destination)] + c.destination_offset,
                        send[static_cast<std::size_t>(c.source)] + c.source_offset,
                        static_cast<std::size_t>(c.bytes), cudaMemcpyDeviceToDevice, stream));
  }
  for (std::size_t r = 0; r < k; ++r) {
    if (!views[r].unpack_is_identity) {
      unpack(plans_[r], recv[r], d_dst[r], stream);
    }
  }
}

} // namespace orch::cuda
