// SPDX-License-Identifier: Apache-2.0
// The NCCL communicator's failure handling on one GPU: the group path (self chunk through
// ncclSend / ncclRecv), a group left by an exception, a borrowed non-blocking communicator,
// moves, the current-device check (two GPUs) and bounded waits when the stream hangs.
#include "gpu_support.hpp"

#include <orch/cuda/communicator.hpp>
#include <orch/cuda/error.hpp>
#include <orch/cuda/nccl_group.hpp>
#include <orch/exchange/execute.hpp>
#include <orch/exchange/layout.hpp>
#include <orch/exchange/plan.hpp>
#include <orch/exchange/schedule.hpp>
#include <orch/topology.hpp>

#include <cuda/cuda_scenarios.hpp>

#include <cuda_runtime_api.h>

#include <doctest/doctest.h>

#include <atomic>
#include <chrono>
#include <cstdint>
#include <random>
#include <stdexcept>
#include <thread>
#include <utility>
#include <vector>

using orch::bytes_t;
using orch::rank_t;
namespace oc = orch::cuda;

namespace {

// A one-rank plan with `n` items whose slot orders differ, so pack and unpack both run.
orch::exchange_plan shuffled_plan(std::uint64_t seed, std::size_t n, bytes_t max_bytes) {
  std::mt19937_64 rng(seed);
  std::vector<bytes_t> bytes(n);
  for (auto& b : bytes) {
    b = orch::test::uniform_int(rng, 0, 4) == 0 ? 0 : orch::test::uniform_int(rng, 1, max_bytes);
  }
  const std::vector<rank_t> ranks(n, 0);
  return orch::make_plan(orch::test::random_layout(rng, ranks, 1),
                         orch::test::random_layout(rng, ranks, 1), bytes);
}

// Runs `plan` flat and node-wise on `comm` and checks both against the reference executor.
void check_exchanges(oc::communicator& comm, const orch::exchange_plan& plan, cudaStream_t stream) {
  const auto src = orch::test::make_source(plan);
  const auto want = orch::execute(plan, src)[0];
  {
    const orch::test::device_bytes d_src(src[0], 3);
    const orch::test::device_bytes d_dst(plan.destination_bytes(0), 5);
    comm.exchange(plan, d_src.pointer(), d_dst.pointer(), stream);
    comm.synchronize(stream);
    CHECK(d_dst.host() == want);
  }
  {
    const auto sched = orch::make_schedule(plan, orch::topology::uniform(1, 1));
    const orch::test::device_bytes d_src(src[0], 0);
    const orch::test::device_bytes d_dst(plan.destination_bytes(0), 0);
    comm.exchange(sched, d_src.pointer(), d_dst.pointer(), stream);
    comm.synchronize(stream);
    CHECK(d_dst.host() == want);
  }
}

oc::communicator_options test_options(bool self_through_nccl, oc::copy_engine engine) {
  oc::communicator_options o;
  o.timeout = std::chrono::seconds(60);
  o.self_through_nccl = self_through_nccl;
  o.engine = engine;
  return o;
}

int current_device() {
  int device = 0;
  ORCH_CUDA_CHECK(cudaGetDevice(&device));
  return device;
}

} // namespace

TEST_CASE("gpu communicator: the self chunk through ncclSend/ncclRecv in a group, both engines") {
  cudaStream_t stream = nullptr;
  ORCH_CUDA_CHECK(cudaStreamCreate(&stream));
  for (const auto engine : {oc::copy_engine::cub_batched, oc::copy_engine::tiles}) {
    CAPTURE(static_cast<int>(engine));
    oc::communicator comm(oc::nccl_comm::single(current_device()), test_options(true, engine));
    for (std::uint64_t seed = 1; seed <= orch::test::gpu_seeds(24); ++seed) {
      CAPTURE(seed);
      check_exchanges(comm, shuffled_plan(seed, static_cast<std::size_t>(seed % 40), 70'000),
                      stream);
    }
  }
  ORCH_CUDA_CHECK(cudaStreamDestroy(stream));
}

TEST_CASE("gpu communicator: an exception inside a group leaves no group open") {
  cudaStream_t stream = nullptr;
  ORCH_CUDA_CHECK(cudaStreamCreate(&stream));
  oc::communicator comm(oc::nccl_comm::single(current_device()),
                        test_options(true, oc::copy_engine::cub_batched));
  try {
    const oc::nccl_group group;
    throw std::runtime_error("thrown between ncclGroupStart and ncclGroupEnd");
  } catch (const std::runtime_error&) {
  }
  // Were the thread still in group mode, the exchange's sends and receives would be deferred
  // to a group that never ends: unpack would read a receive buffer nobody wrote.
  check_exchanges(comm, shuffled_plan(5, 30, 9000), stream);
  ORCH_CUDA_CHECK(cudaStreamDestroy(stream));
}

TEST_CASE("gpu communicator: a borrowed non-blocking communicator (ncclInProgress) works") {
  cudaStream_t stream = nullptr;
  ORCH_CUDA_CHECK(cudaStreamCreate(&stream));
  ncclUniqueId id;
  ORCH_NCCL_CHECK(ncclGetUniqueId(&id));
  ncclConfig_t config = NCCL_CONFIG_INITIALIZER;
  config.blocking = 0;
  ncclComm_t raw = nullptr;
  const ncclResult_t init = ncclCommInitRankConfig(&raw, 1, id, 0, &config);
  REQUIRE((init == ncclSuccess || init == ncclInProgress));
  {
    // The constructor waits for the initialisation to finish (it may still be in progress).
    oc::communicator comm(raw, test_options(true, oc::copy_engine::cub_batched));
    CHECK(comm.size() == 1);
    for (std::uint64_t seed = 1; seed <= 6; ++seed) {
      CAPTURE(seed);
      check_exchanges(comm, shuffled_plan(seed, 25, 20'000), stream);
    }
  }
  ncclResult_t state = ncclInProgress;
  while (state == ncclInProgress) {
    ORCH_NCCL_CHECK(ncclCommGetAsyncError(raw, &state));
  }
  CHECK(state == ncclSuccess);
  static_cast<void>(ncclCommDestroy(raw)); // borrowed: the communicator did not destroy it
  ORCH_CUDA_CHECK(cudaStreamDestroy(stream));
}

TEST_CASE("gpu communicator: a moved-from communicator holds no handle") {
  cudaStream_t stream = nullptr;
  ORCH_CUDA_CHECK(cudaStreamCreate(&stream));
  oc::communicator a(oc::nccl_comm::single(current_device()),
                     test_options(false, oc::copy_engine::cub_batched));
  const ncclComm_t handle = a.get();
  REQUIRE(handle != nullptr);
  oc::communicator b(std::move(a));
  CHECK(a.get() == nullptr); // NOLINT(bugprone-use-after-move): the state is specified
  CHECK(b.get() == handle);
  const auto plan = shuffled_plan(3, 12, 5000);
  CHECK_THROWS_AS(a.exchange(plan, nullptr, nullptr, stream), orch::invalid_argument);
  a.abort(); // must not touch b's handle
  check_exchanges(b, plan, stream);
  oc::communicator c(oc::nccl_comm::single(current_device()),
                     test_options(false, oc::copy_engine::tiles));
  c = std::move(b);          // destroys c's own communicator, takes b's
  CHECK(b.get() == nullptr); // NOLINT(bugprone-use-after-move)
  CHECK(c.get() == handle);
  check_exchanges(c, plan, stream);
  ORCH_CUDA_CHECK(cudaStreamDestroy(stream));
}

TEST_CASE("gpu communicator: the current device must be the communicator's (two GPUs)") {
  int count = 0;
  ORCH_CUDA_CHECK(cudaGetDeviceCount(&count));
  if (count < 2) {
    MESSAGE("one device only: the device check is tested on the CPU (cuda_host)");
    return;
  }
  ORCH_CUDA_CHECK(cudaSetDevice(0));
  oc::communicator comm(oc::nccl_comm::single(0));
  CHECK(comm.device() == 0);
  ORCH_CUDA_CHECK(cudaSetDevice(1));
  const auto plan = shuffled_plan(4, 8, 100);
  CHECK_THROWS_AS(comm.exchange(plan, nullptr, nullptr, nullptr), orch::invalid_argument);
  ORCH_CUDA_CHECK(cudaSetDevice(0));
}

TEST_CASE("gpu communicator: waits on a hung stream end with timeout_error and an abort") {
  cudaStream_t stream = nullptr;
  ORCH_CUDA_CHECK(cudaStreamCreate(&stream));
  oc::communicator_options options = test_options(false, oc::copy_engine::cub_batched);
  options.check_plan_hash = false; // the growth waits below, not the hash check, must time out
  options.timeout = std::chrono::milliseconds(300);
  const auto small = shuffled_plan(1, 4, 64);
  const auto large = shuffled_plan(2, 4000, 60'000); // larger device plan and workspace
  SUBCASE("growing the device plan / workspace in exchange()") {
    oc::communicator comm(oc::nccl_comm::single(current_device()), options);
    check_exchanges(comm, small, stream);
    // Buffers first: their synchronous copies run on the legacy stream, which would wait for
    // the blocked one.
    const auto src = orch::test::make_source(large);
    const orch::test::device_bytes d_src(src[0], 0);
    const orch::test::device_bytes d_dst(large.destination_bytes(0), 0);
    orch::test::stream_blocker blocker(stream);
    const auto t0 = std::chrono::steady_clock::now();
    CHECK_THROWS_AS(comm.exchange(large, d_src.pointer(), d_dst.pointer(), stream),
                    oc::timeout_error);
    CHECK(std::chrono::steady_clock::now() - t0 < std::chrono::seconds(30));
    CHECK(comm.get() == nullptr); // aborted
    CHECK(comm.aborted());
    CHECK_THROWS_AS(comm.exchange(small, d_src.pointer(), d_dst.pointer(), stream),
                    oc::aborted_error); // refuses at once instead of waiting again
    blocker.release();
  }
  SUBCASE("reserve()") {
    oc::communicator comm(oc::nccl_comm::single(current_device()), options);
    check_exchanges(comm, small, stream);
    comm.reserve(1 << 10);
    const auto src = orch::test::make_source(small);
    const orch::test::device_bytes d_src(src[0], 0);
    const orch::test::device_bytes d_dst(small.destination_bytes(0), 0);
    orch::test::stream_blocker blocker(stream);
    // Queue an exchange behind the blocker, then ask for more workspace: reserve waits for it.
    comm.exchange(small, d_src.pointer(), d_dst.pointer(), stream);
    CHECK_THROWS_AS(comm.reserve(bytes_t{64} << 20), oc::timeout_error);
    CHECK(comm.get() == nullptr);
    blocker.release();
  }
  SUBCASE("synchronize()") {
    oc::communicator comm(oc::nccl_comm::single(current_device()), options);
    orch::test::stream_blocker blocker(stream);
    CHECK_THROWS_AS(comm.synchronize(stream), oc::timeout_error);
    CHECK(comm.get() == nullptr);
    blocker.release();
  }
  ORCH_CUDA_CHECK(cudaStreamSynchronize(stream));
  ORCH_CUDA_CHECK(cudaStreamDestroy(stream));
}
