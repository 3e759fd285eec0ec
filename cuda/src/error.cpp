// SPDX-License-Identifier: Apache-2.0
#include <orch/cuda/error.hpp>
#include <orch/cuda/nccl_version.hpp>

#include <cuda_runtime_api.h>

#include <string>

namespace orch::cuda::detail {

void throw_cuda_error(int code, const char* call, const char* file, int line) {
  const auto e = static_cast<cudaError_t>(code);
  throw cuda_error(code, orch::detail::message(call, " failed: ", cudaGetErrorName(e), " (",
                                               cudaGetErrorString(e), ") at ", file, ":", line));
}

const char* nccl_result_name(int code) noexcept {
  switch (code) {
  case ncclSuccess:
    return "ncclSuccess";
  case ncclUnhandledCudaError:
    return "ncclUnhandledCudaError";
  case ncclSystemError:
    return "ncclSystemError";
  case ncclInternalError:
    return "ncclInternalError";
  case ncclInvalidArgument:
    return "ncclInvalidArgument";
  case ncclInvalidUsage:
    return "ncclInvalidUsage";
  case ncclRemoteError:
    return "ncclRemoteError";
  case ncclInProgress:
    return "ncclInProgress";
  default:
    return "ncclResult(unknown)";
  }
}

void throw_nccl_error(int code, const char* call, const char* file, int line) {
  throw nccl_error(code, orch::detail::message(call, " failed: ", nccl_result_name(code), " (",
                                               ncclGetErrorString(static_cast<ncclResult_t>(code)),
                                               ") at ", file, ":", line));
}

} // namespace orch::cuda::detail
