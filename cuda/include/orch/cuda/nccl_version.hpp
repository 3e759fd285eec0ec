// SPDX-License-Identifier: Apache-2.0
/// The one place that includes <nccl.h> for the module and checks the minimum NCCL version.
#pragma once

#include <nccl.h>

/// Oldest NCCL the module supports: 2.18 (ncclSend/ncclRecv, ncclCommGetAsyncError,
/// ncclCommAbort and ncclUint64 reductions are all older; 2.18 is the oldest release tested
/// with CUDA 12). cmake/FindNCCL.cmake checks the same version at configure time.
#define ORCH_NCCL_MIN_VERSION_CODE 21800

static_assert(NCCL_VERSION_CODE >= ORCH_NCCL_MIN_VERSION_CODE,
              "orch::cuda needs NCCL 2.18 or newer (NCCL_VERSION_CODE >= 21800)");
