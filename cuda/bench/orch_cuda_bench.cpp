// SPDX-License-Identifier: Apache-2.0
// orch-cuda-bench: bandwidth of pack / unpack by both copy engines (cub::DeviceMemcpy::Batched
// and the tile kernel) against a same-size device-to-device cudaMemcpy, and of the loopback
// exchange (algbw, busbw = algbw·(n−1)/n as nccl-tests defines them for all-to-all). Writes
// one JSON object to the file named by argv[1] (stdout when absent); the last line printed
// says which engine was faster in how many cases. Exit 77 without a device. Inputs are built
// and uploaded before timing from fixed seeds; every configuration is validated byte for byte
// once before it is timed; the timed window holds device work only (no host planning, no
// upload).
#include <orch/cuda/device_buffer.hpp>
#include <orch/cuda/device_plan.hpp>
#include <orch/cuda/error.hpp>
#include <orch/cuda/kernels.hpp>
#include <orch/cuda/loopback.hpp>
#include <orch/cuda/version.hpp>
#include <orch/exchange/execute.hpp>
#include <orch/exchange/layout.hpp>
#include <orch/exchange/plan.hpp>
#include <orch/exchange/schedule.hpp>
#include <orch/topology.hpp>
#include <orch/transport/copy_list.hpp>
#include <orch/transport/program.hpp>

#include <cuda_runtime_api.h>

#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <exception>
#include <random>
#include <stdexcept>
#include <string>
#include <utility>
#include <vector>

using orch::bytes_t;
using orch::rank_t;
namespace oc = orch::cuda;

namespace {

constexpr int repetitions = 21;

// A benchmark's own precondition (not a measurement): stop with a message naming the case.
#define REQUIRE_CASE(cond, name)                                                                   \
  do {                                                                                             \
    if (!(cond)) {                                                                                 \
      throw std::runtime_error(std::string("precondition failed in ") + (name) + ": " #cond);      \
    }                                                                                              \
  } while (false)

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

struct pack_result {
  std::string json;
  double cub_over_tiles = 0; // > 1: CUB faster (median time of tiles / median time of CUB)
};

pack_result pack_case(const char* name, bytes_t lo, bytes_t hi, bytes_t total,
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
  // On one rank the receive buffer is already in destination order (unpack is the identity),
  // so the unpack side is timed on the pack's copies reversed: a scatter of the same items
  // (what unpack does on a rank that receives from many peers).
  auto program = orch::transport::make_flat_program(plan, 0);
  REQUIRE_CASE(!program.pack.identity, name);
  program.unpack = program.pack;
  std::swap(program.unpack.src_offsets, program.unpack.dst_offsets);
  std::swap(program.unpack.src_bytes, program.unpack.dst_bytes);
  program.unpack.identity = false;
  std::vector<std::byte> want_pack(host.size());
  orch::transport::run_copies(program.pack, host, want_pack);
  std::vector<std::byte> want_pack_ref(host.size());
  orch::pack(view, host, want_pack_ref);
  REQUIRE_CASE(want_pack == want_pack_ref, name);
  std::vector<std::byte> want_unpack(host.size());
  orch::transport::run_copies(program.unpack, host, want_unpack);
  oc::device_plan dplan;
  dplan.upload(std::move(program), stream);
  // Validate once per engine: pack on the GPU equals orch::pack, unpack (the scatter) equals
  // the core's CPU copies.
  for (const auto engine : {oc::copy_engine::cub_batched, oc::copy_engine::tiles}) {
    const char* e = engine == oc::copy_engine::tiles ? "tiles" : "cub";
    ORCH_CUDA_CHECK(cudaMemset(dst.data(), 0, static_cast<std::size_t>(n)));
    oc::pack(dplan, src.data(), dst.data(), stream, engine);
    if (to_host(dst.data(), n) != want_pack) {
      throw std::runtime_error(std::string("pack (") + e + ") differs from orch::pack in " + name);
    }
    ORCH_CUDA_CHECK(cudaMemset(dst.data(), 0, static_cast<std::size_t>(n)));
    oc::unpack(dplan, src.data(), dst.data(), stream, engine);
    if (to_host(dst.data(), n) != want_unpack) {
      throw std::runtime_error(std::string("unpack (") + e + ") differs from the CPU scatter in " +
                               name);
    }
  }
  const auto time = [&](oc::copy_engine engine, bool packing) {
    return median_ms(stream, [&] {
      if (packing) {
        oc::pack(dplan, src.data(), dst.data(), stream, engine);
      } else {
        oc::unpack(dplan, src.data(), dst.data(), stream, engine);
      }
    });
  };
  const double cub_pack = time(oc::copy_engine::cub_batched, true);
  const double cub_unpack = time(oc::copy_engine::cub_batched, false);
  const double tile_pack = time(oc::copy_engine::tiles, true);
  const double tile_unpack = time(oc::copy_engine::tiles, false);
  const double memcpy_ms = median_ms(stream, [&] {
    ORCH_CUDA_CHECK(cudaMemcpyAsync(dst.data(), src.data(), static_cast<std::size_t>(n),
                                    cudaMemcpyDeviceToDevice, stream));
  });
  const auto gbps = [n](double ms) { return static_cast<double>(n) / (ms * 1e-3) / 1e9; };
  char line[1024];
  std::snprintf(line, sizeof line,
                "{\"case\": \"%s\", \"item_bytes\": [%lld, %lld], \"items\": %zu, \"bytes\": %lld, "
                "\"memcpy_GBps\": %.1f, \"cub_pack_GBps\": %.1f, \"cub_unpack_GBps\": %.1f, "
                "\"tiles_pack_GBps\": %.1f, \"tiles_unpack_GBps\": %.1f, "
                "\"cub_pack_vs_memcpy\": %.3f, \"cub_unpack_vs_memcpy\": %.3f, "
                "\"tiles_pack_vs_memcpy\": %.3f, \"tiles_unpack_vs_memcpy\": %.3f, "
                "\"cub_over_tiles\": %.3f}",
                name, static_cast<long long>(lo), static_cast<long long>(hi),
                view.send_items.size(), static_cast<long long>(n), gbps(memcpy_ms), gbps(cub_pack),
                gbps(cub_unpack), gbps(tile_pack), gbps(tile_unpack), memcpy_ms / cub_pack,
                memcpy_ms / cub_unpack, memcpy_ms / tile_pack, memcpy_ms / tile_unpack,
                (tile_pack + tile_unpack) / (cub_pack + cub_unpack));
  std::printf("%s\n", line);
  return {line, (tile_pack + tile_unpack) / (cub_pack + cub_unpack)};
}

// Every rank's destination buffer against the reference executor.
void check_all_ranks(const orch::exchange_plan& plan, const orch::rank_buffers& want,
                     const std::vector<void*>& dst, const char* what) {
  for (rank_t r = 0; r < plan.ranks(); ++r) {
    if (to_host(dst[static_cast<std::size_t>(r)], plan.destination_bytes(r)) !=
        want[static_cast<std::size_t>(r)]) {
      throw std::runtime_error(std::string("loopback ") + what + " result of rank " +
                               std::to_string(r) + " differs from the reference executor");
    }
  }
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
  orch::rank_buffers host(static_cast<std::size_t>(ranks));
  for (rank_t r = 0; r < ranks; ++r) {
    auto& h = host[static_cast<std::size_t>(r)];
    h.resize(static_cast<std::size_t>(plan.source_bytes(r)));
    for (std::size_t b = 0; b < h.size(); ++b) { // differs per rank and per byte
      h[b] = static_cast<std::byte>((b * 131 + static_cast<std::size_t>(r) * 29 + b / 251) & 0xFF);
    }
    src.emplace_back(plan.source_bytes(r) + 1);
    dst.emplace_back(plan.destination_bytes(r) + 1);
    ORCH_CUDA_CHECK(cudaMemcpy(src.back().data(), h.data(), h.size(), cudaMemcpyHostToDevice));
    src_ptr.push_back(src.back().data());
    dst_ptr.push_back(dst.back().data());
  }
  const auto want = orch::execute(plan, host);
  oc::loopback flat(ranks);
  oc::loopback nodewise(ranks);
  // Host planning and uploads happen here, outside every timed window.
  flat.prepare(plan, stream);
  nodewise.prepare(sched, stream);
  flat.run(src_ptr, dst_ptr, stream);
  check_all_ranks(plan, want, dst_ptr, "flat");
  for (auto& d : dst) {
    ORCH_CUDA_CHECK(cudaMemset(d.data(), 0, static_cast<std::size_t>(d.size())));
  }
  nodewise.run(src_ptr, dst_ptr, stream);
  check_all_ranks(plan, want, dst_ptr, "node-wise");
  const double flat_ms = median_ms(stream, [&] { flat.run(src_ptr, dst_ptr, stream); });
  const double node_ms = median_ms(stream, [&] { nodewise.run(src_ptr, dst_ptr, stream); });
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
                "\"nodewise_busbw_GBps\": %.1f, \"validated\": \"flat and node-wise, all ranks\"}",
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
    int cub_wins = 0;
    int pack_cases = 0;
    for (const auto& p : {pack_case("items_4KiB_to_64KiB", 4096, 65536, total, stream),
                          pack_case("items_64KiB_to_1MiB", 65536, 1 << 20, total, stream),
                          pack_case("items_256B_to_4KiB", 256, 4096, total, stream),
                          pack_case("items_1B_to_256B", 1, 256, bytes_t{64} << 20, stream)}) {
      cases.push_back(p.json);
      cub_wins += p.cub_over_tiles >= 1.0 ? 1 : 0;
      ++pack_cases;
    }
    cases.push_back(loopback_case(8, 8, bytes_t{64} << 20, stream));
    cases.push_back(loopback_case(8, 2, bytes_t{64} << 20, stream));
    ORCH_CUDA_CHECK(cudaStreamDestroy(stream));
    std::string json = "{\"device\": \"" + std::string(prop.name) + "\", \"cases\": [\n";
    for (std::size_t i = 0; i < cases.size(); ++i) {
      json += "  " + cases[i] + (i + 1 < cases.size() ? ",\n" : "\n");
    }
    json += "],\n \"cub_faster_cases\": " + std::to_string(cub_wins) +
            ", \"pack_cases\": " + std::to_string(pack_cases) + "}\n";
    std::printf("copy engines: cub::DeviceMemcpy::Batched faster in %d of %d pack cases "
                "(default engine: cub_batched)\n",
                cub_wins, pack_cases);
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
