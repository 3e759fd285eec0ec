// SPDX-License-Identifier: Apache-2.0
// The compiled module without a device: typed errors with call text, code name and file:line,
// and the workspace sizes the communicator reports in advance.
#include <orch/cuda/communicator.hpp>
#include <orch/cuda/copy_program.hpp>
#include <orch/cuda/error.hpp>
#include <orch/cuda/version.hpp>
#include <orch/exchange/layout.hpp>
#include <orch/exchange/plan.hpp>
#include <orch/exchange/schedule.hpp>
#include <orch/topology.hpp>
#include <orch/transport/program.hpp>

#include <cuda_runtime_api.h>

#include <doctest/doctest.h>

#include <string>
#include <vector>

using orch::bytes_t;
using orch::rank_t;
namespace oc = orch::cuda;

TEST_CASE("cuda errors: ORCH_CUDA_CHECK names the call, the error and file:line") {
  try {
    ORCH_CUDA_CHECK(cudaErrorInvalidValue);
    FAIL("no exception");
  } catch (const oc::cuda_error& e) {
    const std::string what = e.what();
    CHECK(what.find("cudaErrorInvalidValue") != std::string::npos);
    CHECK(what.find("test_errors.cpp:") != std::string::npos);
    CHECK(e.code() == static_cast<int>(cudaErrorInvalidValue));
  }
  CHECK_THROWS_AS(ORCH_CUDA_CHECK(cudaErrorMemoryAllocation), orch::error);
  CHECK_NOTHROW(ORCH_CUDA_CHECK(cudaSuccess));
}

TEST_CASE("cuda errors: ORCH_NCCL_CHECK names the call, the result and file:line") {
  try {
    ORCH_NCCL_CHECK(ncclInvalidUsage);
    FAIL("no exception");
  } catch (const oc::nccl_error& e) {
    const std::string what = e.what();
    CHECK(what.find("ncclInvalidUsage") != std::string::npos);
    CHECK(what.find("ORCH_NCCL_CHECK") == std::string::npos); // the call text, not the macro
    CHECK(what.find("test_errors.cpp:") != std::string::npos);
    CHECK(e.code() == static_cast<int>(ncclInvalidUsage));
  }
  CHECK_THROWS_AS(ORCH_NCCL_CHECK(ncclSystemError), std::runtime_error);
  CHECK_NOTHROW(ORCH_NCCL_CHECK(ncclSuccess));
  CHECK(std::string(oc::detail::nccl_result_name(ncclRemoteError)) == "ncclRemoteError");
}

TEST_CASE("cuda communicator: workspace and staging sizes are reported in advance") {
  // 4 ranks on 2 nodes; rank 0 sends its two items to rank 3 (other node) and 1 (same node).
  const auto topo = orch::topology::uniform(4, 2);
  const auto from = orch::layout::from_assignment(std::vector<rank_t>{0, 0, 2, 3}, 4);
  const auto to = orch::layout::from_assignment(std::vector<rank_t>{3, 1, 0, 0}, 4);
  const auto plan = orch::make_plan(from, to, std::vector<bytes_t>{100, 7, 300, 1});
  const auto sched = orch::make_schedule(plan, topo);
  for (rank_t r = 0; r < 4; ++r) {
    CAPTURE(r);
    CHECK(oc::communicator::workspace_bytes(plan, r) ==
          orch::transport::make_flat_program(plan, r).workspace.end);
    const bytes_t staging = oc::communicator::staging_bytes(sched, r);
    CHECK(staging >= sched.staging_bytes[static_cast<std::size_t>(r)]);
    CHECK(staging == orch::transport::make_nodewise_program(sched, r).workspace.end);
    CHECK(staging % orch::transport::default_alignment == 0);
  }
  CHECK_THROWS_AS(static_cast<void>(oc::communicator::workspace_bytes(plan, 4)),
                  orch::invalid_argument);
  CHECK(oc::runtime_version_compiled() >= 12000);
}
