// SPDX-License-Identifier: Apache-2.0
/// Typed errors of the MPI module and ORCH_MPI_CHECK, which wraps every MPI call (the module's
/// communicators return errors instead of aborting: MPI_ERRORS_RETURN).
#pragma once

#include <orch/config.hpp>
#include <orch/transport/errors.hpp>

#include <stdexcept>
#include <string>

namespace orch::mpi {

/// The transport errors shared with the NCCL backend (orch/transport/errors.hpp).
using orch::transport::aborted_error;
using orch::transport::plan_mismatch_error;
using orch::transport::timeout_error;

/// An MPI call failed. what() names the call, the MPI error class and string, the rank and
/// file:line.
class mpi_error final : public std::runtime_error, public orch::error {
public:
  /// `code` is the MPI error code the call returned.
  mpi_error(int code, const std::string& message) : std::runtime_error(message), code_(code) {}
  /// The MPI error code.
  [[nodiscard]] int code() const noexcept { return code_; }
  [[nodiscard]] const char* what() const noexcept override { return std::runtime_error::what(); }

private:
  int code_;
};

namespace detail {
/// Throws mpi_error for error `code` returned by `call` on `rank` at file:line.
[[noreturn]] void throw_mpi_error(int code, const char* call, int rank, const char* file, int line);
} // namespace detail

} // namespace orch::mpi

/// Evaluates an MPI call once; throws orch::mpi::mpi_error (naming `rank`) unless it returned
/// MPI_SUCCESS (0).
#define ORCH_MPI_CHECK(call, rank)                                                                 \
  do {                                                                                             \
    const int orch_mpi_status_ = (call);                                                           \
    if (orch_mpi_status_ != 0) {                                                                   \
      ::orch::mpi::detail::throw_mpi_error(orch_mpi_status_, #call, (rank), __FILE__, __LINE__);   \
    }                                                                                              \
  } while (false)
