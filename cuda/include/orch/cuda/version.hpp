// SPDX-License-Identifier: Apache-2.0
/// Runtime facts about the CUDA module: the CUDA runtime it was built against, device count.
#pragma once

namespace orch::cuda {

/// CUDA runtime version the module was compiled against (e.g. 13000).
[[nodiscard]] int runtime_version_compiled() noexcept;

/// Number of visible CUDA devices; 0 when there is no device or no driver.
[[nodiscard]] int device_count() noexcept;

} // namespace orch::cuda
