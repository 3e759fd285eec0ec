// SPDX-License-Identifier: Apache-2.0
/// The description of a multimodal model that the orchestrator balances: encoders and the LLM.
#pragma once

#include <orch/config.hpp>
#include <orch/cost.hpp>
#include <orch/detail/checked.hpp>
#include <orch/types.hpp>

#include <cstddef>
#include <string>
#include <vector>

namespace orch {

/// One encoder phase (a ViT, a Whisper-style audio encoder): it consumes the media items of
/// its fields, one forward per item, and emits `output_tokens(l)` feature tokens per item.
struct encoder_model {
  std::string name;                ///< phase name in metrics and plans ("vision", "audio")
  std::vector<std::string> fields; ///< media fields it consumes ("image", "video"; "audio")
  attention_cost cost;             ///< cost of one media item of input length l
  /// Output tokens of an item of input length l: ceil(l / output_divisor) + output_extra
  /// (a 2×2 patch merge divides by 4; audio pooling by 2; extra for begin/end markers).
  length_t output_divisor = 1;
  length_t output_extra = 0;
  /// Largest output an item may have (0: no limit); larger items are rejected by name.
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
  attention_cost cost;              ///< cost of a sequence of l tokens
  bytes_t text_bytes_per_token = 8; ///< bytes per text token moved owner → LLM (id + label)
};

/// Encoders and LLM. Every media field is consumed by exactly one encoder.
struct model_description {
  std::vector<encoder_model> encoders;
  llm_model llm;

  /// Index of the encoder consuming `field`, or -1 when no encoder does.
  [[nodiscard]] int encoder_of_field(const std::string& field) const noexcept {
    for (std::size_t e = 0; e < encoders.size(); ++e) {
      for (const auto& f : encoders[e].fields) {
        if (f == field) {
          return static_cast<int>(e);
        }
      }
    }
    return -1;
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
        if (f == "text") {
          throw_invalid_argument("model: encoder '", enc.name,
                                 "' claims field 'text', which the LLM consumes");
        }
        const int owner = encoder_of_field(f);
        if (owner != static_cast<int>(e)) {
          throw_invalid_argument("model: field '", f, "' is consumed by encoders '",
                                 encoders[static_cast<std::size_t>(owner)].name, "' and '",
                                 enc.name, "'");
        }
        std::size_t count = 0;
        for (const auto& g : enc.fields) {
          count += g == f ? 1U : 0U;
        }
        if (count > 1) {
          throw_invalid_argument("model: encoder '", enc.name, "' lists field '", f, "' twice");
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
