// SPDX-License-Identifier: Apache-2.0
#include <orch/config.hpp>
#include <orch/cuda/copy_program.hpp>
#include <orch/cuda/error.hpp>
#include <orch/cuda/kernels.hpp>
#include <orch/cuda/loopback.hpp>
#include <orch/detail/primitives/checked.hpp>
#include <orch/transport/program.hpp>
#include <orch/transport/routes.hpp>
#include <orch/transport/workspace.hpp>

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

// Every rank's program of `plan` with its workspace regions from `base` (past the staging
// buffer in a node-wise exchange), and the routes between the ranks' buffers.
void loopback::prepare_stage(std::size_t stage, const exchange_plan& plan, bytes_t base,
                             cudaStream_t stream) {
  std::vector<rank_view> views;
  views.reserve(stages_[stage].size());
  for (rank_t r = 0; r < ranks(); ++r) {
    views.push_back(plan.view(r));
  }
  routes_[stage] = transport::make_routes(views); // validates before anything is enqueued
  std::vector<transport::flat_program> programs;
  programs.reserve(views.size());
  for (const auto& v : views) {
    programs.push_back(transport::make_flat_program(v, plan.ranks(), plan.hash(), base));
  }
  for (std::size_t r = 0; r < views.size(); ++r) {
    const bytes_t need = programs[r].workspace.end;
    stages_[stage][r].upload(std::move(programs[r]), stream, tile_bytes_);
    workspaces_[r].reserve(need);
  }
}

void loopback::prepare(const exchange_plan& plan, cudaStream_t stream) {
  if (plan.ranks() != ranks()) {
    throw_invalid_argument(where, "::prepare: plan on ", plan.ranks(), " ranks for ", ranks(),
                           " virtual ranks");
  }
  prepared_stages_ = 0;
  prepare_stage(0, plan, 0, stream);
  prepared_stages_ = 1;
}

void loopback::prepare(const node_schedule& schedule, cudaStream_t stream) {
  if (schedule.inter_node.ranks() != ranks()) {
    throw_invalid_argument(where, "::prepare: schedule on ", schedule.inter_node.ranks(),
                           " ranks for ", ranks(), " virtual ranks");
  }
  prepared_stages_ = 0;
  // Per rank: [staging | stage buffers]; the staging buffers are stage 1's destinations and
  // stage 2's sources. One staging size for all ranks keeps the layout simple.
  bytes_t staging = 0;
  for (const bytes_t b : schedule.staging_bytes) {
    staging = std::max(staging, transport::align_up(b));
  }
  prepare_stage(0, schedule.inter_node, staging, stream);
  prepare_stage(1, schedule.intra_node, staging, stream);
  prepared_stages_ = 2;
}

void loopback::run_stage(std::size_t stage, std::span<const void* const> d_src,
                         std::span<void* const> d_dst, cudaStream_t stream) {
  const auto k = stages_[stage].size();
  std::vector<const std::byte*> send(k);
  std::vector<std::byte*> recv(k);
  for (std::size_t r = 0; r < k; ++r) {
    const auto& plan = stages_[stage][r];
    const auto& p = plan.program();
    auto* base = static_cast<std::byte*>(workspaces_[r].data());
    if (p.pack.identity) {
      send[r] = static_cast<const std::byte*>(d_src[r]);
    } else {
      pack(plan, d_src[r], base + p.workspace.send_offset, stream, engine_);
      send[r] = base + p.workspace.send_offset;
    }
    recv[r] =
        p.unpack.identity ? static_cast<std::byte*>(d_dst[r]) : base + p.workspace.recv_offset;
  }
  for (const transport::route& c : routes_[stage]) {
    ORCH_CUDA_CHECK(
        cudaMemcpyAsync(recv[static_cast<std::size_t>(c.destination)] + c.destination_offset,
                        send[static_cast<std::size_t>(c.source)] + c.source_offset,
                        static_cast<std::size_t>(c.bytes), cudaMemcpyDeviceToDevice, stream));
  }
  for (std::size_t r = 0; r < k; ++r) {
    const auto& plan = stages_[stage][r];
    if (!plan.program().unpack.identity) {
      unpack(plan, recv[r], d_dst[r], stream, engine_);
    }
  }
}

void loopback::run(std::span<const void* const> d_src, std::span<void* const> d_dst,
                   cudaStream_t stream) {
  const auto k = static_cast<std::size_t>(ranks());
  if (prepared_stages_ == 0) {
    throw_invalid_argument(where,
                           "::run: no exchange was prepared (call prepare or exchange first)");
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
