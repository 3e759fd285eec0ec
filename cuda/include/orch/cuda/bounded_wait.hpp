// SPDX-License-Identifier: Apache-2.0
/// The host-side rules of a communicator's waits: every wait polls the GPU work and the
/// communicator's asynchronous state against one deadline and ends in exactly one of "done"
/// or "abort the communicator, then throw" — plus how an NCCL return code is taken and whether
/// the current device fits the communicator. Plain C++ (no CUDA, no NCCL types): the decisions
/// are unit-tested on the CPU with fake polls and a fake clock.
#pragma once

#include <orch/config.hpp>

#include <chrono>

namespace orch::cuda {

/// What one poll of the awaited GPU work (cudaStreamQuery / cudaEventQuery) saw.
enum class work_state {
  done,    ///< cudaSuccess
  pending, ///< cudaErrorNotReady
  failed   ///< any other CUDA error (a faulted kernel, a lost device)
};

/// What one poll of the communicator (ncclCommGetAsyncError) saw.
enum class comm_state {
  ready,       ///< ncclSuccess
  in_progress, ///< ncclInProgress: a non-blocking communicator is still enqueueing or initialising
  failed       ///< any other result (a remote error, a peer that went away)
};

/// What a wait does after one poll.
enum class wait_step {
  finish,             ///< the work is done and the communicator is ready: return
  keep_polling,       ///< not yet, and the deadline has not passed
  abort_device_error, ///< abort the communicator, then throw the CUDA error
  abort_comm_error,   ///< abort the communicator, then throw the NCCL error
  abort_timeout       ///< abort the communicator, then throw timeout_error
};

/// The decision after one poll. Failures win over completion (a communicator with an
/// asynchronous error is broken even if this stream finished) and over the deadline; a CUDA
/// error aborts the communicator too, so that peers blocked on this rank's sends are released
/// now instead of waiting out their own timeouts, and so that destroying the communicator
/// later cannot block on a kernel that never ends. ncclInProgress counts as pending: a
/// non-blocking communicator may not have enqueued the work yet, so a finished stream alone
/// does not mean the exchange is done.
/// Complexity: O(1). Throws: nothing.
[[nodiscard]] constexpr wait_step next_wait_step(work_state work, comm_state comm,
                                                 bool past_deadline) noexcept {
  if (work == work_state::failed) {
    return wait_step::abort_device_error;
  }
  if (comm == comm_state::failed) {
    return wait_step::abort_comm_error;
  }
  if (work == work_state::done && comm == comm_state::ready) {
    return wait_step::finish;
  }
  return past_deadline ? wait_step::abort_timeout : wait_step::keep_polling;
}

/// How the deadline of a wait is read: ends when steady_clock passes it.
using wait_clock = std::chrono::steady_clock;

/// Polls until next_wait_step says anything but keep_polling and returns that step (never
/// keep_polling). `poll_work()` returns a work_state, `poll_comm()` a comm_state, `now()` a
/// wait_clock::time_point, `pause()` yields between polls. The communicator's waits
/// (synchronize, the plan-hash check, device-plan uploads, workspace growth, non-blocking NCCL
/// calls) are all this loop with real polls; the tests drive it with fakes.
/// Complexity: one poll of each per iteration until done, failed or past `deadline`.
/// Throws: whatever the callables throw.
template <class PollWork, class PollComm, class Now, class Pause>
[[nodiscard]] wait_step bounded_wait(PollWork&& poll_work, PollComm&& poll_comm,
                                     wait_clock::time_point deadline, Now&& now, Pause&& pause) {
  for (;;) {
    const work_state work = poll_work();
    // The communicator is polled even once the work is done: its state decides too.
    const comm_state comm = poll_comm();
    const wait_step step = next_wait_step(work, comm, now() > deadline);
    if (step != wait_step::keep_polling) {
      return step;
    }
    pause();
  }
}

/// How a communicator takes the return code of an NCCL call on its communicator.
enum class nccl_call_outcome {
  ok,         ///< ncclSuccess
  poll,       ///< ncclInProgress: wait (bounded_wait with the work done) until the
              ///< communicator is ready — a non-blocking communicator (PyTorch can create
              ///< them) returns this from calls that are still being enqueued
  throw_error ///< anything else
};

/// The outcome of an NCCL return code; `success` and `in_progress` are ncclSuccess and
/// ncclInProgress (passed in so that this header needs no NCCL header).
/// Complexity: O(1). Throws: nothing.
[[nodiscard]] constexpr nccl_call_outcome take_nccl_result(int result, int success,
                                                           int in_progress) noexcept {
  if (result == success) {
    return nccl_call_outcome::ok;
  }
  return result == in_progress ? nccl_call_outcome::poll : nccl_call_outcome::throw_error;
}

/// Checks that the current CUDA device is the communicator's: NCCL enqueues on the
/// communicator's device, so buffers and streams of another device would be used from the
/// wrong one (undefined behaviour, or an obscure NCCL error much later).
/// Complexity: O(1).
/// Throws: orch::invalid_argument naming both devices, the rank and `where`.
inline void check_current_device(int comm_device, int current_device, int rank, const char* where) {
  if (comm_device != current_device) {
    throw_invalid_argument(where, ": rank ", rank, "'s NCCL communicator lives on CUDA device ",
                           comm_device, " but the current device is ", current_device,
                           " (call cudaSetDevice(", comm_device,
                           ") before using the communicator)");
  }
}

} // namespace orch::cuda
