// SPDX-License-Identifier: Apache-2.0
// The copy kernel behind pack and unpack: a grid-stride loop of warps over the tiles of a copy
// program. Tiles are at most tile_bytes (a multiple of 16) long, so a huge item spreads over
// many warps and a tiny one costs one warp-iteration.
#include <orch/cuda/error.hpp>
#include <orch/cuda/kernels.hpp>

#include <cuda_runtime.h>

#include <cstdint>

namespace orch::cuda {

namespace {

constexpr int warp_size = 32;
constexpr int block_threads = 256;
constexpr int max_blocks = 4096; // enough to fill an H200 (132 SMs × 8+ blocks); grid-stride after

// Copies n elements of T, lane-strided, four loads in flight per lane before the stores.
template <class T>
__device__ void copy_words(T* __restrict__ dst, const T* __restrict__ src, std::int64_t n,
                           int lane) {
  std::int64_t i = lane;
  for (; i + 3 * warp_size < n; i += 4 * warp_size) {
    const T a = src[i];
    const T b = src[i + warp_size];
    const T c = src[i + 2 * warp_size];
    const T d = src[i + 3 * warp_size];
    dst[i] = a;
    dst[i + warp_size] = b;
    dst[i + 2 * warp_size] = c;
    dst[i + 3 * warp_size] = d;
  }
  for (; i < n; i += warp_size) {
    dst[i] = src[i];
  }
}

// Copies n bytes with the widest word W (16 or 4 bytes) that both pointers can share: bytes
// up to the first W-aligned address, W-words, then the tail bytes.
template <class T>
__device__ void copy_aligned(unsigned char* __restrict__ dst, const unsigned char* __restrict__ src,
                             std::int64_t n, int lane) {
  constexpr auto w = static_cast<std::int64_t>(sizeof(T));
  const auto misalign = static_cast<std::int64_t>(reinterpret_cast<std::uintptr_t>(src) % w);
  std::int64_t head = misalign == 0 ? 0 : w - misalign;
  head = head < n ? head : n;
  for (std::int64_t i = lane; i < head; i += warp_size) {
    dst[i] = src[i];
  }
  const std::int64_t words = (n - head) / w;
  copy_words(reinterpret_cast<T*>(dst + head), reinterpret_cast<const T*>(src + head), words, lane);
  for (std::int64_t i = head + words * w + lane; i < n; i += warp_size) {
    dst[i] = src[i];
  }
}

__device__ void warp_copy(unsigned char* __restrict__ dst, const unsigned char* __restrict__ src,
                          std::int64_t n, int lane) {
  const auto gap = reinterpret_cast<std::uintptr_t>(src) ^ reinterpret_cast<std::uintptr_t>(dst);
  if (gap % 16 == 0) {
    copy_aligned<uint4>(dst, src, n, lane);
  } else if (gap % 4 == 0) {
    copy_aligned<unsigned int>(dst, src, n, lane);
  } else {
    copy_words(dst, src, n, lane);
  }
}

__global__ void __launch_bounds__(block_threads)
    copy_tiles(copy_program_ref program, const unsigned char* __restrict__ src,
               unsigned char* __restrict__ dst) {
  const int lane = static_cast<int>(threadIdx.x) % warp_size;
  const std::int64_t warps_per_block = block_threads / warp_size;
  const std::int64_t first =
      static_cast<std::int64_t>(blockIdx.x) * warps_per_block + threadIdx.x / warp_size;
  const std::int64_t stride = static_cast<std::int64_t>(gridDim.x) * warps_per_block;
  for (std::int64_t t = first; t < program.tiles; t += stride) {
    const tile_copy c = tile_at(program, t);
    warp_copy(dst + c.dst, src + c.src, c.bytes, lane);
  }
}

} // namespace

void launch_copy(const copy_program_ref& program, const void* d_src, void* d_dst,
                 cudaStream_t stream) {
  if (program.tiles <= 0) {
    return;
  }
  const std::int64_t warps_per_block = block_threads / warp_size;
  const std::int64_t wanted = (program.tiles + warps_per_block - 1) / warps_per_block;
  const auto blocks = static_cast<unsigned int>(wanted < max_blocks ? wanted : max_blocks);
  copy_tiles<<<blocks, block_threads, 0, stream>>>(
      program, static_cast<const unsigned char*>(d_src), static_cast<unsigned char*>(d_dst));
  ORCH_CUDA_CHECK(cudaGetLastError());
}

void pack(const device_plan& plan, const void* d_source, void* d_send, cudaStream_t stream) {
  launch_copy(plan.pack_program(), d_source, d_send, stream);
}

void unpack(const device_plan& plan, const void* d_recv, void* d_destination, cudaStream_t stream) {
  launch_copy(plan.unpack_program(), d_recv, d_destination, stream);
}

} // namespace orch::cuda
