// SPDX-License-Identifier: Apache-2.0
#include <orch/config.hpp>
#include <orch/cuda/bounded_wait.hpp>
#include <orch/cuda/communicator.hpp>
#include <orch/cuda/copy_program.hpp>
#include <orch/cuda/error.hpp>
#include <orch/cuda/kernels.hpp>
#include <orch/cuda/nccl_group.hpp>
#include <orch/cuda/transfers.hpp>
#include <orch/detail/checked.hpp>

#include <cuda_runtime_api.h>

#include <algorithm>
#include <chrono>
#include <cstddef>
#include <cstdint>
#include <cstring>
#include <exception>
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

work_state work_of(cudaError_t e) noexcept {
  if (e == cudaSuccess) {
    return work_state::done;
  }
  return e == cudaErrorNotReady ? work_state::pending : work_state::failed;
}

} // namespace

// An NCCL call on the communicator: ncclInProgress (a non-blocking communicator) is polled
// with the deadline, any other failure throws nccl_error.
#define ORCH_COMM_CALL(call) take(static_cast<int>(call), #call, __FILE__, __LINE__)

communicator::communicator(ncclComm_t comm, communicator_options options)
    : comm_(comm), options_(options) {
  init();
}

communicator::communicator(nccl_comm&& comm, communicator_options options)
    : owned_(std::move(comm)), comm_(owned_.get()), options_(options) {
  // Owned from here on: if init() throws, owned_'s destructor destroys the handle (or abort()
  // already released it).
  init();
}

void communicator::init() {
  if (comm_ == nullptr) {
    throw_invalid_argument("orch::cuda::communicator: null ncclComm_t");
  }
  // A borrowed non-blocking communicator may still be initialising: wait until it is ready.
  wait_ready("orch::cuda::communicator (waiting for the communicator to be ready)");
  int rank = 0;
  int count = 0;
  ORCH_COMM_CALL(ncclCommUserRank(comm_, &rank));
  ORCH_COMM_CALL(ncclCommCount(comm_, &count));
  ORCH_COMM_CALL(ncclCommCuDevice(comm_, &device_));
  rank_ = rank;
  size_ = count;
}

communicator::~communicator() {
  release();
}

communicator::communicator(communicator&& other) noexcept
    : owned_(std::move(other.owned_)), comm_(std::exchange(other.comm_, nullptr)),
      rank_(other.rank_), size_(other.size_), device_(other.device_), options_(other.options_),
      idle_(std::exchange(other.idle_, nullptr)),
      last_stream_(std::exchange(other.last_stream_, nullptr)),
      idle_recorded_(std::exchange(other.idle_recorded_, false)),
      workspace_(std::move(other.workspace_)), hash_device_(std::move(other.hash_device_)),
      hash_host_(std::move(other.hash_host_)), first_(std::move(other.first_)),
      second_(std::move(other.second_)) {}

communicator& communicator::operator=(communicator&& other) noexcept {
  if (this != &other) {
    release();
    owned_ = std::move(other.owned_);
    comm_ = std::exchange(other.comm_, nullptr);
    rank_ = other.rank_;
    size_ = other.size_;
    device_ = other.device_;
    options_ = other.options_;
    idle_ = std::exchange(other.idle_, nullptr);
    last_stream_ = std::exchange(other.last_stream_, nullptr);
    idle_recorded_ = std::exchange(other.idle_recorded_, false);
    workspace_ = std::move(other.workspace_);
    hash_device_ = std::move(other.hash_device_);
    hash_host_ = std::move(other.hash_host_);
    first_ = std::move(other.first_);
    second_ = std::move(other.second_);
  }
  return *this;
}

void communicator::release() noexcept {
  if (idle_ != nullptr) {
    static_cast<void>(cudaEventDestroy(idle_));
    idle_ = nullptr;
  }
  idle_recorded_ = false;
  last_stream_ = nullptr;
  // The owned handle (if any) is destroyed by owned_'s destructor or move-assignment; the
  // borrowed one is only forgotten.
  owned_ = nccl_comm();
  comm_ = nullptr;
}

void communicator::abort() noexcept {
  if (comm_ != nullptr) {
    static_cast<void>(ncclCommAbort(comm_));
  }
  // An aborted handle must not be destroyed again: forget it whether owned or borrowed.
  static_cast<void>(owned_.release());
  comm_ = nullptr;
}

void communicator::take(int result, const char* call, const char* file, int line) {
  switch (take_nccl_result(result, ncclSuccess, ncclInProgress)) {
  case nccl_call_outcome::ok:
    return;
  case nccl_call_outcome::poll:
    wait_ready(call);
    return;
  case nccl_call_outcome::throw_error:
    detail::throw_nccl_error(result, call, file, line);
  }
}

// The one wait of the communicator: polls `poll_work` and ncclCommGetAsyncError until both
// are done, and on any failure or the deadline aborts first, then throws.
template <class PollWork>
static void wait_or_abort(communicator& self, ncclComm_t comm, rank_t rank,
                          std::chrono::milliseconds timeout, const char* where,
                          PollWork&& poll_work) {
  cudaError_t work_error = cudaSuccess;
  ncclResult_t comm_error = ncclSuccess;
  const auto step = bounded_wait(
      [&] {
        const cudaError_t e = poll_work();
        work_error = e;
        return work_of(e);
      },
      [&] {
        if (comm == nullptr) {
          return comm_state::ready;
        }
        ncclResult_t async = ncclSuccess;
        const ncclResult_t r = ncclCommGetAsyncError(comm, &async);
        comm_error = r != ncclSuccess ? r : async;
        if (comm_error == ncclSuccess) {
          return comm_state::ready;
        }
        return comm_error == ncclInProgress ? comm_state::in_progress : comm_state::failed;
      },
      wait_clock::now() + timeout, [] { return wait_clock::now(); },
      [] { std::this_thread::sleep_for(std::chrono::microseconds(50)); });
  switch (step) {
  case wait_step::finish:
  case wait_step::keep_polling: // never returned by bounded_wait
    return;
  case wait_step::abort_device_error:
    self.abort();
    throw cuda_error(static_cast<int>(work_error),
                     orch::detail::message(where, ": rank ", rank, " got the CUDA error ",
                                           cudaGetErrorName(work_error), " (",
                                           cudaGetErrorString(work_error),
                                           "); the communicator was aborted"));
  case wait_step::abort_comm_error:
    self.abort();
    throw nccl_error(
        static_cast<int>(comm_error),
        orch::detail::message(where, ": rank ", rank, " got the asynchronous NCCL error ",
                              detail::nccl_result_name(static_cast<int>(comm_error)), " (",
                              ncclGetErrorString(comm_error), "); the communicator was aborted"));
  case wait_step::abort_timeout:
    self.abort();
    throw timeout_error(orch::detail::message(
        where, ": rank ", rank, " waited more than ", timeout.count(),
        " ms (a peer that never joined, or ranks running different exchanges); the "
        "communicator was aborted"));
  }
}

void communicator::wait_event(cudaEvent_t event, const char* where) {
  wait_or_abort(*this, comm_, rank_, options_.timeout, where,
                [event] { return cudaEventQuery(event); });
}

void communicator::wait_ready(const char* where) {
  wait_or_abort(*this, comm_, rank_, options_.timeout, where, [] { return cudaSuccess; });
}

void communicator::synchronize(cudaStream_t stream) {
  wait_or_abort(*this, comm_, rank_, options_.timeout, "orch::cuda::communicator::synchronize",
                [stream] { return cudaStreamQuery(stream); });
}

event_wait communicator::upload_wait() {
  return [this](cudaEvent_t event, const char* what) { wait_event(event, what); };
}

void communicator::begin(const char* where, cudaStream_t stream) {
  if (comm_ == nullptr) {
    throw_invalid_argument(where, ": the communicator was aborted or moved from");
  }
  int current = 0;
  ORCH_CUDA_CHECK(cudaGetDevice(&current));
  check_current_device(device_, current, rank_, where);
  if (idle_ == nullptr) {
    ORCH_CUDA_CHECK(cudaEventCreateWithFlags(&idle_, cudaEventDisableTiming));
  }
  // Work of an earlier call on another stream may still use the workspace and plans: order
  // this stream after it (on the GPU; the host does not wait).
  if (idle_recorded_ && stream != last_stream_) {
    ORCH_CUDA_CHECK(cudaStreamWaitEvent(stream, idle_, 0));
  }
}

void communicator::end(cudaStream_t stream) {
  ORCH_CUDA_CHECK(cudaEventRecord(idle_, stream));
  idle_recorded_ = true;
  last_stream_ = stream;
}

void communicator::grow_workspace(bytes_t bytes, cudaStream_t stream) {
  workspace_.reserve(bytes, [&] {
    // Everything queued on `stream` so far, which begin() ordered after earlier streams.
    ORCH_CUDA_CHECK(cudaEventRecord(idle_, stream));
    wait_event(idle_, "orch::cuda::communicator (growing the workspace)");
  });
}

void communicator::reserve(bytes_t bytes) {
  const char* where = "orch::cuda::communicator::reserve";
  if (comm_ != nullptr) {
    int current = 0;
    ORCH_CUDA_CHECK(cudaGetDevice(&current));
    check_current_device(device_, current, rank_, where);
  }
  workspace_.reserve(bytes, [&] {
    if (idle_recorded_) {
      wait_event(idle_, "orch::cuda::communicator::reserve (the last exchange's work)");
    }
  });
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
  const char* where = "orch::cuda::communicator::exchange";
  if (plan.ranks() != size_) {
    throw_invalid_argument(where, ": plan on ", plan.ranks(), " ranks but the communicator has ",
                           size_);
  }
  begin(where, stream);
  const std::uint64_t hash = plan.hash();
  if (options_.check_plan_hash) {
    check_plan_hashes(std::span<const std::uint64_t>(&hash, 1), stream);
  }
  first_.upload(plan.view(rank_), hash, stream, options_.tile_bytes, upload_wait());
  grow_workspace(make_flat_workspace(first_.view()).total, stream);
  run_flat(first_, d_src, d_dst, static_cast<std::byte*>(workspace_.data()), stream);
  end(stream);
}

void communicator::exchange(const node_schedule& schedule, const void* d_src, void* d_dst,
                            cudaStream_t stream) {
  const char* where = "orch::cuda::communicator::exchange";
  if (schedule.inter_node.ranks() != size_) {
    throw_invalid_argument(where, ": schedule on ", schedule.inter_node.ranks(),
                           " ranks but the communicator has ", size_);
  }
  begin(where, stream);
  const std::uint64_t hashes[2] = {schedule.inter_node.hash(), schedule.intra_node.hash()};
  if (options_.check_plan_hash) {
    check_plan_hashes(hashes, stream);
  }
  first_.upload(schedule.inter_node.view(rank_), hashes[0], stream, options_.tile_bytes,
                upload_wait());
  second_.upload(schedule.intra_node.view(rank_), hashes[1], stream, options_.tile_bytes,
                 upload_wait());
  const bytes_t staging = align_workspace(first_.view().destination_bytes);
  grow_workspace(staging_bytes(schedule, rank_), stream);
  auto* base = static_cast<std::byte*>(workspace_.data());
  run_flat(first_, d_src, base, base + staging, stream);
  run_flat(second_, base, d_dst, base + staging, stream);
  end(stream);
}

void communicator::exchange(const device_plan& uploaded, const void* d_src, void* d_dst,
                            cudaStream_t stream, void* d_workspace) {
  const char* where = "orch::cuda::communicator::exchange";
  if (uploaded.view().rank != rank_) {
    throw_invalid_argument(where, ": view of rank ", uploaded.view().rank, " on rank ", rank_);
  }
  begin(where, stream);
  if (d_workspace == nullptr) {
    grow_workspace(make_flat_workspace(uploaded.view()).total, stream);
    d_workspace = workspace_.data();
  }
  run_flat(uploaded, d_src, d_dst, static_cast<std::byte*>(d_workspace), stream);
  end(stream);
}

void communicator::run_flat(const device_plan& plan, const void* d_src, void* d_dst,
                            std::byte* d_workspace, cudaStream_t stream) {
  const rank_view& view = plan.view();
  const flat_workspace w = make_flat_workspace(view);
  // All fallible host work before the group opens (see nccl_group).
  const auto ops = make_p2p_ops(view);
  const auto* send = static_cast<const std::byte*>(d_src);
  if (!view.pack_is_identity) {
    pack(plan, d_src, d_workspace + w.send_offset, stream, options_.engine);
    send = d_workspace + w.send_offset;
  }
  auto* recv =
      view.unpack_is_identity ? static_cast<std::byte*>(d_dst) : d_workspace + w.recv_offset;
  const bool self_in_group = options_.self_through_nccl;
  bool grouped = false;
  for (const auto& op : ops) {
    if (op.what == p2p_op::kind::self_copy && !self_in_group) {
      // The self chunk outside the group: ordered on the stream before the NCCL kernel.
      ORCH_CUDA_CHECK(cudaMemcpyAsync(recv + op.recv_offset, send + op.send_offset,
                                      static_cast<std::size_t>(op.bytes), cudaMemcpyDeviceToDevice,
                                      stream));
    } else {
      grouped = true;
    }
  }
  if (grouped) {
    nccl_group group; // closes the group if a call below throws
    for (const auto& op : ops) {
      const auto n = static_cast<std::size_t>(op.bytes);
      if (op.what == p2p_op::kind::send) {
        ORCH_COMM_CALL(ncclSend(send + op.send_offset, n, ncclUint8, op.peer, comm_, stream));
      } else if (op.what == p2p_op::kind::recv) {
        ORCH_COMM_CALL(ncclRecv(recv + op.recv_offset, n, ncclUint8, op.peer, comm_, stream));
      } else if (self_in_group) {
        ORCH_COMM_CALL(ncclSend(send + op.send_offset, n, ncclUint8, rank_, comm_, stream));
        ORCH_COMM_CALL(ncclRecv(recv + op.recv_offset, n, ncclUint8, rank_, comm_, stream));
      }
    }
    ORCH_COMM_CALL(group.end());
  }
  if (!view.unpack_is_identity) {
    unpack(plan, recv, d_dst, stream, options_.engine);
  }
}

void communicator::check_plan_hashes(std::span<const std::uint64_t> hashes, cudaStream_t stream) {
  const char* where = "orch::cuda::communicator::check_plan_hashes";
  if (hashes.size() > max_hashes) {
    throw_invalid_argument(where, ": ", hashes.size(), " hashes, at most ", max_hashes);
  }
  begin(where, stream);
  const std::size_t n = hashes.size();
  const auto bytes = static_cast<bytes_t>(2 * max_hashes * sizeof(std::uint64_t));
  // Fixed size: allocated once, so growth never waits.
  hash_device_.reserve(bytes, [] {});
  hash_host_.reserve(bytes, [] {});
  auto* host = static_cast<std::uint64_t*>(hash_host_.data());
  // max(h) and max(~h) = ~min(h) in one all-reduce: all equal iff max == ~max(~h).
  for (std::size_t i = 0; i < n; ++i) {
    host[i] = hashes[i];
    host[n + i] = ~hashes[i];
  }
  ORCH_CUDA_CHECK(cudaMemcpyAsync(hash_device_.data(), host, 2 * n * sizeof(std::uint64_t),
                                  cudaMemcpyHostToDevice, stream));
  ORCH_COMM_CALL(ncclAllReduce(hash_device_.data(), hash_device_.data(), 2 * n, ncclUint64, ncclMax,
                               comm_, stream));
  ORCH_CUDA_CHECK(cudaMemcpyAsync(host, hash_device_.data(), 2 * n * sizeof(std::uint64_t),
                                  cudaMemcpyDeviceToHost, stream));
  end(stream);
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

#undef ORCH_COMM_CALL

} // namespace orch::cuda
