// SPDX-License-Identifier: Apache-2.0
// Inputs the error catalogue's triggers share across area files (tests/errors/test_*.cpp).
#pragma once

#include <orch/orch.hpp>

#include <cstdint>
#include <span>
#include <vector>

namespace orch_errors {

/// One encoder, 'vision', of field 'image': 4 input units per output token, 2 feature bytes
/// per token.
inline orch::model_description vision_model() {
  orch::model_description m;
  orch::encoder_model v;
  v.name = "vision";
  v.fields = {"image"};
  v.output_divisor = 4;
  v.feature_bytes_per_token = 2;
  m.encoders = {v};
  return m;
}

/// Example 0 on rank 0 with a 16-unit image, example 1 on rank 1 (text 10 and 20).
inline orch::item_table two_ranks_table() {
  orch::item_table t;
  const orch::media_spec img{"image", 16, 0};
  t.add_example(0, 0, 10, std::span(&img, 1));
  t.add_example(1, 0, 20);
  return t;
}

/// A batch of one example: 5 text tokens, then a 16-unit image at position 0. Its buffer:
/// 7 header words, the field name (byte count 5, one word), then text [9], media count [10],
/// field [11], length [12], position [13] and the checksum [14].
inline orch::local_batch image_batch() {
  orch::local_batch batch;
  const orch::media_spec img{"image", 16, 0};
  batch.add(5, std::span(&img, 1));
  return batch;
}

/// `b` with its checksum recomputed: an edit the checksum cannot catch, for the checks after it.
inline std::vector<std::int64_t> resealed(std::vector<std::int64_t> b) {
  b.back() = orch::local_batch::checksum(std::span<const std::int64_t>(b).first(b.size() - 1));
  return b;
}

/// append_metadata of one rank's buffer into an empty table.
inline void append_one(const std::vector<std::int64_t>& b) {
  const std::vector<std::vector<std::int64_t>> buffers{b};
  orch::item_table t;
  orch::append_metadata(t, std::span<const std::vector<std::int64_t>>(buffers));
}

} // namespace orch_errors
