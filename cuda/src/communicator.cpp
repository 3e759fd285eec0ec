// SPDX-License-Identifier: Apache-2.0
#include <orch/config.hpp>
#include <orch/cuda/communicator.hpp>
#include <orch/cuda/copy_program.hpp>
#include <orch/cuda/error.hpp>
#include <orch/cuda/kernels.hpp>
#include <orch/cuda/transfers.hpp>
#include <orch/detail/checked.hpp>

#include <cuda_runtime_api.h>

#include <algorithm>
#include <chrono>
#include <cstddef>
#include <cstdint>
#include <cstring>
#include <thread>
#include <utility>

namespace orch::cuda {

// ---- nccl_comm ---------------------------------------------------------------------------

nccl_comm::~nccl_comm() {
  if (comm_ != nullptr) {
    static_cast<void>(ncclCommDestroy(comm_)); // destructors never throw
  }
}

nccl_comm::nccl_comm(nccl_comm&& other) noexcept : comm_(std::exchange(other.comm_, nullptr)) {}

nccl_comm& nccl_comm::operator=(nccl_comm&& other) noexcept {
  if (this != &other) {
    if (comm_ != nullptr) {
      static_cast<void>(ncclCommDestroy(comm_));
    }
    comm_ = std::exchange(other.comm_, nullptr);
  }
  return *this;
}

nccl_comm nccl_comm::init_rank(rank_t ranks, const ncclUniqueId& id, rank_t rank) {
  if (ranks <= 0 || rank < 0 || rank >= ranks) {
    throw_invalid_argument("orch::cuda::nccl_comm::init_rank: rank ", rank, " outside [0, ", ranks,
                           ")");
  }
  nccl_comm c;
  ORCH_NCCL_CHECK(ncclCommInitRank(&c.comm_, ranks, id, rank));
  return c;
}

nccl_comm nccl_comm::single(int device) {
  nccl_comm c;
  ORCH_NCCL_CHECK(ncclCommInitAll(&c.comm_, 1, &device));
  return c;
}

nccl_comm nccl_comm::adopt(ncclComm_t comm) noexcept {
  nccl_comm c;
  c.comm_ = comm;
  return c;
}

void nccl_comm::abort() noexcept {
  if (comm_ != nullptr) {
    static_cast<void>(ncclCommAbort(comm_));
    comm_ = nullptr;
  }
}

// ---- communicator ------------------------------------------------------------------------

namespace {

constexpr std::size_t max_hashes = 8;

} // namespace

communicator::communicator(ncclComm_t comm, communicator_options options)
    : comm_(comm), options_(options) {
  if (comm_ == nullptr) {
    throw_invalid_argument("orch::cuda::communicator: null ncclComm_t");
  }
  int rank = 0;
  int count = 0;
  ORCH_NCCL_CHECK(ncclCommUserRank(comm_, &rank));
  ORCH_NCCL_CHECK(ncclCommCount(comm_, &count));
  rank_ = rank;
  size_ = count;
}

communicator::communicator(nccl_comm&& comm, communicator_options options)
    : communicator(comm.get(), options) {
  owned_ = std::move(comm); // only once the borrowed-handle checks passed
}

bytes_t communicator::workspace_bytes(const exchange_plan& plan, rank_t rank) {
  return make_flat_workspace(plan.view(rank)).total;
}

bytes_t communicator::staging_bytes(const node_schedule& schedule, rank_t rank) {
  const bytes_t staging =
      align_workspace(schedule.inter_node.destination_bytes(rank)); // validates rank
  const bytes_t stages = std::max(make_flat_workspace(schedule.inter_node.view(rank)).total,
                                  make_flat_workspace(schedule.intra_node.view(rank)).total);
  return orch::detail::checked_add(staging, stages, "orch::cuda::communicator::staging_bytes");
}

void communicator::exchange(const exchange_plan& plan, const void* d_src, void* d_dst,
                            cudaStream_t stream) {
  if (plan.ranks() != size_) {
    throw_invalid_argument("orch::cuda::communicator::exchange: plan on ", plan.ranks(),
                           " ranks but the communicator has ", size_);
  }
  const std::uint64_t hash = plan.hash();
  if (options_.check_plan_hash) {
    check_plan_hashes(std::span<const std::uint64_t>(&hash, 1), stream);
  }
  first_.upload(plan.view(rank_), hash, stream, options_.tile_bytes);
  const auto need = make_flat_workspace(first_.view()).total;
  workspace_.reserve(need);
  run_flat(first_, d_src, d_dst, static_cast<std::byte*>(workspace_.data()), stream);
}

void communicator::exchange(const node_schedule& schedule, const void* d_src, void* d_dst,
                            cudaStream_t stream) {
  if (schedule.inter_node.ranks() != size_) {
    throw_invalid_argument("orch::cuda::communicator::exchange: schedule on ",
                           schedule.inter_node.ranks(), " ranks but the communicator has ", size_);
  }
  const std::uint64_t hashes[2] = {schedule.inter_node.hash(), schedule.intra_node.hash()};
  if (options_.check_plan_hash) {
    check_plan_hashes(hashes, stream);
  }
  first_.upload(schedule.inter_node.view(rank_), hashes[0], stream, options_.tile_bytes);
  second_.upload(schedule.intra_node.view(rank_), hashes[1], stream, options_.tile_bytes);
  const bytes_t staging = align_workspace(first_.view().destination_bytes);
  workspace_.reserve(staging_bytes(schedule, rank_));
  auto* base = static_cast<std::byte*>(workspace_.data());
  run_flat(first_, d_src, base, base + staging, stream);
  run_flat(second_, base, d_dst, base + staging, stream);
}

void communicator::exchange(const device_plan& uploaded, const void* d_src, void* d_dst,
                            cudaStream_t stream, void* d_workspace) {
  if (uploaded.view().rank != rank_) {
    throw_invalid_argument("orch::cuda::communicator::exchange: view of rank ",
                           uploaded.view().rank, " on rank ", rank_);
  }
  if (d_workspace == nullptr) {
    workspace_.reserve(make_flat_workspace(uploaded.view()).total);
    d_workspace = workspace_.data();
  }
  run_flat(uploaded, d_src, d_dst, static_cast<std::byte*>(d_workspace), stream);
}

void communicator::run_flat(const device_plan& plan, const void* d_src, void* d_dst,
                            std::byte* d_workspace, cudaStream_t stream) {
  if (comm_ == nullptr) {
    throw_invalid_argument("orch::cuda::communicator::exchange: the communicator was aborted");
  }
  const rank_view& view = plan.view();
  const flat_workspace w = make_flat_workspace(view);
  const auto* send = static_cast<const std::byte*>(d_src);
  if (!view.pack_is_identity) {
    pack(plan, d_src, d_workspace + w.send_offset, stream);
    send = d_workspace + w.send_offset;
  }
  auto* recv =
      view.unpack_is_identity ? static_cast<std::byte*>(d_dst) : d_workspace + w.recv_offset;
  const auto ops = make_p2p_ops(view);
  // The self chunk first, outside the group: ordered on the stream before the NCCL kernel.
  for (const auto& op : ops) {
    if (op.what == p2p_op::kind::self_copy) {
      ORCH_CUDA_CHECK(cudaMemcpyAsync(recv + op.recv_offset, send + op.send_offset,
                                      static_cast<std::size_t>(op.bytes), cudaMemcpyDeviceToDevice,
                                      stream));
    }
  }
  const bool remote = std::any_of(
      ops.begin(), ops.end(), [](const p2p_op& op) { return op.what != p2p_op::kind::self_copy; });
  if (remote) {
    ORCH_NCCL_CHECK(ncclGroupStart());
    for (const auto& op : ops) {
      if (op.what == p2p_op::kind::send) {
        ORCH_NCCL_CHECK(ncclSend(send + op.send_offset, static_cast<std::size_t>(op.bytes),
                                 ncclUint8, op.peer, comm_, stream));
      } else if (op.what == p2p_op::kind::recv) {
        ORCH_NCCL_CHECK(ncclRecv(recv + op.recv_offset, static_cast<std::size_t>(op.bytes),
                                 ncclUint8, op.peer, comm_, stream));
      }
    }
    ORCH_NCCL_CHECK(ncclGroupEnd());
  }
  if (!view.unpack_is_identity) {
    unpack(plan, recv, d_dst, stream);
  }
}

void communicator::check_plan_hashes(std::span<const std::uint64_t> hashes, cudaStream_t stream) {
  if (hashes.size() > max_hashes) {
    throw_invalid_argument("orch::cuda::communicator::check_plan_hashes: ", hashes.size(),
                           " hashes, at most ", max_hashes);
  }
  if (comm_ == nullptr) {
    throw_invalid_argument("orch::cuda::communicator::check_plan_hashes: the communicator was "
                           "aborted");
  }
  const std::size_t n = hashes.size();
  const auto bytes = static_cast<bytes_t>(2 * max_hashes * sizeof(std::uint64_t));
  hash_device_.reserve(bytes);
  hash_host_.reserve(bytes);
  auto* host = static_cast<std::uint64_t*>(hash_host_.data());
  // max(h) and max(~h) = ~min(h) in one all-reduce: all equal iff max == ~max(~h).
  for (std::size_t i = 0; i < n; ++i) {
    host[i] = hashes[i];
    host[n + i] = ~hashes[i];
  }
  ORCH_CUDA_CHECK(cudaMemcpyAsync(hash_device_.data(), host, 2 * n * sizeof(std::uint64_t),
                                  cudaMemcpyHostToDevice, stream));
  ORCH_NCCL_CHECK(ncclAllReduce(hash_device_.data(), hash_device_.data(), 2 * n, ncclUint64,
                                ncclMax, comm_, stream));
  ORCH_CUDA_CHECK(cudaMemcpyAsync(host, hash_device_.data(), 2 * n * sizeof(std::uint64_t),
                                  cudaMemcpyDeviceToHost, stream));
  synchronize(stream);
  for (std::size_t i = 0; i < n; ++i) {
    const std::uint64_t max = host[i];
    const std::uint64_t min = ~host[n + i];
    if (max != min) {
      throw plan_mismatch_error(orch::detail::message(
          "orch::cuda::communicator: rank ", rank_, " holds plan hash ", hashes[i], " (hash ", i,
          ") but the ranks' hashes range over [", min, ", ", max,
          "]: the ranks built different plans; no payload was moved"));
    }
  }
}

void communicator::synchronize(cudaStream_t stream) {
  const auto deadline = std::chrono::steady_clock::now() + options_.timeout;
  for (;;) {
    const cudaError_t state = cudaStreamQuery(stream);
    if (state == cudaSuccess) {
      return;
    }
    if (state != cudaErrorNotReady) {
      detail::throw_cuda_error(static_cast<int>(state), "cudaStreamQuery(stream)", __FILE__,
                               __LINE__);
    }
    if (comm_ != nullptr) {
      ncclResult_t async = ncclSuccess;
      ORCH_NCCL_CHECK(ncclCommGetAsyncError(comm_, &async));
      if (async != ncclSuccess && async != ncclInProgress) {
        static_cast<void>(ncclCommAbort(comm_));
        static_cast<void>(owned_.release()); // aborted: must not be destroyed again
        comm_ = nullptr;
        throw nccl_error(static_cast<int>(async),
                         orch::detail::message("orch::cuda::communicator::synchronize: rank ",
                                               rank_, " got the asynchronous NCCL error ",
                                               detail::nccl_result_name(static_cast<int>(async)),
                                               " (", ncclGetErrorString(async),
                                               "); the communicator was aborted"));
      }
    }
    if (std::chrono::steady_clock::now() > deadline) {
      abort_and_throw_timeout("orch::cuda::communicator::synchronize");
    }
    std::this_thread::sleep_for(std::chrono::microseconds(50));
  }
}

void communicator::abort_and_throw_timeout(const char* where) {
  if (comm_ != nullptr) {
    static_cast<void>(ncclCommAbort(comm_));
  }
  // An aborted handle must not be destroyed again: forget it whether owned or borrowed.
  static_cast<void>(owned_.release());
  comm_ = nullptr;
  throw timeout_error(orch::detail::message(
      where, ": rank ", rank_, " waited more than ", options_.timeout.count(),
      " ms for its stream (a peer that never joined, or ranks running different exchanges); "
      "the communicator was aborted"));
}

} // namespace orch::cuda
