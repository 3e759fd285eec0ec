// SPDX-License-Identifier: Apache-2.0
// The copies behind pack and unpack. The tile kernel: a grid-stride loop of warps over the
// tiles of a copy program; tiles are at most tile_bytes (a multiple of 16) long, so a huge item
// spreads over many warps and a tiny one costs one warp-iteration. The CUB engine: one
// cub::DeviceMemcpy::Batched over the program's entries, with pointer iterators computed from
// the uploaded offset arrays (nothing extra is uploaded).
#include <orch/cuda/error.hpp>
#include <orch/cuda/kernels.hpp>

#include <cub/device/device_memcpy.cuh>
#include <cuda_runtime.h>
#include <thrust/iterator/counting_iterator.h>
#include <thrust/iterator/transform_iterator.h>

#include <cstddef>
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

// Entry e's address in a buffer: base + offsets[e] (offsets are device pointers).
template <class Byte>
struct entry_address {
  Byte* base;
  const std::int64_t* offsets;
  __host__ __device__ Byte* operator()(std::int64_t e) const { return base + offsets[e]; }
};

// Entry e's size in bytes.
struct entry_size {
  const std::int64_t* sizes;
  __host__ __device__ std::int64_t operator()(std::int64_t e) const { return sizes[e]; }
};

// One function for the size query and the run, so that both instantiate the same CUB
// dispatch (the temporary storage it reports belongs to these exact iterator types).
cudaError_t batched(void* d_temp, std::size_t& temp_bytes, const copy_program_ref& program,
                    std::int64_t entries, const unsigned char* d_src, unsigned char* d_dst,
                    cudaStream_t stream) {
  const thrust::counting_iterator<std::int64_t> index(0);
  const auto in = thrust::make_transform_iterator(
      index, entry_address<const unsigned char>{d_src, program.src_offsets});
  const auto out = thrust::make_transform_iterator(
      index, entry_address<unsigned char>{d_dst, program.dst_offsets});
  const auto sizes = thrust::make_transform_iterator(index, entry_size{program.sizes});
  return cub::DeviceMemcpy::Batched(d_temp, temp_bytes, in, out, sizes, entries, stream);
}

} // namespace

namespace detail {

std::size_t batched_copy_temp_bytes(index_t entries) {
  std::size_t bytes = 0;
  if (entries > 0) {
    ORCH_CUDA_CHECK(
        batched(nullptr, bytes, copy_program_ref{}, entries, nullptr, nullptr, nullptr));
  }
  return bytes;
}

} // namespace detail

void launch_batched_copy(const copy_program_ref& program, index_t entries, const void* d_src,
                         void* d_dst, void* d_temp, std::size_t temp_bytes, cudaStream_t stream) {
  if (entries <= 0) {
    return;
  }
  ORCH_CUDA_CHECK(batched(d_temp, temp_bytes, program, entries,
                          static_cast<const unsigned char*>(d_src),
                          static_cast<unsigned char*>(d_dst), stream));
  ORCH_CUDA_CHECK(cudaGetLastError());
}

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

void pack(const device_plan& plan, const void* d_source, void* d_send, cudaStream_t stream,
          copy_engine engine) {
  if (engine == copy_engine::tiles) {
    launch_copy(plan.pack_program(), d_source, d_send, stream);
  } else {
    launch_batched_copy(plan.pack_program(), plan.program().pack.entries(), d_source, d_send,
                        plan.batched_temp(), plan.batched_temp_bytes(), stream);
  }
}

void unpack(const device_plan& plan, const void* d_recv, void* d_destination, cudaStream_t stream,
            copy_engine engine) {
  if (engine == copy_engine::tiles) {
    launch_copy(plan.unpack_program(), d_recv, d_destination, stream);
  } else {
    launch_batched_copy(plan.unpack_program(), plan.program().unpack.entries(), d_recv,
                        d_destination, plan.batched_temp(), plan.batched_temp_bytes(), stream);
  }
}

} // namespace orch::cuda
