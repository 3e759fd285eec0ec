// SPDX-License-Identifier: Apache-2.0
// Helpers of the gpu tests: device copies of host byte buffers and back, with synchronous
// checked copies (tests only; the library itself never synchronises implicitly), and a stream
// held back by the host.
#pragma once

#include <orch/cuda/device_buffer.hpp>
#include <orch/cuda/error.hpp>
#include <orch/types.hpp>

#include <cuda_runtime_api.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <thread>
#include <vector>

namespace orch::test {

/// `n` seeds, or n / 8 (at least 16) with ORCH_GPU_TESTS_QUICK=1 (under compute-sanitizer).
inline std::uint64_t gpu_seeds(std::uint64_t n) {
  const char* quick = std::getenv("ORCH_GPU_TESTS_QUICK");
  return quick != nullptr && quick[0] == '1' ? std::max<std::uint64_t>(n / 8, 16) : n;
}

/// A device buffer of `host.size() + shift` bytes holding `host` at byte `shift` (to put the
/// data at any alignment); pointer() is the start of the data.
class device_bytes {
public:
  explicit device_bytes(const std::vector<std::byte>& host, bytes_t shift = 0)
      : buffer_(static_cast<bytes_t>(host.size()) + shift + 1), shift_(shift),
        size_(static_cast<bytes_t>(host.size())) {
    ORCH_CUDA_CHECK(cudaMemset(buffer_.data(), 0x6B, static_cast<std::size_t>(buffer_.size())));
    if (!host.empty()) {
      ORCH_CUDA_CHECK(cudaMemcpy(pointer(), host.data(), host.size(), cudaMemcpyHostToDevice));
    }
  }
  /// `bytes` bytes of 0x6B at byte `shift`.
  device_bytes(bytes_t bytes, bytes_t shift)
      : device_bytes(std::vector<std::byte>(static_cast<std::size_t>(bytes), std::byte{0x6B}),
                     shift) {}

  [[nodiscard]] std::byte* pointer() const {
    return static_cast<std::byte*>(buffer_.data()) + shift_;
  }
  /// The data back on the host (synchronises the device first).
  [[nodiscard]] std::vector<std::byte> host() const {
    ORCH_CUDA_CHECK(cudaDeviceSynchronize());
    std::vector<std::byte> out(static_cast<std::size_t>(size_));
    if (!out.empty()) {
      ORCH_CUDA_CHECK(cudaMemcpy(out.data(), pointer(), out.size(), cudaMemcpyDeviceToHost));
    }
    return out;
  }

private:
  cuda::device_buffer buffer_;
  bytes_t shift_;
  bytes_t size_;
};

// Blocks a stream until release(): a host function that waits on a flag (the stream cannot
// pass it), standing in for a peer that never joins.
class stream_blocker {
public:
  explicit stream_blocker(cudaStream_t stream) {
    ORCH_CUDA_CHECK(cudaLaunchHostFunc(stream, &stream_blocker::hold, this));
  }
  ~stream_blocker() { // the host function must be done with *this before it goes
    release();
    while (!finished_.load()) {
      std::this_thread::sleep_for(std::chrono::milliseconds(1));
    }
  }
  stream_blocker(const stream_blocker&) = delete;
  stream_blocker& operator=(const stream_blocker&) = delete;
  void release() { open_.store(true); }

private:
  static void hold(void* self) {
    auto* b = static_cast<stream_blocker*>(self);
    while (!b->open_.load()) {
      std::this_thread::sleep_for(std::chrono::milliseconds(1));
    }
    b->finished_.store(true); // last access to *b
  }
  std::atomic<bool> open_{false};
  std::atomic<bool> finished_{false};
};

} // namespace orch::test
