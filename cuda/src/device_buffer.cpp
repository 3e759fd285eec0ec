// SPDX-License-Identifier: Apache-2.0
#include <orch/config.hpp>
#include <orch/cuda/device_buffer.hpp>
#include <orch/cuda/error.hpp>

#include <cuda_runtime_api.h>

#include <cstddef>
#include <functional>
#include <utility>

namespace orch::cuda {

namespace {

void check_size(bytes_t bytes, const char* where) {
  if (bytes < 0) {
    throw_invalid_argument(where, ": negative size ", bytes);
  }
}

// The wait of the plain reserve(): everything queued on the device (no deadline).
void synchronize_device() {
  ORCH_CUDA_CHECK(cudaDeviceSynchronize());
}

} // namespace

device_buffer::~device_buffer() {
  if (data_ != nullptr) {
    static_cast<void>(cudaFree(data_)); // destructors never throw
  }
}

device_buffer::device_buffer(device_buffer&& other) noexcept
    : data_(std::exchange(other.data_, nullptr)), size_(std::exchange(other.size_, 0)) {}

device_buffer& device_buffer::operator=(device_buffer&& other) noexcept {
  if (this != &other) {
    if (data_ != nullptr) {
      static_cast<void>(cudaFree(data_));
    }
    data_ = std::exchange(other.data_, nullptr);
    size_ = std::exchange(other.size_, 0);
  }
  return *this;
}

void device_buffer::reserve(bytes_t bytes) {
  reserve(bytes, synchronize_device);
}

void device_buffer::reserve(bytes_t bytes, const std::function<void()>& wait_unused) {
  check_size(bytes, "orch::cuda::device_buffer::reserve");
  if (bytes <= size_) {
    return;
  }
  if (data_ != nullptr) {
    wait_unused(); // queued work may still use the old memory
    ORCH_CUDA_CHECK(cudaFree(data_));
    data_ = nullptr;
    size_ = 0;
  }
  ORCH_CUDA_CHECK(cudaMalloc(&data_, static_cast<std::size_t>(bytes)));
  size_ = bytes;
}

pinned_buffer::~pinned_buffer() {
  if (data_ != nullptr) {
    static_cast<void>(cudaFreeHost(data_));
  }
}

pinned_buffer::pinned_buffer(pinned_buffer&& other) noexcept
    : data_(std::exchange(other.data_, nullptr)), size_(std::exchange(other.size_, 0)) {}

pinned_buffer& pinned_buffer::operator=(pinned_buffer&& other) noexcept {
  if (this != &other) {
    if (data_ != nullptr) {
      static_cast<void>(cudaFreeHost(data_));
    }
    data_ = std::exchange(other.data_, nullptr);
    size_ = std::exchange(other.size_, 0);
  }
  return *this;
}

void pinned_buffer::reserve(bytes_t bytes) {
  reserve(bytes, synchronize_device);
}

void pinned_buffer::reserve(bytes_t bytes, const std::function<void()>& wait_unused) {
  check_size(bytes, "orch::cuda::pinned_buffer::reserve");
  if (bytes <= size_) {
    return;
  }
  if (data_ != nullptr) {
    wait_unused(); // queued copies may still read the old memory
    ORCH_CUDA_CHECK(cudaFreeHost(data_));
    data_ = nullptr;
    size_ = 0;
  }
  ORCH_CUDA_CHECK(cudaMallocHost(&data_, static_cast<std::size_t>(bytes)));
  size_ = bytes;
}

} // namespace orch::cuda
