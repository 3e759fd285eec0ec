// SPDX-License-Identifier: Apache-2.0
// Pack and unpack kernels on the device, byte for byte against orch::pack / orch::unpack, at
// every alignment of the buffers; the copy kernel on hand-made programs.
#include "gpu_support.hpp"

#include <cuda/cuda_scenarios.hpp>

#include <orch/cuda/copy_program.hpp>
#include <orch/cuda/device_plan.hpp>
#include <orch/cuda/error.hpp>
#include <orch/cuda/kernels.hpp>
#include <orch/exchange/execute.hpp>
#include <orch/exchange/plan.hpp>
#include <orch/transport/program.hpp>

#include <cuda_runtime_api.h>

#include <doctest/doctest.h>

#include <cstddef>
#include <cstdint>
#include <vector>

using orch::bytes_t;
using orch::rank_t;
namespace oc = orch::cuda;

TEST_CASE("gpu kernels: pack and unpack equal the host reference on seeded scenarios") {
  cudaStream_t stream = nullptr;
  ORCH_CUDA_CHECK(cudaStreamCreate(&stream));
  // Both copy engines on every scenario: CUB's batched memcpy (the default) and the tiles.
  const auto engine_of = [](std::uint64_t seed) {
    return seed % 2 == 0 ? oc::copy_engine::cub_batched : oc::copy_engine::tiles;
  };
  oc::device_plan dplan;
  int checked = 0;
  const std::uint64_t seeds = orch::test::gpu_seeds(96);
  for (std::uint64_t seed = 1; seed <= seeds; ++seed) {
    const auto s = orch::test::make_cuda_scenario(seed);
    CAPTURE(seed);
    const auto plan = orch::make_plan(s.from, s.to, s.bytes);
    const auto src = orch::test::make_source(plan);
    for (rank_t r = 0; r < plan.ranks(); ++r) {
      CAPTURE(r);
      const auto v = plan.view(r);
      const auto shift_src = static_cast<bytes_t>((seed + static_cast<std::uint64_t>(r)) % 17);
      const auto shift_dst = static_cast<bytes_t>((seed * 3) % 16);
      CAPTURE(shift_src);
      CAPTURE(shift_dst);
      dplan.upload(orch::transport::make_flat_program(plan, r), stream,
                   seed % 4 == 0 ? 16 : oc::default_tile_bytes);
      const auto& source = src[static_cast<std::size_t>(r)];
      const orch::test::device_bytes d_src(source, shift_src);
      const orch::test::device_bytes d_send(v.source_bytes, shift_dst);
      const auto engine = engine_of(seed + static_cast<std::uint64_t>(r));
      CAPTURE(static_cast<int>(engine));
      oc::pack(dplan, d_src.pointer(), d_send.pointer(), stream, engine);
      ORCH_CUDA_CHECK(cudaStreamSynchronize(stream));
      std::vector<std::byte> want(source.size(), std::byte{0x6B});
      orch::pack(v, source, want);
      CHECK(d_send.host() == want);

      // Unpack what pack produced (any bytes would do; these are realistic).
      std::vector<std::byte> recv(static_cast<std::size_t>(v.destination_bytes));
      for (std::size_t b = 0; b < recv.size(); ++b) {
        recv[b] = static_cast<std::byte>((b * 13 + seed) & 0xFFU);
      }
      const orch::test::device_bytes d_recv(recv, shift_dst);
      const orch::test::device_bytes d_dst(v.destination_bytes, shift_src);
      oc::unpack(dplan, d_recv.pointer(), d_dst.pointer(), stream, engine);
      ORCH_CUDA_CHECK(cudaStreamSynchronize(stream));
      std::vector<std::byte> want_dst(recv.size(), std::byte{0x6B});
      orch::unpack(v, recv, want_dst);
      CHECK(d_dst.host() == want_dst);
      ++checked;
    }
  }
  CHECK(checked >= static_cast<int>(seeds));
  ORCH_CUDA_CHECK(cudaStreamDestroy(stream));
}

TEST_CASE("gpu kernels: both engines at every relative alignment, huge and tiny entries") {
  cudaStream_t stream = nullptr;
  ORCH_CUDA_CHECK(cudaStreamCreate(&stream));
  // Entries whose source and destination offsets differ by 0..31 bytes (16-byte, 4-byte and
  // byte paths), sizes from 0 to 3 MiB + 5.
  const std::vector<bytes_t> sizes{0,   1,   3,   15,   16,   17,   31,     32,           33,
                                   255, 256, 257, 4095, 4096, 4097, 65'537, (3 << 20) + 5};
  std::vector<bytes_t> src_off;
  std::vector<bytes_t> dst_off;
  std::vector<bytes_t> all_sizes;
  bytes_t src_end = 0;
  bytes_t dst_end = 0;
  for (bytes_t gap = 0; gap < 32; ++gap) {
    for (const bytes_t size : sizes) {
      if (size > 100'000 && gap % 8 != 0) {
        continue; // keep the buffers small
      }
      src_off.push_back(src_end + gap % 7);
      dst_off.push_back(dst_end + gap);
      all_sizes.push_back(size);
      src_end = src_off.back() + size;
      dst_end = dst_off.back() + size;
    }
  }
  std::vector<std::byte> src(static_cast<std::size_t>(src_end));
  for (std::size_t b = 0; b < src.size(); ++b) {
    src[b] = static_cast<std::byte>(orch::test::mix64(b) & 0xFFU);
  }
  for (const bytes_t tile : {bytes_t{16}, bytes_t{4096}, oc::default_tile_bytes}) {
    CAPTURE(tile);
    const auto p = oc::make_copy_program(src_off, dst_off, all_sizes, src_end, dst_end, tile);
    std::vector<std::int64_t> words;
    const auto slots = oc::append_program(words, p);
    const orch::test::device_bytes d_words(
        std::vector<std::byte>(reinterpret_cast<const std::byte*>(words.data()),
                               reinterpret_cast<const std::byte*>(words.data() + words.size())));
    const orch::test::device_bytes d_src(src, 0);
    const orch::test::device_bytes d_dst(dst_end, 0);
    const auto program =
        oc::program_at(reinterpret_cast<const std::int64_t*>(d_words.pointer()), slots);
    oc::launch_copy(program, d_src.pointer(), d_dst.pointer(), stream);
    ORCH_CUDA_CHECK(cudaStreamSynchronize(stream));
    std::vector<std::byte> want(static_cast<std::size_t>(dst_end), std::byte{0x6B});
    oc::run_copy_program(oc::program_at(words.data(), slots), src.data(), want.data());
    CHECK(d_dst.host() == want);
    // The same copies through cub::DeviceMemcpy::Batched (it reads only the entry arrays).
    const orch::test::device_bytes d_cub(dst_end, 0);
    const std::size_t temp_bytes = oc::detail::batched_copy_temp_bytes(p.entries());
    const orch::test::device_bytes d_temp(static_cast<bytes_t>(temp_bytes), 0);
    oc::launch_batched_copy(program, p.entries(), d_src.pointer(), d_cub.pointer(),
                            d_temp.pointer(), temp_bytes, stream);
    ORCH_CUDA_CHECK(cudaStreamSynchronize(stream));
    CHECK(d_cub.host() == want);
  }
  ORCH_CUDA_CHECK(cudaStreamDestroy(stream));
}
