// SPDX-License-Identifier: Apache-2.0
/// The NCCL backend's rules for one poll of a wait: what the GPU work and the communicator's
/// asynchronous state together mean (done, pending, or a failure that the core's watchdog turns
/// into "abort the communicator, then throw"), how an NCCL return code is taken, and whether the
/// current device fits the communicator. The deadline and the abort-then-throw sequence are the
/// core's (orch/transport/watchdog.hpp). Plain C++ (no CUDA, no NCCL types): unit-tested on the
/// CPU.
#pragma once

#include <orch/config.hpp>

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

/// What one poll means.
enum class poll_verdict {
  done,         ///< the work is done and the communicator is ready
  pending,      ///< poll again (until the watchdog's deadline)
  device_error, ///< throw the CUDA error: the watchdog aborts the communicator first
  comm_error    ///< throw the NCCL error: the watchdog aborts the communicator first
};

/// The verdict of one poll. Failures win over completion: a communicator with an asynchronous
/// error is broken even if this stream finished. A CUDA error is a failure of the transport
/// too (the watchdog aborts the communicator before the exception leaves), so that peers
/// blocked on this rank's sends are released now instead of waiting out their own timeouts,
/// and so that destroying the communicator later cannot block on a kernel that never ends.
/// ncclInProgress is pending, never failure and never completion: a non-blocking communicator
/// may not have enqueued the work yet, so a finished stream alone does not mean it is done.
/// Complexity: O(1). Throws: nothing.
[[nodiscard]] constexpr poll_verdict judge_poll(work_state work, comm_state comm) noexcept {
  if (work == work_state::failed) {
    return poll_verdict::device_error;
  }
  if (comm == comm_state::failed) {
    return poll_verdict::comm_error;
  }
  return work == work_state::done && comm == comm_state::ready ? poll_verdict::done
                                                               : poll_verdict::pending;
}

/// How the backend takes the return code of an NCCL call on its communicator.
enum class nccl_call_outcome {
  ok,         ///< ncclSuccess
  poll,       ///< ncclInProgress: wait (with the work done) until the communicator is ready —
              ///< a non-blocking communicator (PyTorch can create them) returns this from
              ///< calls that are still being enqueued
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
