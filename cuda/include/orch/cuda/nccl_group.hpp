// SPDX-License-Identifier: Apache-2.0
/// A scope guard for an NCCL group (ncclGroupStart / ncclGroupEnd) that closes the group when
/// an exception leaves the scope, so that the thread never stays in group mode.
#pragma once

#include <orch/cuda/error.hpp>
#include <orch/cuda/nccl_version.hpp>

namespace orch::cuda {

/// Opens an NCCL group on construction; end() closes it and returns ncclGroupEnd's result
/// (ncclInProgress from a non-blocking communicator, which the caller must then poll). If the
/// scope is left without end() — an exception between the start and the end — the destructor
/// closes the group, ignoring the result: a thread left in group mode would defer every later
/// NCCL call of the process, the framework's too, into a group that never ends. NCCL discards
/// the operations of a group in which a call failed; all fallible host work of an exchange is
/// done before the group opens, so only failing NCCL calls can throw inside it.
/// Not copyable, not movable (the group belongs to the thread and the scope).
class nccl_group {
public:
  /// ncclGroupStart. Throws: nccl_error.
  nccl_group() { ORCH_NCCL_CHECK(ncclGroupStart()); }
  ~nccl_group() {
    if (open_) {
      static_cast<void>(ncclGroupEnd()); // destructors never throw
    }
  }
  nccl_group(const nccl_group&) = delete;
  nccl_group& operator=(const nccl_group&) = delete;
  nccl_group(nccl_group&&) = delete;
  nccl_group& operator=(nccl_group&&) = delete;

  /// Closes the group (once; later calls return ncclSuccess without calling NCCL).
  /// Complexity: launches the group's operations. Throws: nothing.
  [[nodiscard]] ncclResult_t end() noexcept {
    if (!open_) {
      return ncclSuccess;
    }
    open_ = false;
    return ncclGroupEnd();
  }
  /// Whether end() has not run yet. Complexity: O(1).
  [[nodiscard]] bool open() const noexcept { return open_; }

private:
  bool open_ = true;
};

} // namespace orch::cuda
