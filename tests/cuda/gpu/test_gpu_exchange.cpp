// SPDX-License-Identifier: Apache-2.0
// Exchanges on the device — the loopback transport (flat and node-wise, many virtual ranks)
// and a single-rank NCCL communicator — byte for byte against the reference executor.
#include "gpu_support.hpp"

#include <cuda/cuda_scenarios.hpp>

#include <orch/cuda/communicator.hpp>
#include <orch/cuda/error.hpp>
#include <orch/cuda/loopback.hpp>
#include <orch/exchange/execute.hpp>
#include <orch/exchange/plan.hpp>
#include <orch/exchange/schedule.hpp>

#include <cuda_runtime_api.h>

#include <doctest/doctest.h>

#include <chrono>
#include <cstddef>
#include <cstdint>
#include <memory>
#include <random>
#include <vector>

using orch::bytes_t;
using orch::rank_t;
namespace oc = orch::cuda;

namespace {

struct device_ranks {
  std::vector<std::unique_ptr<orch::test::device_bytes>> src;
  std::vector<std::unique_ptr<orch::test::device_bytes>> dst;
  std::vector<const void*> src_ptr;
  std::vector<void*> dst_ptr;

  device_ranks(const orch::exchange_plan& plan, const orch::rank_buffers& host, bytes_t shift) {
    for (rank_t r = 0; r < plan.ranks(); ++r) {
      const auto x = static_cast<std::size_t>(r);
      src.push_back(std::make_unique<orch::test::device_bytes>(host[x], shift));
      dst.push_back(
          std::make_unique<orch::test::device_bytes>(plan.destination_bytes(r), (shift * 5) % 16));
      src_ptr.push_back(src.back()->pointer());
      dst_ptr.push_back(dst.back()->pointer());
    }
  }
  [[nodiscard]] orch::rank_buffers result() const {
    orch::rank_buffers out;
    for (const auto& d : dst) {
      out.push_back(d->host());
    }
    return out;
  }
};

} // namespace

TEST_CASE("gpu loopback: flat and node-wise exchanges equal the reference executor") {
  cudaStream_t stream = nullptr;
  ORCH_CUDA_CHECK(cudaStreamCreate(&stream));
  std::vector<int> kinds(orch::test::cuda_shapes, 0);
  const std::uint64_t seeds = orch::test::gpu_seeds(160);
  for (std::uint64_t seed = 1; seed <= seeds; ++seed) {
    const auto s = orch::test::make_cuda_scenario(seed);
    CAPTURE(seed);
    CAPTURE(s.topo.ranks());
    const auto plan = orch::make_plan(s.from, s.to, s.bytes);
    const auto src = orch::test::make_source(plan);
    const auto want = orch::execute(plan, src);
    const auto engine = seed % 2 == 0 ? oc::copy_engine::cub_batched : oc::copy_engine::tiles;
    CAPTURE(static_cast<int>(engine));
    oc::loopback lb(plan.ranks(), seed % 5 == 0 ? 16 : oc::default_tile_bytes, engine);
    {
      device_ranks d(plan, src, static_cast<bytes_t>(seed % 16));
      lb.exchange(plan, d.src_ptr, d.dst_ptr, stream);
      ORCH_CUDA_CHECK(cudaStreamSynchronize(stream));
      CHECK(d.result() == want);
    }
    {
      const auto sched = orch::make_schedule(plan, s.topo);
      device_ranks d(plan, src, static_cast<bytes_t>((seed * 7) % 16));
      lb.exchange(sched, d.src_ptr, d.dst_ptr, stream);
      ORCH_CUDA_CHECK(cudaStreamSynchronize(stream));
      CHECK(d.result() == want);
      // run() again on fresh buffers: the prepared exchange is reusable (what the benchmark
      // times).
      device_ranks again(plan, src, 1);
      lb.run(again.src_ptr, again.dst_ptr, stream);
      ORCH_CUDA_CHECK(cudaStreamSynchronize(stream));
      CHECK(again.result() == want);
    }
    ++kinds[static_cast<std::size_t>(s.kind)];
  }
  for (const int k : kinds) {
    CHECK(k >= static_cast<int>(seeds / orch::test::cuda_shapes)); // every shape is exercised
  }
  ORCH_CUDA_CHECK(cudaStreamDestroy(stream));
}

TEST_CASE("gpu loopback: pointer and plan counts are checked") {
  const auto from = orch::layout::from_assignment(std::vector<rank_t>{0, 1}, 2);
  const auto plan = orch::make_plan(from, from, std::vector<bytes_t>{3, 5});
  oc::loopback lb(3);
  std::vector<const void*> src(2, nullptr);
  std::vector<void*> dst(2, nullptr);
  CHECK_THROWS_AS(lb.exchange(plan, src, dst, nullptr), orch::invalid_argument);
  CHECK_THROWS_AS(lb.run(src, dst, nullptr), orch::invalid_argument); // nothing prepared
  CHECK_THROWS_AS(oc::loopback(0), orch::invalid_argument);
}

TEST_CASE("gpu communicator: a single-rank NCCL exchange equals the reference executor") {
  int device = 0;
  ORCH_CUDA_CHECK(cudaGetDevice(&device));
  cudaStream_t stream = nullptr;
  ORCH_CUDA_CHECK(cudaStreamCreate(&stream));
  oc::communicator_options options;
  options.check_plan_hash = true;
  options.timeout = std::chrono::seconds(60);
  oc::communicator comm(oc::nccl_comm::single(device), options);
  REQUIRE(comm.size() == 1);
  REQUIRE(comm.rank() == 0);
  for (std::uint64_t seed = 1; seed <= orch::test::gpu_seeds(40); ++seed) {
    // One rank: every item stays, but slot orders differ, so pack and unpack both run.
    std::mt19937_64 rng(seed);
    const auto n = static_cast<std::size_t>(orch::test::uniform_int(rng, 0, 40));
    std::vector<bytes_t> bytes(n);
    for (auto& b : bytes) {
      b = orch::test::uniform_int(rng, 0, 3) == 0 ? 0 : orch::test::uniform_int(rng, 1, 5000);
    }
    const std::vector<rank_t> ranks(n, 0);
    const auto from = orch::test::random_layout(rng, ranks, 1);
    const auto to = orch::test::random_layout(rng, ranks, 1);
    const auto plan = orch::make_plan(from, to, bytes);
    CAPTURE(seed);
    const auto src = orch::test::make_source(plan);
    const auto want = orch::execute(plan, src);
    {
      device_ranks d(plan, src, static_cast<bytes_t>(seed % 16));
      comm.exchange(plan, d.src_ptr[0], d.dst_ptr[0], stream);
      comm.synchronize(stream);
      CHECK(d.result() == want);
    }
    {
      const auto sched = orch::make_schedule(plan, orch::topology::uniform(1, 1));
      CHECK(oc::communicator::staging_bytes(sched, 0) >= sched.staging_bytes[0]);
      comm.reserve(oc::communicator::staging_bytes(sched, 0));
      device_ranks d(plan, src, 3);
      comm.exchange(sched, d.src_ptr[0], d.dst_ptr[0], stream);
      comm.synchronize(stream);
      CHECK(d.result() == want);
    }
  }
  const auto two = orch::make_plan(orch::layout::from_assignment(std::vector<rank_t>{0, 1}, 2),
                                   orch::layout::from_assignment(std::vector<rank_t>{1, 0}, 2),
                                   std::vector<bytes_t>{1, 1});
  CHECK_THROWS_AS(comm.exchange(two, nullptr, nullptr, stream), orch::invalid_argument);
  ORCH_CUDA_CHECK(cudaStreamDestroy(stream));
}
