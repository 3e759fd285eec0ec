// SPDX-License-Identifier: Apache-2.0
#include <orch/cuda/device_plan.hpp>
#include <orch/cuda/error.hpp>
#include <orch/cuda/kernels.hpp>

#include <cuda_runtime_api.h>

#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <cstring>
#include <utility>
#include <vector>

namespace orch::cuda {

device_plan::~device_plan() {
  if (copied_ != nullptr) {
    // The pinned memory must outlive the copy that reads it; errors are ignored here.
    static_cast<void>(cudaEventSynchronize(copied_));
    static_cast<void>(cudaEventDestroy(copied_));
  }
}

device_plan::device_plan(device_plan&& other) noexcept
    : program_(std::move(other.program_)), pack_(other.pack_), unpack_(other.unpack_),
      words_(other.words_), host_(std::move(other.host_)), device_(std::move(other.device_)),
      temp_(std::move(other.temp_)), copied_(std::exchange(other.copied_, nullptr)) {}

device_plan& device_plan::operator=(device_plan&& other) noexcept {
  if (this != &other) {
    if (copied_ != nullptr) {
      static_cast<void>(cudaEventSynchronize(copied_));
      static_cast<void>(cudaEventDestroy(copied_));
    }
    program_ = std::move(other.program_);
    pack_ = other.pack_;
    unpack_ = other.unpack_;
    words_ = other.words_;
    host_ = std::move(other.host_);
    device_ = std::move(other.device_);
    temp_ = std::move(other.temp_);
    copied_ = std::exchange(other.copied_, nullptr);
  }
  return *this;
}

void device_plan::upload(transport::flat_program program, cudaStream_t stream, bytes_t tile_bytes,
                         const event_wait& wait) {
  // Host work first: a bad tile size throws before anything is waited for or enqueued.
  std::vector<std::int64_t> words;
  const auto pack = make_copy_program(program.pack, tile_bytes);
  const auto unpack = make_copy_program(program.unpack, tile_bytes);
  words.reserve(static_cast<std::size_t>(2 * (pack.entries() + unpack.entries()) + 2 +
                                         pack.tiles() + unpack.tiles()));
  const program_slots pack_slots = append_program(words, pack);
  const program_slots unpack_slots = append_program(words, unpack);
  const auto bytes = static_cast<bytes_t>(words.size() * sizeof(std::int64_t));
  const auto temp_bytes = static_cast<bytes_t>(
      detail::batched_copy_temp_bytes(std::max(pack.entries(), unpack.entries())));

  const auto wait_for = [&wait](cudaEvent_t event, const char* what) {
    if (wait) {
      wait(event, what);
    } else {
      ORCH_CUDA_CHECK(cudaEventSynchronize(event));
    }
  };
  if (copied_ == nullptr) {
    ORCH_CUDA_CHECK(cudaEventCreateWithFlags(&copied_, cudaEventDisableTiming));
  } else {
    // The previous copy still reads host_.
    wait_for(copied_, "orch::cuda::device_plan::upload (the previous upload's copy)");
  }
  // Growing: the kernels queued on `stream` may still read the old device arrays (same-stream
  // rule), and cudaFree / cudaFreeHost synchronise the device — which would block without
  // bound behind a hung peer's work. So before freeing anything, wait for everything queued
  // on the stream so far, through `wait` (bounded); then no free waits on this stream.
  const bool frees = (host_.data() != nullptr && host_.size() < bytes) ||
                     (device_.data() != nullptr && device_.size() < bytes) ||
                     (temp_.data() != nullptr && temp_.size() < temp_bytes);
  if (frees) {
    ORCH_CUDA_CHECK(cudaEventRecord(copied_, stream));
    wait_for(copied_, "orch::cuda::device_plan::upload (growing the device plan)");
  }
  const auto drained = [] {}; // waited for above
  host_.reserve(bytes, drained);
  device_.reserve(bytes, drained);
  temp_.reserve(temp_bytes, drained);
  if (bytes > 0) {
    std::memcpy(host_.data(), words.data(), static_cast<std::size_t>(bytes));
    ORCH_CUDA_CHECK(cudaMemcpyAsync(device_.data(), host_.data(), static_cast<std::size_t>(bytes),
                                    cudaMemcpyHostToDevice, stream));
  }
  ORCH_CUDA_CHECK(cudaEventRecord(copied_, stream));
  program_ = std::move(program);
  pack_ = pack_slots;
  unpack_ = unpack_slots;
  words_ = static_cast<bytes_t>(words.size());
}

copy_program_ref device_plan::pack_program() const noexcept {
  return program_at(static_cast<const std::int64_t*>(device_.data()), pack_);
}

copy_program_ref device_plan::unpack_program() const noexcept {
  return program_at(static_cast<const std::int64_t*>(device_.data()), unpack_);
}

} // namespace orch::cuda
