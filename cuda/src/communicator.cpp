// SPDX-License-Identifier: Apache-2.0
#include <orch/config.hpp>
#include <orch/cuda/communicator.hpp>
#include <orch/cuda/copy_program.hpp>
#include <orch/cuda/error.hpp>
#include <orch/cuda/kernels.hpp>
#include <orch/cuda/nccl_group.hpp>
#include <orch/cuda/poll_rules.hpp>
#include <orch/transport/hash_agreement.hpp>
#include <orch/transport/program.hpp>
#include <orch/transport/watchdog.hpp>

#include <cuda_runtime_api.h>

#include <algorithm>
#include <chrono>
#include <cstddef>
#include <cstdint>
#include <cstring>
#include <exception>
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

work_state work_of(cudaError_t e) noexcept {
  if (e == cudaSuccess) {
    return work_state::done;
  }
  return e == cudaErrorNotReady ? work_state::pending : work_state::failed;
}

transport::wait_options wait_options_of(const communicator_options& o) {
  transport::wait_options w;
  w.timeout = o.timeout;
  return w;
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
  // Owned from here on: if init() throws, owned_'s destructor destroys the handle (or the
  // abort already released it).
  init();
}

void communicator::init() {
  if (comm_ == nullptr) {
    throw_invalid_argument("orch::cuda::communicator: the ncclComm_t is null (create it with "
                           "nccl_comm::init_rank or ncclCommInitRank first)");
  }
  // The rank is not known before the communicator is ready: -1 in a timeout's message.
  watchdog_ = transport::watchdog(-1, wait_options_of(options_));
  // A borrowed non-blocking communicator may still be initialising: wait until it is ready.
  wait_ready("orch::cuda::communicator (waiting for the NCCL communicator to be ready)");
  int rank = 0;
  int count = 0;
  ORCH_COMM_CALL(ncclCommUserRank(comm_, &rank));
  ORCH_COMM_CALL(ncclCommCount(comm_, &count));
  ORCH_COMM_CALL(ncclCommCuDevice(comm_, &device_));
  rank_ = rank;
  size_ = count;
  watchdog_ = transport::watchdog(rank_, wait_options_of(options_));
}

communicator::~communicator() {
  release();
}

communicator::communicator(communicator&& other) noexcept
    : owned_(std::move(other.owned_)), comm_(std::exchange(other.comm_, nullptr)),
      rank_(other.rank_), size_(other.size_), device_(other.device_), options_(other.options_),
      watchdog_(other.watchdog_), idle_(std::exchange(other.idle_, nullptr)),
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
    watchdog_ = other.watchdog_;
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
  // The owned handle (if any) is destroyed by this assignment; a borrowed one is forgotten.
  owned_ = nccl_comm();
  comm_ = nullptr;
}

void communicator::abort_handle() noexcept {
  if (comm_ != nullptr) {
    static_cast<void>(ncclCommAbort(comm_));
  }
  // An aborted handle must not be destroyed again: forget it whether owned or borrowed.
  static_cast<void>(owned_.release());
  comm_ = nullptr;
}

void communicator::abort() noexcept {
  watchdog_.abort_now([this]() noexcept { abort_handle(); });
  abort_handle(); // also when the watchdog was aborted already (nothing left then)
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

// The one wait of the backend: the core's watchdog (deadline, abort, then throw) over polls of
// `poll_work` and ncclCommGetAsyncError, judged by judge_poll. A failed poll throws from inside
// the poll, so the watchdog aborts the communicator before the exception leaves.
template <class PollWork>
void communicator::wait(const char* where, PollWork&& poll_work) {
  const ncclComm_t comm = comm_;
  watchdog_.wait(
      where,
      [&] {
        const cudaError_t work = poll_work();
        ncclResult_t async = ncclSuccess;
        if (comm != nullptr) {
          const ncclResult_t r = ncclCommGetAsyncError(comm, &async);
          async = r != ncclSuccess ? r : async;
        }
        const comm_state c = async == ncclSuccess      ? comm_state::ready
                             : async == ncclInProgress ? comm_state::in_progress
                                                       : comm_state::failed;
        switch (judge_poll(work_of(work), c)) {
        case poll_verdict::done:
          return transport::poll_status::done;
        case poll_verdict::pending:
          return transport::poll_status::pending;
        case poll_verdict::device_error:
          throw cuda_error(static_cast<int>(work),
                           orch::detail::message(where, ": rank ", rank_, " got the CUDA error ",
                                                 cudaGetErrorName(work), " (",
                                                 cudaGetErrorString(work),
                                                 "); the communicator was aborted"));
        case poll_verdict::comm_error:
          break;
        }
        throw nccl_error(
            static_cast<int>(async),
            orch::detail::message(where, ": rank ", rank_, " got the asynchronous NCCL error ",
                                  detail::nccl_result_name(static_cast<int>(async)), " (",
                                  ncclGetErrorString(async), "); the communicator was aborted"));
      },
      [this]() noexcept { abort_handle(); });
}

void communicator::wait_event(cudaEvent_t event, const char* where) {
  wait(where, [event] { return cudaEventQuery(event); });
}

void communicator::wait_ready(const char* where) {
  wait(where, [] { return cudaSuccess; });
}

void communicator::synchronize(cudaStream_t stream) {
  wait("orch::cuda::communicator::synchronize", [stream] { return cudaStreamQuery(stream); });
}

event_wait communicator::upload_wait() {
  return [this](cudaEvent_t event, const char* what) { wait_event(event, what); };
}

void communicator::begin(const char* where, cudaStream_t stream) {
  watchdog_.check_usable(where); // aborted: aborted_error, never a wait
  if (comm_ == nullptr) {
    throw_invalid_argument(where, ": rank ", rank_,
                           ": the communicator was moved from; use the one it was moved into");
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
  watchdog_.check_usable(where);
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
  return transport::make_flat_program(plan, rank).workspace.end;
}

bytes_t communicator::staging_bytes(const node_schedule& schedule, rank_t rank) {
  return transport::make_nodewise_program(schedule, rank).workspace.end;
}

void communicator::exchange(const exchange_plan& plan, const void* d_src, void* d_dst,
                            cudaStream_t stream) {
  const char* where = "orch::cuda::communicator::exchange";
  if (plan.ranks() != size_) {
    throw_invalid_argument(where, ": rank ", rank_, " holds a plan on ", plan.ranks(),
                           " ranks but the communicator has ", size_);
  }
  begin(where, stream);
  auto program = transport::make_flat_program(plan, rank_);
  if (options_.check_plan_hash) {
    const std::uint64_t hash = program.plan_hash;
    check_plan_hashes(std::span<const std::uint64_t>(&hash, 1), stream);
  }
  const bytes_t need = program.workspace.end;
  first_.upload(std::move(program), stream, options_.tile_bytes, upload_wait());
  grow_workspace(need, stream);
  run_flat(first_, d_src, d_dst, static_cast<std::byte*>(workspace_.data()), stream);
  end(stream);
}

void communicator::exchange(const node_schedule& schedule, const void* d_src, void* d_dst,
                            cudaStream_t stream) {
  const char* where = "orch::cuda::communicator::exchange";
  if (schedule.inter_node.ranks() != size_) {
    throw_invalid_argument(where, ": rank ", rank_, " holds a schedule on ",
                           schedule.inter_node.ranks(), " ranks but the communicator has ", size_);
  }
  begin(where, stream);
  auto program = transport::make_nodewise_program(schedule, rank_);
  if (options_.check_plan_hash) {
    const auto hashes = program.plan_hashes();
    check_plan_hashes(hashes, stream);
  }
  const transport::nodewise_workspace layout = program.workspace;
  first_.upload(std::move(program.inter_node), stream, options_.tile_bytes, upload_wait());
  second_.upload(std::move(program.intra_node), stream, options_.tile_bytes, upload_wait());
  grow_workspace(layout.end, stream);
  // Stage 1 lands in the staging buffer, stage 2 reads it; the stages' own buffers are at
  // their programs' workspace offsets, past the staging buffer.
  auto* base = static_cast<std::byte*>(workspace_.data());
  run_flat(first_, d_src, base + layout.staging_offset, base, stream);
  run_flat(second_, base + layout.staging_offset, d_dst, base, stream);
  end(stream);
}

void communicator::exchange(const device_plan& uploaded, const void* d_src, void* d_dst,
                            cudaStream_t stream, void* d_workspace) {
  const char* where = "orch::cuda::communicator::exchange";
  const auto& program = uploaded.program();
  if (program.rank != rank_ || program.ranks != size_) {
    throw_invalid_argument(where, ": rank ", rank_, " of ", size_,
                           " was given a device_plan uploaded for rank ", program.rank, " of ",
                           program.ranks);
  }
  begin(where, stream);
  if (d_workspace == nullptr) {
    grow_workspace(program.workspace.end, stream);
    d_workspace = workspace_.data();
  }
  run_flat(uploaded, d_src, d_dst, static_cast<std::byte*>(d_workspace), stream);
  end(stream);
}

void communicator::run_flat(const device_plan& plan, const void* d_src, void* d_dst,
                            std::byte* d_workspace, cudaStream_t stream) {
  const transport::flat_program& program = plan.program();
  const transport::transfer_list& t = program.transfers;
  const auto* send = static_cast<const std::byte*>(d_src);
  if (!program.pack.identity) {
    pack(plan, d_src, d_workspace + program.workspace.send_offset, stream, options_.engine);
    send = d_workspace + program.workspace.send_offset;
  }
  auto* recv = program.unpack.identity ? static_cast<std::byte*>(d_dst)
                                       : d_workspace + program.workspace.recv_offset;
  const bool self_in_group = options_.self_through_nccl && t.self.bytes > 0;
  if (t.self.bytes > 0 && !self_in_group) {
    // The self chunk outside the group: ordered on the stream before the NCCL kernel.
    ORCH_CUDA_CHECK(cudaMemcpyAsync(recv + t.self.recv_offset, send + t.self.send_offset,
                                    static_cast<std::size_t>(t.self.bytes),
                                    cudaMemcpyDeviceToDevice, stream));
  }
  if (self_in_group || !t.sends.empty() || !t.recvs.empty()) {
    // The transfer lists were built before the group opens: only NCCL calls can throw inside.
    nccl_group group; // closes the group if a call below throws
    for (const auto& c : t.sends) {
      ORCH_COMM_CALL(ncclSend(send + c.offset, static_cast<std::size_t>(c.bytes), ncclUint8, c.peer,
                              comm_, stream));
    }
    for (const auto& c : t.recvs) {
      ORCH_COMM_CALL(ncclRecv(recv + c.offset, static_cast<std::size_t>(c.bytes), ncclUint8, c.peer,
                              comm_, stream));
    }
    if (self_in_group) {
      const auto n = static_cast<std::size_t>(t.self.bytes);
      ORCH_COMM_CALL(ncclSend(send + t.self.send_offset, n, ncclUint8, rank_, comm_, stream));
      ORCH_COMM_CALL(ncclRecv(recv + t.self.recv_offset, n, ncclUint8, rank_, comm_, stream));
    }
    ORCH_COMM_CALL(group.end());
  }
  if (!program.unpack.identity) {
    unpack(plan, recv, d_dst, stream, options_.engine);
  }
}

void communicator::check_plan_hashes(std::span<const std::uint64_t> hashes, cudaStream_t stream) {
  const char* where = "orch::cuda::communicator::check_plan_hashes";
  auto words = transport::make_agreement_words(hashes); // validates the count
  begin(where, stream);
  const auto n = words.span().size();
  const auto bytes = static_cast<bytes_t>(sizeof(words.words));
  // Fixed size: allocated once, so growth never waits.
  hash_device_.reserve(bytes, [] {});
  hash_host_.reserve(bytes, [] {});
  auto* host = static_cast<std::uint64_t*>(hash_host_.data());
  std::memcpy(host, words.span().data(), n * sizeof(std::uint64_t));
  ORCH_CUDA_CHECK(cudaMemcpyAsync(hash_device_.data(), host, n * sizeof(std::uint64_t),
                                  cudaMemcpyHostToDevice, stream));
  ORCH_COMM_CALL(ncclAllReduce(hash_device_.data(), hash_device_.data(), n, ncclUint64, ncclMax,
                               comm_, stream));
  ORCH_CUDA_CHECK(cudaMemcpyAsync(host, hash_device_.data(), n * sizeof(std::uint64_t),
                                  cudaMemcpyDeviceToHost, stream));
  end(stream);
  synchronize(stream);
  transport::check_agreement(hashes, std::span<const std::uint64_t>(host, n), rank_,
                             "orch::cuda::communicator");
}

#undef ORCH_COMM_CALL

} // namespace orch::cuda
