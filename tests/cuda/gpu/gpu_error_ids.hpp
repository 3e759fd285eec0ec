// SPDX-License-Identifier: Apache-2.0
// The CUDA module's catalogue entries (docs/errors.md, E12xx) that only a device can raise:
// tests/cuda/gpu/test_gpu_errors.cpp raises exactly these, and the host catalogue test
// (tests/cuda/lib/test_cuda_errors.cpp) accepts them as the only E12xx rows without a host
// trigger.
#pragma once

#include <orch/cuda/error.hpp>

#include <errors/catalogue.hpp>

#include <set>
#include <string>

namespace orch_errors {

/// The E12xx ids raised by the gpu suite (each needs a CUDA device: a communicator, an upload).
inline const std::set<std::string>& gpu_raised_ids() {
  static const std::set<std::string> ids{"E1217", "E1218", "E1219", "E1220",
                                         "E1221", "E1222", "E1223", "E1224"};
  return ids;
}

/// Whether `id` is a CUDA module row.
inline bool is_cuda_row(const std::string& id) {
  return id.size() == 5 && id.starts_with("E12");
}

/// The type column's name of `e`, the CUDA module's own types included.
inline std::string cuda_type_of(const orch::error& e) {
  if (dynamic_cast<const orch::cuda::cuda_error*>(&e) != nullptr) {
    return "cuda_error";
  }
  if (dynamic_cast<const orch::cuda::nccl_error*>(&e) != nullptr) {
    return "nccl_error";
  }
  return type_of(e);
}

} // namespace orch_errors
