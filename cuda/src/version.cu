// SPDX-License-Identifier: Apache-2.0
#include <orch/cuda/version.hpp>

#include <cuda_runtime.h>

namespace orch::cuda {

int runtime_version_compiled() noexcept {
  return CUDART_VERSION;
}

int device_count() noexcept {
  int count = 0;
  if (cudaGetDeviceCount(&count) != cudaSuccess) {
    return 0;
  }
  return count;
}

} // namespace orch::cuda
