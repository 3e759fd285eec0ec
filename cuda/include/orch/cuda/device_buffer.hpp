// SPDX-License-Identifier: Apache-2.0
/// Owning handles of device memory and pinned host memory (move-only, never throw on
/// destruction).
#pragma once

#include <orch/types.hpp>

#include <functional>

namespace orch::cuda {

/// Device memory from cudaMalloc, grown on demand. Contents are not preserved by reserve().
class device_buffer {
public:
  device_buffer() noexcept = default;
  /// `bytes` bytes of device memory. Throws: cuda_error (allocation failed).
  explicit device_buffer(bytes_t bytes) { reserve(bytes); }
  ~device_buffer();
  device_buffer(device_buffer&& other) noexcept;
  device_buffer& operator=(device_buffer&& other) noexcept;
  device_buffer(const device_buffer&) = delete;
  device_buffer& operator=(const device_buffer&) = delete;

  /// At least `bytes` bytes. Growing synchronises the device first (the old memory may still
  /// be in use by queued work) and then reallocates: call it outside the training step.
  /// Complexity: O(1) when large enough. Throws: cuda_error, orch::invalid_argument (< 0).
  void reserve(bytes_t bytes);
  /// At least `bytes` bytes; growing first calls `wait_unused`, which returns once no queued
  /// work uses the current memory (or throws), instead of an unbounded cudaDeviceSynchronize.
  /// A communicator passes a wait with its deadline that aborts it on a hung peer. (cudaFree
  /// still synchronises the device, but with this buffer's users' work done first it can only
  /// wait for other streams' work, never for a hung exchange of the caller's.)
  /// Complexity: O(1) when large enough. Throws: whatever wait_unused throws, cuda_error,
  /// orch::invalid_argument (< 0).
  void reserve(bytes_t bytes, const std::function<void()>& wait_unused);
  /// The memory (nullptr while empty). Complexity: O(1).
  [[nodiscard]] void* data() const noexcept { return data_; }
  /// Capacity in bytes. Complexity: O(1).
  [[nodiscard]] bytes_t size() const noexcept { return size_; }

private:
  void* data_ = nullptr;
  bytes_t size_ = 0;
};

/// Page-locked host memory from cudaMallocHost (so host → device copies run asynchronously),
/// grown on demand. Contents are not preserved by reserve().
class pinned_buffer {
public:
  pinned_buffer() noexcept = default;
  ~pinned_buffer();
  pinned_buffer(pinned_buffer&& other) noexcept;
  pinned_buffer& operator=(pinned_buffer&& other) noexcept;
  pinned_buffer(const pinned_buffer&) = delete;
  pinned_buffer& operator=(const pinned_buffer&) = delete;

  /// At least `bytes` bytes; growing synchronises the device first (queued copies may still
  /// read the old memory). Throws: cuda_error, orch::invalid_argument (< 0).
  void reserve(bytes_t bytes);
  /// At least `bytes` bytes; growing first calls `wait_unused` (as device_buffer's overload).
  /// Throws: whatever wait_unused throws, cuda_error, orch::invalid_argument (< 0).
  void reserve(bytes_t bytes, const std::function<void()>& wait_unused);
  /// The memory (nullptr while empty). Complexity: O(1).
  [[nodiscard]] void* data() const noexcept { return data_; }
  /// Capacity in bytes. Complexity: O(1).
  [[nodiscard]] bytes_t size() const noexcept { return size_; }

private:
  void* data_ = nullptr;
  bytes_t size_ = 0;
};

} // namespace orch::cuda
