// SPDX-License-Identifier: Apache-2.0
/// The device-side copy of one rank's plan view: the pack and unpack copy programs in one
/// flat device array, uploaded asynchronously through pinned host memory once per step.
#pragma once

#include <orch/cuda/copy_program.hpp>
#include <orch/cuda/device_buffer.hpp>
#include <orch/plan.hpp>
#include <orch/types.hpp>

#include <cuda_runtime_api.h>

#include <cstdint>

namespace orch::cuda {

/// One rank's view on the GPU. upload() builds the pack and unpack programs on the host,
/// writes them to pinned memory and enqueues one host → device copy on the stream; kernels
/// enqueued later on the same stream see the new arrays. The host copy of the view stays
/// available for the transfers (view()).
///
/// Use one stream per device_plan: a later upload() is ordered after earlier kernels only on
/// the same stream. Move-only; destruction never throws (it waits for its last copy).
class device_plan {
public:
  device_plan() = default;
  ~device_plan();
  device_plan(device_plan&& other) noexcept;
  device_plan& operator=(device_plan&& other) noexcept;
  device_plan(const device_plan&) = delete;
  device_plan& operator=(const device_plan&) = delete;

  /// Uploads `view` (of a plan whose hash() is `plan_hash`) on `stream`. Waits only for the
  /// previous upload's host → device copy (the pinned memory is reused), never for kernels.
  /// Complexity: O(entries + tiles) host work, one asynchronous copy.
  /// Throws: cuda_error, orch::invalid_argument (malformed view, bad tile_bytes).
  void upload(rank_view view, std::uint64_t plan_hash, cudaStream_t stream,
              bytes_t tile_bytes = default_tile_bytes);

  /// The view last uploaded. Complexity: O(1).
  [[nodiscard]] const rank_view& view() const noexcept { return view_; }
  /// The plan hash given to the last upload(). Complexity: O(1).
  [[nodiscard]] std::uint64_t plan_hash() const noexcept { return hash_; }
  /// The pack program (device pointers). Complexity: O(1).
  [[nodiscard]] copy_program_ref pack_program() const noexcept;
  /// The unpack program (device pointers). Complexity: O(1).
  [[nodiscard]] copy_program_ref unpack_program() const noexcept;
  /// Bytes of the uploaded arrays (8 per entry and tile, both programs). Complexity: O(1).
  [[nodiscard]] bytes_t uploaded_bytes() const noexcept { return words_ * 8; }

private:
  rank_view view_;
  std::uint64_t hash_ = 0;
  program_slots pack_;
  program_slots unpack_;
  bytes_t words_ = 0;
  pinned_buffer host_;
  device_buffer device_;
  cudaEvent_t copied_ = nullptr; // recorded after the last host → device copy
};

} // namespace orch::cuda
