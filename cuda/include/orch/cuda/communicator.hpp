// SPDX-License-Identifier: Apache-2.0
/// Exchanges over NCCL: an owning ncclComm_t handle and a communicator that runs flat and
/// node-wise exchanges of orch plans on one rank's GPU buffers.
#pragma once

#include <orch/cuda/copy_program.hpp>
#include <orch/cuda/device_buffer.hpp>
#include <orch/cuda/device_plan.hpp>
#include <orch/cuda/error.hpp>
#include <orch/cuda/nccl_version.hpp>
#include <orch/exchange/plan.hpp>
#include <orch/exchange/schedule.hpp>
#include <orch/transport/watchdog.hpp>
#include <orch/types.hpp>

#include <cuda_runtime_api.h>

#include <chrono>
#include <cstddef>
#include <cstdint>
#include <span>

namespace orch::cuda {

/// Owns an ncclComm_t: created by one of the factories, destroyed (ncclCommDestroy) by the
/// destructor, which never throws. Move-only.
class nccl_comm {
public:
  nccl_comm() noexcept = default;
  ~nccl_comm();
  nccl_comm(nccl_comm&& other) noexcept;
  nccl_comm& operator=(nccl_comm&& other) noexcept;
  nccl_comm(const nccl_comm&) = delete;
  nccl_comm& operator=(const nccl_comm&) = delete;

  /// Rank `rank` of `ranks` joining the clique `id` (ncclCommInitRank; collective: every rank
  /// must call it, on its own device, which must be current).
  /// Throws: nccl_error, orch::invalid_argument (rank outside [0, ranks)).
  [[nodiscard]] static nccl_comm init_rank(rank_t ranks, const ncclUniqueId& id, rank_t rank);
  /// A communicator of one rank on `device` (ncclCommInitAll): tests and single-GPU runs.
  /// Throws: nccl_error.
  [[nodiscard]] static nccl_comm single(int device);
  /// Takes ownership of `comm` (it will be destroyed with this object).
  [[nodiscard]] static nccl_comm adopt(ncclComm_t comm) noexcept;

  /// The handle (nullptr when empty or aborted). Complexity: O(1).
  [[nodiscard]] ncclComm_t get() const noexcept { return comm_; }
  /// Aborts the communicator (ncclCommAbort) and forgets it; errors are ignored.
  void abort() noexcept;
  /// Gives up ownership without destroying (after an abort done elsewhere).
  ncclComm_t release() noexcept {
    ncclComm_t c = comm_;
    comm_ = nullptr;
    return c;
  }

private:
  ncclComm_t comm_ = nullptr;
};

/// Options of a communicator. Every rank must use the same check_plan_hash (it decides whether
/// a collective runs); the default is the same in every build type (true), so a Debug rank and
/// a Release rank agree.
struct communicator_options {
  bool check_plan_hash = true; ///< all-reduce the plan hash before moving payload (see docs)
  /// How long any wait of the communicator (synchronize(), the plan-hash check, an upload's
  /// wait for its previous copy, workspace growth, a non-blocking NCCL call) lasts before the
  /// communicator is aborted and timeout_error thrown.
  std::chrono::milliseconds timeout{std::chrono::minutes(5)};
  /// Bytes per warp tile of the tile engine (a positive multiple of 16).
  bytes_t tile_bytes = default_tile_bytes;
  /// How pack and unpack run (see docs/cuda.md, "Kernels").
  copy_engine engine = copy_engine::cub_batched;
  /// Test only: send the self chunk through ncclSend / ncclRecv to the rank itself inside the
  /// group instead of cudaMemcpyAsync, so that a single-rank communicator exercises the group.
  bool self_through_nccl = false;
};

/// The NCCL backend of the exchange core (orch/transport/): runs flat and node-wise exchanges
/// on one rank over an NCCL communicator that it either owns (constructed from an nccl_comm) or
/// borrows (constructed from a raw ncclComm_t, e.g. a training framework's; the owner keeps it
/// alive and destroys it). What to move comes from the core's programs
/// (transport::make_flat_program / make_nodewise_program: copy lists, transfer lists, workspace
/// layout), the plan-hash check is the core's agreement protocol over one ncclAllReduce, and
/// every host wait is the core's watchdog. Holds the rank's workspace and two device plans (the
/// stages of a node-wise exchange). Move-only; not thread-safe; one stream at a time.
///
/// Every exchange is asynchronous on `stream` except where noted: it uploads the rank's
/// program, packs, runs one NCCL group of sends and receives (self chunk by cudaMemcpyAsync),
/// unpacks. d_src holds plan.source_bytes(rank) bytes, d_dst plan.destination_bytes(rank)
/// bytes; they must not overlap and must stay alive until the stream has passed the exchange.
///
/// Every host wait is bounded by options.timeout and polls the communicator's asynchronous
/// state (poll_rules.hpp); a CUDA error, an NCCL error or the timeout aborts the communicator
/// before the exception leaves, and every later call throws aborted_error. The current device
/// must be the communicator's. Borrowed non-blocking communicators work: ncclInProgress is
/// polled, never taken as failure.
class communicator {
public:
  /// Borrows `comm` (waiting, bounded, for a non-blocking one to finish initialising).
  /// Throws: nccl_error (the communicator cannot report its rank / size / device),
  /// orch::invalid_argument (null comm), timeout_error.
  explicit communicator(ncclComm_t comm, communicator_options options = {});
  /// Owns `comm`, also when the constructor throws (the handle is then destroyed, or aborted
  /// if it reported an asynchronous error). Throws: as above.
  explicit communicator(nccl_comm&& comm, communicator_options options = {});
  ~communicator();
  /// Takes over `other`'s handle, buffers and plans; `other` is left without a handle (get()
  /// is nullptr, exchanges throw), so it can never abort or destroy the communicator.
  communicator(communicator&& other) noexcept;
  /// As the move constructor; first releases this object's own communicator and buffers.
  communicator& operator=(communicator&& other) noexcept;
  communicator(const communicator&) = delete;
  communicator& operator=(const communicator&) = delete;

  /// This rank. Complexity: O(1).
  [[nodiscard]] rank_t rank() const noexcept { return rank_; }
  /// Number of ranks. Complexity: O(1).
  [[nodiscard]] rank_t size() const noexcept { return size_; }
  /// The NCCL handle (nullptr after an abort or a move). Complexity: O(1).
  [[nodiscard]] ncclComm_t get() const noexcept { return comm_; }
  /// The CUDA device of the communicator (ncclCommCuDevice). Complexity: O(1).
  [[nodiscard]] int device() const noexcept { return device_; }
  /// Whether the communicator was aborted (a timeout, an error, abort()). Complexity: O(1).
  [[nodiscard]] bool aborted() const noexcept { return watchdog_.aborted(); }

  /// Workspace bytes a flat exchange of `plan` needs on `rank` (send and receive buffers where
  /// packing / unpacking is not the identity: transport::make_flat_program's workspace).
  /// Complexity: O(items of the rank log). Throws: orch::invalid_argument (rank out of
  /// range), orch::overflow.
  [[nodiscard]] static bytes_t workspace_bytes(const exchange_plan& plan, rank_t rank);
  /// Workspace bytes a node-wise exchange of `schedule` needs on `rank`: the staging buffer
  /// plus the stages' buffers (transport::make_nodewise_program's workspace).
  /// Complexity: O(items of the rank log). Throws: as above.
  [[nodiscard]] static bytes_t staging_bytes(const node_schedule& schedule, rank_t rank);
  /// Allocates at least `bytes` of workspace now. Growing waits (bounded) for the last
  /// exchange's work; call it once up front with the largest size you expect.
  /// Throws: cuda_error, timeout_error, nccl_error, aborted_error, orch::invalid_argument
  /// (wrong current device).
  void reserve(bytes_t bytes);

  /// Flat exchange of `plan` (plan.ranks() == size()). With options.check_plan_hash, first
  /// checks that every rank holds the same plan (a synchronisation point).
  /// Throws: orch::invalid_argument (plan of another size, wrong current device, moved-from
  /// communicator), aborted_error, plan_mismatch_error, timeout_error, nccl_error, cuda_error.
  void exchange(const exchange_plan& plan, const void* d_src, void* d_dst, cudaStream_t stream);
  /// Node-wise exchange: stage 1 (inter-node, rail-aligned) into the staging buffer in the
  /// workspace, then stage 2 (intra-node) into d_dst. Byte-identical to the flat exchange.
  /// Throws: as the flat exchange.
  void exchange(const node_schedule& schedule, const void* d_src, void* d_dst, cudaStream_t stream);
  /// Flat exchange of a program uploaded by the caller (on the same stream), using
  /// `d_workspace` (at least uploaded.program().workspace.end bytes, or nullptr to use the
  /// communicator's own). No plan-hash check. Throws: as the flat exchange,
  /// orch::invalid_argument (a program of another rank or size).
  void exchange(const device_plan& uploaded, const void* d_src, void* d_dst, cudaStream_t stream,
                void* d_workspace = nullptr);

  /// Collective: all-reduces the hashes (the core's agreement protocol: one ncclAllReduce of
  /// 2·n words, max of h and ~h) and throws plan_mismatch_error on every rank unless all ranks
  /// passed the same values. Synchronises `stream` (bounded). Throws: plan_mismatch_error,
  /// timeout_error, aborted_error, nccl_error, cuda_error, orch::invalid_argument (no hash,
  /// or more than transport::max_agreed_hashes).
  void check_plan_hashes(std::span<const std::uint64_t> hashes, cudaStream_t stream);
  /// Waits for `stream`, polling the communicator's asynchronous error state; on a CUDA
  /// error, an NCCL error or after options.timeout, aborts the communicator, then throws.
  /// Throws: nccl_error, timeout_error, cuda_error, aborted_error.
  void synchronize(cudaStream_t stream);
  /// Aborts the communicator now (ncclCommAbort; a borrowed one too) and forgets the handle.
  /// Complexity: O(1) on this rank. Throws: nothing.
  void abort() noexcept;

private:
  void init();
  void run_flat(const device_plan& plan, const void* d_src, void* d_dst, std::byte* d_workspace,
                cudaStream_t stream);
  void begin(const char* where, cudaStream_t stream);
  void end(cudaStream_t stream);
  void grow_workspace(bytes_t bytes, cudaStream_t stream);
  template <class PollWork>
  void wait(const char* where, PollWork&& poll_work);
  void wait_event(cudaEvent_t event, const char* where);
  void wait_ready(const char* where);
  void take(int result, const char* call, const char* file, int line);
  [[nodiscard]] event_wait upload_wait();
  void abort_handle() noexcept;
  void release() noexcept;

  nccl_comm owned_;
  ncclComm_t comm_ = nullptr;
  rank_t rank_ = 0;
  rank_t size_ = 1;
  int device_ = 0;
  communicator_options options_;
  transport::watchdog watchdog_{0};    // rank and timeout set by init()
  cudaEvent_t idle_ = nullptr;         // recorded after the last work this communicator enqueued
  cudaStream_t last_stream_ = nullptr; // the stream idle_ was recorded on
  bool idle_recorded_ = false;
  device_buffer workspace_;
  device_buffer hash_device_; // the agreement words' all-reduce
  pinned_buffer hash_host_;
  device_plan first_;  // the flat program or stage 1
  device_plan second_; // stage 2
};

} // namespace orch::cuda
