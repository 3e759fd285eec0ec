// SPDX-License-Identifier: Apache-2.0
// orch-cuda-bench: bandwidth of the pack / unpack kernels against a same-size device-to-device
// cudaMemcpy, and of the loopback exchange (algbw, busbw = algbw·(n−1)/n as nccl-tests
// defines them for all-to-all). Writes one JSON object to the file named by argv[1] (stdout
// when absent). Exit 77 without a device. Inputs are built before timing from fixed seeds;
// every configuration is validated byte for byte once before it is timed.
#include <orch/cuda/device_buffer.hpp>
#include <orch/cuda/device_plan.hpp>
#include <orch/cuda/error.hpp>
#include <orch/cuda/kernels.hpp>
#include <orch/cuda/loopback.hpp>
#include <orch/cuda/version.hpp>
#include <orch/exchange.hpp>
#include <orch/layout.hpp>
#include <orch/plan.hpp>
#include <orch/schedule.hpp>
#include <orch/topology.hpp>

#include <cuda_runtime_api.h>

#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <exception>
#include <random>
#include <stdexcept>
#include <string>
#include <vector>

using orch::bytes_t;
using orch::rank_t;
namespace oc = orch::cuda;

namespace {

constexpr int repetitions = 21;

std::int64_t draw(std::mt19937_64& rng, std::int64_t lo, std::int64_t hi) {
  return lo + static_cast<std::int64_t>(rng() % static_cast<std::uint64_t>(hi - lo + 1));
}

// Median milliseconds of `repetitions` runs of `body` on `stream` (one warm-up run first).
template <class Body>
double median_ms(cudaStream_t stream, Body body) {
  cudaEvent_t start = nullptr;
  cudaEvent_t stop = nullptr;
  ORCH_CUDA_CHECK(cudaEventCreate(&start));
  ORCH_CUDA_CHECK(cudaEventCreate(&stop));
  body();
  ORCH_CUDA_CHECK(cudaStreamSynchronize(stream));
  std::vector<double> ms;
  for (int i = 0; i < repetitions; ++i) {
    ORCH_CUDA_CHECK(cudaEventRecord(start, stream));
    body();
    ORCH_CUDA_CHECK(cudaEventRecord(stop, stream));
    ORCH_CUDA_CHECK(cudaEventSynchronize(stop));
    float t = 0;
    ORCH_CUDA_CHECK(cudaEventElapsedTime(&t, start, stop));
    ms.push_back(static_cast<double>(t));
  }
  ORCH_CUDA_CHECK(cudaEventDestroy(start));
  ORCH_CUDA_CHECK(cudaEventDestroy(stop));
  std::sort(ms.begin(), ms.end());
  return ms[ms.size() / 2];
}

std::vector<std::byte> to_host(const void* d, bytes_t n) {
  std::vector<std::byte> out(static_cast<std::size_t>(n));
  ORCH_CUDA_CHECK(cudaDeviceSynchronize());
  ORCH_CUDA_CHECK(cudaMemcpy(out.data(), d, out.size(), cudaMemcpyDeviceToHost));
  return out;
}

// One rank, `items` items of [lo, hi] bytes moved from item order to a shuffled order.
orch::exchange_plan shuffle_plan(std::uint64_t seed, bytes_t total, bytes_t lo, bytes_t hi) {
  std::mt19937_64 rng(seed);
  std::vector<bytes_t> bytes;
  bytes_t sum = 0;
  while (sum < total) {
    bytes.push_back(draw(rng, lo, hi));
    sum += bytes.back();
  }
  const std::vector<rank_t> ranks(bytes.size(), 0);
  std::vector<orch::index_t> slot(bytes.size());
  for (std::size_t i = 0; i < slot.size(); ++i) {
    slot[i] = static_cast<orch::index_t>(i);
  }
  std::shuffle(slot.begin(), slot.end(), rng);
  const auto from = orch::layout::from_assignment(ranks, 1);
  const auto to = orch::layout::from_placements(1, ranks, slot);
  return orch::make_plan(from, to, bytes);
}

std::string pack_case(const char* name, bytes_t lo, bytes_t hi, bytes_t total,
                      cudaStream_t stream) {
  const auto plan = shuffle_plan(static_cast<std::uint64_t>(lo * 31 + hi), total, lo, hi);
  const auto view = plan.view(0);
  const bytes_t n = view.source_bytes;
  oc::device_buffer src(n);
  oc::device_buffer dst(n);
  std::vector<std::byte> host(static_cast<std::size_t>(n));
  std::mt19937_64 rng(7);
  for (auto& b : host) {
    b = static_cast<std::byte>(rng() & 0xFFU);
  }
  ORCH_CUDA_CHECK(cudaMemcpy(src.data(), host.data(), host.size(), cudaMemcpyHostToDevice));
  oc::device_plan dplan;
  dplan.upload(view, plan.hash(), stream);
  // Validate once: pack on the GPU equals orch::pack on the host.
  oc::pack(dplan, src.data(), dst.data(), stream);
  std::vector<std::byte> want(host.size());
  orch::pack(view, host, want);
  if (to_host(dst.data(), n) != want) {
    throw std::runtime_error(std::string("pack result differs from orch::pack in ") + name);
  }
  const double pack_ms =
      median_ms(stream, [&] { oc::pack(dplan, src.data(), dst.data(), stream); });
  const double unpack_ms =
      median_ms(stream, [&] { oc::unpack(dplan, src.data(), dst.data(), stream); });
  const double memcpy_ms = median_ms(stream, [&] {
    ORCH_CUDA_CHECK(cudaMemcpyAsync(dst.data(), src.data(), static_cast<std::size_t>(n),
                                    cudaMemcpyDeviceToDevice, stream));
  });
  const auto gbps = [n](double ms) { return static_cast<double>(n) / (ms * 1e-3) / 1e9; };
  char line[512];
  std::snprintf(line, sizeof line,
                "{\"case\": \"%s\", \"item_bytes\": [%lld, %lld], \"items\": %zu, \"bytes\": %lld, "
                "\"pack_GBps\": %.1f, \"unpack_GBps\": %.1f, \"memcpy_GBps\": %.1f, "
                "\"pack_vs_memcpy\": %.3f, \"unpack_vs_memcpy\": %.3f}",
                name, static_cast<long long>(lo), static_cast<long long>(hi),
                view.send_items.size(), static_cast<long long>(n), gbps(pack_ms), gbps(unpack_ms),
                gbps(memcpy_ms), memcpy_ms / pack_ms, memcpy_ms / unpack_ms);
  std::printf("%s\n", line);
  return line;
}

std::string loopback_case(rank_t ranks, rank_t per_node, bytes_t per_rank, cudaStream_t stream) {
  std::mt19937_64 rng(static_cast<std::uint64_t>(ranks * 1000 + per_node));
  std::vector<bytes_t> bytes;
  std::vector<rank_t> from_rank;
  std::vector<rank_t> to_rank;
  for (rank_t r = 0; r < ranks; ++r) {
    bytes_t sum = 0;
    while (sum < per_rank) {
      bytes.push_back(draw(rng, 1024, 256 * 1024));
      sum += bytes.back();
      from_rank.push_back(r);
      to_rank.push_back(static_cast<rank_t>(draw(rng, 0, ranks - 1)));
    }
  }
  const auto plan = orch::make_plan(orch::layout::from_assignment(from_rank, ranks),
                                    orch::layout::from_assignment(to_rank, ranks), bytes);
  const auto sched = orch::make_schedule(plan, orch::topology::uniform(ranks, per_node));
  std::vector<oc::device_buffer> src;
  std::vector<oc::device_buffer> dst;
  std::vector<const void*> src_ptr;
  std::vector<void*> dst_ptr;
  for (rank_t r = 0; r < ranks; ++r) {
    src.emplace_back(plan.source_bytes(r) + 1);
    dst.emplace_back(plan.destination_bytes(r) + 1);
    ORCH_CUDA_CHECK(
        cudaMemset(src.back().data(), r + 1, static_cast<std::size_t>(plan.source_bytes(r))));
    src_ptr.push_back(src.back().data());
    dst_ptr.push_back(dst.back().data());
  }
  oc::loopback lb(ranks);
  // Validate rank 0's destination once against the reference executor.
  lb.exchange(plan, src_ptr, dst_ptr, stream);
  orch::rank_buffers host(static_cast<std::size_t>(ranks));
  for (rank_t r = 0; r < ranks; ++r) {
    host[static_cast<std::size_t>(r)].assign(static_cast<std::size_t>(plan.source_bytes(r)),
                                             static_cast<std::byte>(r + 1));
  }
  if (to_host(dst_ptr[0], plan.destination_bytes(0)) != orch::execute(plan, host)[0]) {
    throw std::runtime_error("loopback result differs from the reference executor");
  }
  const double flat_ms = median_ms(stream, [&] { lb.exchange(plan, src_ptr, dst_ptr, stream); });
  const double node_ms = median_ms(stream, [&] { lb.exchange(sched, src_ptr, dst_ptr, stream); });
  // nccl-tests all-to-all: algbw = bytes a rank sends / time; busbw = algbw · (n − 1) / n.
  // One GPU runs every virtual rank, so the per-rank figure is total / ranks.
  const double per = static_cast<double>(plan.total_bytes()) / ranks;
  const auto algbw = [per](double ms) { return per / (ms * 1e-3) / 1e9; };
  const double factor = static_cast<double>(ranks - 1) / ranks;
  char line[512];
  std::snprintf(line, sizeof line,
                "{\"case\": \"loopback\", \"ranks\": %d, \"ranks_per_node\": %d, "
                "\"total_bytes\": %lld, \"flat_ms\": %.3f, \"flat_algbw_GBps\": %.1f, "
                "\"flat_busbw_GBps\": %.1f, \"nodewise_ms\": %.3f, \"nodewise_algbw_GBps\": %.1f, "
                "\"nodewise_busbw_GBps\": %.1f}",
                ranks, per_node, static_cast<long long>(plan.total_bytes()), flat_ms,
                algbw(flat_ms), algbw(flat_ms) * factor, node_ms, algbw(node_ms),
                algbw(node_ms) * factor);
  std::printf("%s\n", line);
  return line;
}

} // namespace

int main(int argc, char** argv) {
  if (oc::device_count() == 0) {
    std::puts("orch-cuda-bench: no CUDA device visible (exit 77)");
    return 77;
  }
  try {
    cudaStream_t stream = nullptr;
    ORCH_CUDA_CHECK(cudaStreamCreate(&stream));
    cudaDeviceProp prop{};
    ORCH_CUDA_CHECK(cudaGetDeviceProperties(&prop, 0));
    std::vector<std::string> cases;
    constexpr bytes_t total = bytes_t{512} << 20;
    cases.push_back(pack_case("items_4KiB_to_64KiB", 4096, 65536, total, stream));
    cases.push_back(pack_case("items_64KiB_to_1MiB", 65536, 1 << 20, total, stream));
    cases.push_back(pack_case("items_256B_to_4KiB", 256, 4096, total, stream));
    cases.push_back(loopback_case(8, 8, bytes_t{64} << 20, stream));
    cases.push_back(loopback_case(8, 2, bytes_t{64} << 20, stream));
    ORCH_CUDA_CHECK(cudaStreamDestroy(stream));
    std::string json = "{\"device\": \"" + std::string(prop.name) + "\", \"cases\": [\n";
    for (std::size_t i = 0; i < cases.size(); ++i) {
      json += "  " + cases[i] + (i + 1 < cases.size() ? ",\n" : "\n");
    }
    json += "]}\n";
    if (argc > 1) {
      std::FILE* f = std::fopen(argv[1], "w");
      if (f == nullptr) {
        std::fprintf(stderr, "orch-cuda-bench: cannot write %s\n", argv[1]);
        return 1;
      }
      std::fputs(json.c_str(), f);
      std::fclose(f);
    } else {
      std::fputs(json.c_str(), stdout);
    }
  } catch (const std::exception& e) {
    std::fprintf(stderr, "orch-cuda-bench: %s\n", e.what());
    return 1;
  }
  return 0;
}
