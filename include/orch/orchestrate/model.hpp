// SPDX-License-Identifier: Apache-2.0
/// The description of a multimodal model that the orchestrator balances: encoders and the LLM.
#pragma once

#include <orch/config.hpp>
#include <orch/cost.hpp>
#include <orch/detail/primitives/checked.hpp>
#include <orch/types.hpp>

#include <cstddef>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

namespace orch {

/// A media field an encoder consumes ("image", "video", "audio"), and how long an item of it
/// may be in one forward of the encoder.
///
/// Chunking: an item longer than `chunk_length` input units is cut into ceil(l / chunk_length)
/// consecutive chunks of `chunk_length` units (the last one shorter): a 10-minute recording at
/// 100 frames/s with a 30-s window (3000 frames) is 20 chunks that the encoder processes
/// independently, so orchestrate balances each chunk as its own phase item. 0: never cut.
struct media_field {
  std::string name;
  length_t chunk_length = 0;

  media_field() = default;
  // Implicit on purpose: `fields = {"image", {"audio", 3000}}` reads as the model it describes.
  media_field(std::string field, length_t chunk = 0) // NOLINT(google-explicit-constructor)
      : name(std::move(field)), chunk_length(chunk) {}
  media_field(const char* field, length_t chunk = 0) // NOLINT(google-explicit-constructor)
      : name(field), chunk_length(chunk) {}

  /// Member-wise equality.
  friend bool operator==(const media_field&, const media_field&) = default;
};

/// One encoder phase (a ViT, a Whisper-style audio encoder): it consumes the media items of
/// its fields, one forward per item (per chunk of a chunked field), and emits
/// `output_tokens(l)` feature tokens per forward of input length l.
///
/// Every field has a default, so models read as designated initialisers:
/// `{.name = "audio", .fields = {{"audio", 3000}}, .cost = {.linear = 9, .quadratic = 1},
///   .output_divisor = 4, .output_extra = 2, .input_bytes_per_unit = 256,
///   .feature_bytes_per_token = 7168}`.
struct encoder_model {
  std::string name;                ///< phase name in metrics and plans ("vision", "audio")
  std::vector<media_field> fields; ///< media fields it consumes ("image", "video"; "audio")
  attention_cost cost{};           ///< cost of one forward (an item or a chunk) of length l
  /// Output tokens of a forward of input length l: ceil(l / output_divisor) + output_extra
  /// (a 2×2 patch merge divides by 4; audio pooling by 2; extra for begin/end markers). A
  /// chunked item emits this per chunk, in chunk order: each window carries its own markers.
  length_t output_divisor = 1;
  length_t output_extra = 0;
  /// Largest output one forward may have (0: no limit); larger ones are rejected by name.
  length_t max_output_tokens = 0;
  bytes_t input_bytes_per_unit = 0;    ///< raw input bytes per input unit (a patch, a frame)
  bytes_t feature_bytes_per_token = 0; ///< bytes of one output feature token (hidden × dtype)

  /// ceil(l / output_divisor) + output_extra. Throws: orch::invalid_argument (negative l),
  /// orch::overflow.
  [[nodiscard]] length_t output_tokens(length_t input_length) const {
    if (input_length < 0) {
      throw_invalid_argument("encoder '", name, "': negative input length ", input_length);
    }
    return detail::checked_add(detail::ceil_div(input_length, output_divisor), output_extra,
                               "encoder_model::output_tokens");
  }
};

/// The LLM backbone: one sequence per example, text tokens plus every encoder's output tokens.
struct llm_model {
  std::string name = "llm";
  attention_cost cost{};            ///< cost of a sequence of l tokens
  bytes_t text_bytes_per_token = 8; ///< bytes per text token moved owner → LLM (id + label)
};

/// Encoders and LLM. Every media field is consumed by exactly one encoder. Ready-made models
/// are in <orch/orchestrate/model_presets.hpp>.
struct model_description {
  std::vector<encoder_model> encoders;
  llm_model llm{};

  /// Index of the encoder consuming `field`, or -1 when no encoder does.
  /// Complexity: O(fields of all encoders).
  [[nodiscard]] int encoder_of_field(std::string_view field) const noexcept {
    for (std::size_t e = 0; e < encoders.size(); ++e) {
      for (const auto& f : encoders[e].fields) {
        if (f.name == field) {
          return static_cast<int>(e);
        }
      }
    }
    return -1;
  }

  /// The field named `field` (its chunk length), or nullptr when no encoder consumes it.
  [[nodiscard]] const media_field* find_field(std::string_view field) const noexcept {
    for (const auto& enc : encoders) {
      for (const auto& f : enc.fields) {
        if (f.name == field) {
          return &f;
        }
      }
    }
    return nullptr;
  }

  /// Every media field the model consumes, in encoder order, as "'image', 'video', 'audio'"
  /// (for error messages), or "none" for a text-only model.
  [[nodiscard]] std::string field_list() const {
    std::string out;
    for (const auto& enc : encoders) {
      for (const auto& f : enc.fields) {
        out += (out.empty() ? "'" : ", '") + f.name + "'";
      }
    }
    return out.empty() ? std::string("none") : out;
  }

  /// Checks names, coefficients and that no field is claimed twice.
  /// Throws: orch::invalid_argument naming the encoder and the offending value.
  void validate() const {
    for (std::size_t e = 0; e < encoders.size(); ++e) {
      const auto& enc = encoders[e];
      if (enc.name.empty()) {
        throw_invalid_argument("model: encoder ", e, " has no name");
      }
      if (enc.name == llm.name) {
        throw_invalid_argument("model: encoder '", enc.name, "' has the LLM's phase name");
      }
      for (std::size_t o = 0; o < e; ++o) {
        if (encoders[o].name == enc.name) {
          throw_invalid_argument("model: two encoders are named '", enc.name, "'");
        }
      }
      if (enc.fields.empty()) {
        throw_invalid_argument("model: encoder '", enc.name, "' consumes no field");
      }
      if (enc.output_divisor <= 0) {
        throw_invalid_argument("model: encoder '", enc.name, "' has output_divisor ",
                               enc.output_divisor, " (must be positive)");
      }
      if (enc.output_extra < 0 || enc.max_output_tokens < 0 || enc.input_bytes_per_unit < 0 ||
          enc.feature_bytes_per_token < 0 || enc.cost.linear < 0 || enc.cost.quadratic < 0 ||
          enc.cost.per_item < 0) {
        throw_invalid_argument("model: encoder '", enc.name,
                               "' has a negative coefficient, byte size or limit");
      }
      for (const auto& f : enc.fields) {
        if (f.name.empty()) {
          throw_invalid_argument("model: encoder '", enc.name, "' has a field with no name");
        }
        if (f.name == "text") {
          throw_invalid_argument("model: encoder '", enc.name,
                                 "' claims field 'text', which the LLM consumes");
        }
        if (f.chunk_length < 0) {
          throw_invalid_argument("model: encoder '", enc.name, "' field '", f.name,
                                 "' has chunk_length ", f.chunk_length,
                                 " (must be positive, or 0 for no chunking)");
        }
        const int owner = encoder_of_field(f.name);
        if (owner != static_cast<int>(e)) {
          throw_invalid_argument("model: field '", f.name, "' is consumed by encoders '",
                                 encoders[static_cast<std::size_t>(owner)].name, "' and '",
                                 enc.name, "'");
        }
        std::size_t count = 0;
        for (const auto& g : enc.fields) {
          count += g.name == f.name ? 1U : 0U;
        }
        if (count > 1) {
          throw_invalid_argument("model: encoder '", enc.name, "' lists field '", f.name,
                                 "' twice");
        }
      }
    }
    if (llm.text_bytes_per_token < 0 || llm.cost.linear < 0 || llm.cost.quadratic < 0 ||
        llm.cost.per_item < 0) {
      throw_invalid_argument("model: LLM '", llm.name, "' has a negative coefficient or byte size");
    }
  }
};

} // namespace orch
