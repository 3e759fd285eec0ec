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

constexpr const char* where = "orch::cuda::loopback";

} // namespace

loopback::loopback(rank_t ranks, bytes_t tile_bytes, copy_engine engine)
    : tile_bytes_(tile_bytes), engine_(engine) {
  if (ranks <= 0) {
    throw_invalid_argument(where, ": ranks must be positive, got ", ranks);
  }
  for (auto& stage : stages_) {
    stage.resize(static_cast<std::size_t>(ranks));
  }
  workspaces_.resize(static_cast<std::size_t>(ranks));
}

void loopback::prepare_stage(std::size_t stage, const exchange_plan& plan, cudaStream_t stream) {
  std::vector<rank_view> views;
  views.reserve(stages_[stage].size());
  for (rank_t r = 0; r < ranks(); ++r) {
    views.push_back(plan.view(r));
  }
  routes_[stage] = make_routes(views); // validates before anything is enqueued
  const std::uint64_t hash = plan.hash();
  for (std::size_t r = 0; r < views.size(); ++r) {
    auto& s = stages_[stage][r];
    s.layout = make_flat_workspace(views[r]);
    s.plan.upload(std::move(views[r]), hash, stream, tile_bytes_);
  }
}

void loopback::prepare(const exchange_plan& plan, cudaStream_t stream) {
  if (plan.ranks() != ranks()) {
    throw_invalid_argument(where, "::prepare: plan on ", plan.ranks(), " ranks for ", ranks(),
                           " virtual ranks");
  }
  prepared_stages_ = 0;
  prepare_stage(0, plan, stream);
  staging_offset_ = 0;
  for (std::size_t r = 0; r < workspaces_.size(); ++r) {
    workspaces_[r].reserve(stages_[0][r].layout.total);
  }
  prepared_stages_ = 1;
}

void loopback::prepare(const node_schedule& schedule, cudaStream_t stream) {
  if (schedule.inter_node.ranks() != ranks()) {
    throw_invalid_argument(where, "::prepare: schedule on ", schedule.inter_node.ranks(),
                           " ranks for ", ranks(), " virtual ranks");
  }
  prepared_stages_ = 0;
  prepare_stage(0, schedule.inter_node, stream);
  prepare_stage(1, schedule.intra_node, stream);
  // Per rank: [staging | stage workspace]; the staging buffers are stage 1's destinations
  // and stage 2's sources. One offset for all ranks keeps the layout simple.
  staging_offset_ = 0;
  for (const bytes_t b : schedule.staging_bytes) {
    staging_offset_ = std::max(staging_offset_, align_workspace(b));
  }
  for (std::size_t r = 0; r < workspaces_.size(); ++r) {
    const bytes_t stages = std::max(stages_[0][r].layout.total, stages_[1][r].layout.total);
    workspaces_[r].reserve(orch::detail::checked_add(staging_offset_, stages, where));
  }
  prepared_stages_ = 2;
}

void loopback::run_stage(std::size_t stage, std::span<const void* const> d_src,
                         std::span<void* const> d_dst, cudaStream_t stream) {
  const auto k = stages_[stage].size();
  std::vector<const std::byte*> send(k);
  std::vector<std::byte*> recv(k);
  for (std::size_t r = 0; r < k; ++r) {
    const auto& s = stages_[stage][r];
    const rank_view& v = s.plan.view();
    auto* base = static_cast<std::byte*>(workspaces_[r].data()) + staging_offset_;
    if (v.pack_is_identity) {
      send[r] = static_cast<const std::byte*>(d_src[r]);
    } else {
      pack(s.plan, d_src[r], base + s.layout.send_offset, stream, engine_);
      send[r] = base + s.layout.send_offset;
    }
    recv[r] =
        v.unpack_is_identity ? static_cast<std::byte*>(d_dst[r]) : base + s.layout.recv_offset;
  }
  for (const route& c : routes_[stage]) {
    ORCH_CUDA_CHECK(
        cudaMemcpyAsync(recv[static_cast<std::size_t>(c.destination)] + c.destination_offset,
                        send[static_cast<std::size_t>(c.source)] + c.source_offset,
                        static_cast<std::size_t>(c.bytes), cudaMemcpyDeviceToDevice, stream));
  }
  for (std::size_t r = 0; r < k; ++r) {
    const auto& s = stages_[stage][r];
    if (!s.plan.view().unpack_is_identity) {
      unpack(s.plan, recv[r], d_dst[r], stream, engine_);
    }
  }
}

void loopback::run(std::span<const void* const> d_src, std::span<void* const> d_dst,
                   cudaStream_t stream) {
  const auto k = static_cast<std::size_t>(ranks());
  if (prepared_stages_ == 0) {
    throw_invalid_argument(where, "::run: no exchange was prepared");
  }
  if (d_src.size() != k || d_dst.size() != k) {
    throw_invalid_argument(where, "::run: ", d_src.size(), " source and ", d_dst.size(),
                           " destination buffers for ", k, " virtual ranks");
  }
  if (prepared_stages_ == 1) {
    run_stage(0, d_src, d_dst, stream);
    return;
  }
  std::vector<const void*> staging_src(k);
  std::vector<void*> staging_dst(k);
  for (std::size_t r = 0; r < k; ++r) {
    staging_src[r] = workspaces_[r].data();
    staging_dst[r] = workspaces_[r].data();
  }
  run_stage(0, d_src, staging_dst, stream);
  run_stage(1, staging_src, d_dst, stream);
}

void loopback::exchange(const exchange_plan& plan, std::span<const void* const> d_src,
                        std::span<void* const> d_dst, cudaStream_t stream) {
  prepare(plan, stream);
  run(d_src, d_dst, stream);
}

void loopback::exchange(const node_schedule& schedule, std::span<const void* const> d_src,
                        std::span<void* const> d_dst, cudaStream_t stream) {
  prepare(schedule, stream);
  run(d_src, d_dst, stream);
}

} // namespace orch::cuda
