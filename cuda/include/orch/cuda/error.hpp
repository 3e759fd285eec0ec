// SPDX-License-Identifier: Apache-2.0
/// Typed errors of the CUDA module and the ORCH_CUDA_CHECK / ORCH_NCCL_CHECK macros that wrap
/// every CUDA runtime and NCCL call. Plain C++: no CUDA header needed.
#pragma once

#include <orch/config.hpp>
#include <orch/transport/errors.hpp>

#include <cstdint>
#include <stdexcept>
#include <string>

namespace orch::cuda {

/// A CUDA runtime call failed. what() names the call, the error (cudaGetErrorName and
/// cudaGetErrorString) and file:line.
class cuda_error final : public std::runtime_error, public orch::error {
public:
  /// `code` is the cudaError_t value.
  cuda_error(int code, const std::string& message) : std::runtime_error(message), code_(code) {}
  /// The cudaError_t value.
  [[nodiscard]] int code() const noexcept { return code_; }
  [[nodiscard]] const char* what() const noexcept override { return std::runtime_error::what(); }

private:
  int code_;
};

/// An NCCL call failed, or a communicator reported an asynchronous error (it has then been
/// aborted). what() names the call, the ncclResult_t name and message, and file:line.
class nccl_error final : public std::runtime_error, public orch::error {
public:
  /// `code` is the ncclResult_t value.
  nccl_error(int code, const std::string& message) : std::runtime_error(message), code_(code) {}
  /// The ncclResult_t value.
  [[nodiscard]] int code() const noexcept { return code_; }
  [[nodiscard]] const char* what() const noexcept override { return std::runtime_error::what(); }

private:
  int code_;
};

/// The errors every transport backend shares (orch/transport/errors.hpp), under the names
/// this module has always used: a wait that timed out (the communicator was aborted first),
/// ranks holding different plans (no payload moved; both hashes named), and a communicator
/// used after it was aborted.
using timeout_error = orch::transport::timeout_error;
using plan_mismatch_error = orch::transport::plan_mismatch_error;
using aborted_error = orch::transport::aborted_error;

namespace detail {
/// Throws cuda_error for cudaError_t `code` returned by `call` at file:line.
[[noreturn]] void throw_cuda_error(int code, const char* call, const char* file, int line);
/// Throws nccl_error for ncclResult_t `code` returned by `call` at file:line.
[[noreturn]] void throw_nccl_error(int code, const char* call, const char* file, int line);
/// The enumerator name of an ncclResult_t ("ncclInvalidUsage"), "ncclResult(<n>)" if unknown.
[[nodiscard]] const char* nccl_result_name(int code) noexcept;
} // namespace detail

} // namespace orch::cuda

/// Evaluates a CUDA runtime call once; throws orch::cuda::cuda_error unless it returned
/// cudaSuccess (0).
#define ORCH_CUDA_CHECK(call)                                                                      \
  do {                                                                                             \
    const int orch_cuda_status_ = static_cast<int>(call);                                          \
    if (orch_cuda_status_ != 0) {                                                                  \
      ::orch::cuda::detail::throw_cuda_error(orch_cuda_status_, #call, __FILE__, __LINE__);        \
    }                                                                                              \
  } while (false)

/// Evaluates an NCCL call once; throws orch::cuda::nccl_error unless it returned ncclSuccess
/// (0).
#define ORCH_NCCL_CHECK(call)                                                                      \
  do {                                                                                             \
    const int orch_nccl_status_ = static_cast<int>(call);                                          \
    if (orch_nccl_status_ != 0) {                                                                  \
      ::orch::cuda::detail::throw_nccl_error(orch_nccl_status_, #call, __FILE__, __LINE__);        \
    }                                                                                              \
  } while (false)
