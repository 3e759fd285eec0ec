// SPDX-License-Identifier: Apache-2.0
/// The device-side copy of one rank's exchange program (orch/transport/program.hpp): the pack
/// and unpack copy programs in one flat device array, uploaded asynchronously through pinned
/// host memory once per step.
#pragma once

#include <orch/cuda/copy_program.hpp>
#include <orch/cuda/device_buffer.hpp>
#include <orch/transport/program.hpp>
#include <orch/types.hpp>

#include <cuda_runtime_api.h>

#include <cstddef>
#include <cstdint>
#include <functional>

namespace orch::cuda {

/// A wait for a CUDA event: returns once `event` has completed, or throws; `what` names the
/// wait for the error message. An empty event_wait means cudaEventSynchronize (no deadline);
/// a communicator passes its bounded wait (deadline, asynchronous-error polling, abort).
using event_wait = std::function<void(cudaEvent_t event, const char* what)>;

/// One rank's flat exchange program on the GPU. upload() builds the tile arrays of its pack and
/// unpack copy lists on the host, writes them to pinned memory and enqueues one host → device
/// copy on the stream; kernels enqueued later on the same stream see the new arrays. The host
/// program stays available for the transfers and the workspace layout (program()).
///
/// Use one stream per device_plan: a later upload() is ordered after earlier kernels only on
/// the same stream. Both copy engines (copy_engine) can run the same upload: the tile arrays
/// and CUB's temporary storage are both prepared. Move-only; destruction never throws (it
/// waits for its last copy).
class device_plan {
public:
  device_plan() = default;
  ~device_plan();
  device_plan(device_plan&& other) noexcept;
  device_plan& operator=(device_plan&& other) noexcept;
  device_plan(const device_plan&) = delete;
  device_plan& operator=(const device_plan&) = delete;

  /// Uploads `program` on `stream`. Waits, through
  /// `wait`, for the previous upload's host → device copy (the pinned memory is reused) and,
  /// only when the device arrays must grow, for the work queued on `stream` so far (the
  /// kernels that read the old arrays). All host work (building the programs, which may
  /// throw) happens before any wait or copy; on an exception the previous upload stays intact.
  /// Complexity: O(entries + tiles) host work, one asynchronous copy.
  /// Throws: cuda_error, orch::invalid_argument (bad tile_bytes), whatever
  /// `wait` throws (timeout_error, nccl_error from a communicator's wait).
  void upload(transport::flat_program program, cudaStream_t stream,
              bytes_t tile_bytes = default_tile_bytes, const event_wait& wait = {});

  /// The program last uploaded. Complexity: O(1).
  [[nodiscard]] const transport::flat_program& program() const noexcept { return program_; }
  /// Its plan hash. Complexity: O(1).
  [[nodiscard]] std::uint64_t plan_hash() const noexcept { return program_.plan_hash; }
  /// The pack program (device pointers). Complexity: O(1).
  [[nodiscard]] copy_program_ref pack_program() const noexcept;
  /// The unpack program (device pointers). Complexity: O(1).
  [[nodiscard]] copy_program_ref unpack_program() const noexcept;
  /// Bytes of the uploaded arrays (8 per entry and tile, both programs). Complexity: O(1).
  [[nodiscard]] bytes_t uploaded_bytes() const noexcept { return words_ * 8; }
  /// CUB's temporary storage for the batched copies of either program (device memory).
  /// Complexity: O(1).
  [[nodiscard]] void* batched_temp() const noexcept { return temp_.data(); }
  /// Its size in bytes (at least what cub::DeviceMemcpy::Batched asked for the larger
  /// program). Complexity: O(1).
  [[nodiscard]] std::size_t batched_temp_bytes() const noexcept {
    return static_cast<std::size_t>(temp_.size());
  }

private:
  transport::flat_program program_;
  program_slots pack_;
  program_slots unpack_;
  bytes_t words_ = 0;
  pinned_buffer host_;
  device_buffer device_;
  device_buffer temp_;           // CUB's temporary storage
  cudaEvent_t copied_ = nullptr; // recorded after the last host → device copy
};

} // namespace orch::cuda
