// SPDX-License-Identifier: Apache-2.0
/// Ready-made model descriptions (three-modality MLLMs at 7B and 72B) and the integer FLOP
/// formulas of docs/model.md that derive cost coefficients from a transformer's shape.
#pragma once

#include <orch/config.hpp>
#include <orch/cost.hpp>
#include <orch/detail/primitives/checked.hpp>
#include <orch/orchestrate/model.hpp>
#include <orch/types.hpp>

#include <array>
#include <cstdint>
#include <string>
#include <string_view>

namespace orch {

/// A dense transformer's shape, for the FLOP formulas below (docs/model.md).
struct transformer_shape {
  std::int64_t layers = 0;
  std::int64_t hidden = 0;          ///< model width d
  std::int64_t attention_width = 0; ///< query heads × head dim (= d for most models)
  std::int64_t kv_width = 0;     ///< key/value heads × head dim (< d with grouped-query attention)
  std::int64_t mlp = 0;          ///< MLP intermediate width
  std::int64_t mlp_matrices = 2; ///< 2 for a GELU MLP, 3 for SwiGLU
  bool causal = false;           ///< causal attention computes half the score matrix
};

/// Forward FLOPs per token of the layer matmuls: 2 · layers · (d·a + 2·d·kv + a·d + m·d·f).
/// Integer, so that every rank derives the same coefficients.
/// Complexity: O(1). Throws: orch::overflow (beyond 2^63 - 1).
[[nodiscard]] inline std::int64_t linear_flops_per_token(const transformer_shape& s) {
  using detail::checked_add;
  using detail::checked_mul;
  const char* what = "linear_flops_per_token";
  const std::int64_t d = s.hidden;
  std::int64_t per_layer = checked_mul(d, s.attention_width, what);
  per_layer = checked_add(per_layer, checked_mul(checked_mul(2, d, what), s.kv_width, what), what);
  per_layer = checked_add(per_layer, checked_mul(s.attention_width, d, what), what);
  per_layer =
      checked_add(per_layer, checked_mul(checked_mul(s.mlp_matrices, d, what), s.mlp, what), what);
  return checked_mul(checked_mul(2, s.layers, what), per_layer, what);
}

/// Forward FLOPs of attention scores and weighted sum per squared sequence length:
/// 4 · layers · a (QKᵀ and A·V, 2·l²·a each), halved for causal attention.
/// Complexity: O(1). Throws: orch::overflow.
[[nodiscard]] inline std::int64_t attention_flops_per_token_squared(const transformer_shape& s) {
  const std::int64_t full = detail::checked_mul(detail::checked_mul(4, s.layers, "attention_flops"),
                                                s.attention_width, "attention_flops");
  return s.causal ? full / 2 : full; // 4·x is even: the half is exact
}

/// FLOPs one cost unit of the presets stands for: costs are forward kFLOPs.
inline constexpr std::int64_t preset_cost_unit_flops = 1000;

/// `flops` in cost units of `unit` FLOPs, rounded to the nearest integer (halves up): how the
/// presets turn the FLOP formulas into cost coefficients; use it for a model of your own.
/// Complexity: O(1). Throws: orch::invalid_argument (flops < 0 or unit ≤ 0), orch::overflow.
[[nodiscard]] inline cost_t flop_units(std::int64_t flops, std::int64_t unit) {
  if (flops < 0 || unit <= 0) {
    throw_invalid_argument("flop_units: need flops ≥ 0 and unit > 0, got ", flops, " and ", unit);
  }
  return detail::checked_add(flops, unit / 2, "flop_units") / unit;
}

namespace detail {

/// The presets' backbones (Qwen2 architecture, as in the OrchMLLM paper's models).
struct preset_backbone {
  std::string_view name;
  transformer_shape shape;
  std::int64_t vocab = 0;
};

inline constexpr std::array<preset_backbone, 2> preset_backbones{{
    {"omni-7b", {28, 3584, 3584, 512, 18944, 3, true}, 152064},
    {"omni-72b", {80, 8192, 8192, 1024, 29568, 3, true}, 152064},
}};

/// The three-modality model around `llm` (docs/model.md derives every coefficient).
[[nodiscard]] inline model_description omni_model(const preset_backbone& llm) {
  constexpr std::int64_t unit = preset_cost_unit_flops;
  const std::int64_t d = llm.shape.hidden;
  const bytes_t feature_bytes = d * 2; // bf16

  // Vision: a Qwen2-VL-style ViT (675M): 32 layers, d 1280, GELU MLP 5120, full attention
  // within an image; 14-px patches (with the 2-frame temporal patch, 3·2·14·14 = 1176 input
  // values); a 2×2 merger MLP (5120 → 5120 → LLM width) per 4 patches.
  const transformer_shape vit{32, 1280, 1280, 1280, 5120, 2, false};
  constexpr std::int64_t patch_values = 3 * 2 * 14 * 14;
  const std::int64_t vit_linear =
      linear_flops_per_token(vit) + 2 * patch_values * 1280 + 2 * (5120 * 5120 + 5120 * d) / 4;
  encoder_model vision{
      .name = "vision",
      // Video cut into groups of at most 4,096 patches (docs/model.md, "Vision").
      .fields = {"image", {"video", 4096}},
      .cost = {.linear = flop_units(vit_linear, unit),
               .quadratic = flop_units(attention_flops_per_token_squared(vit), unit),
               .per_item = 0},
      .output_divisor = 4, // 2×2 merge
      .output_extra = 2,   // vision start / end markers, per forward
      .max_output_tokens = 0,
      .input_bytes_per_unit = patch_values * 2, // bf16 pixels
      .feature_bytes_per_token = feature_bytes,
  };

  // Audio: a Whisper-large-v3-style encoder (635M): 128-bin log-mel frames at 100/s, two
  // convolutions (the second with stride 2) → 50 positions/s, 32 layers, d 1280, GELU MLP
  // 5120, full attention within a 30-s window; then a stride-2 pool and a d → LLM-width
  // projection → 25 LLM tokens/s. Costs are per input frame: positions = frames / 2.
  const transformer_shape whisper{32, 1280, 1280, 1280, 5120, 2, false};
  const std::int64_t audio_linear = linear_flops_per_token(whisper) / 2 + // even: exact
                                    2 * 128 * 3 * 1280 +                  // conv1, per frame
                                    2 * 1280 * 3 * 1280 / 2 +             // conv2, per 2 frames
                                    2 * 1280 * d / 4;                     // projector, per 4 frames
  encoder_model audio{
      .name = "audio",
      // 30-s windows of 3,000 frames: a 10-minute recording is 20 forwards.
      .fields = {{"audio", 3000}},
      .cost = {.linear = flop_units(audio_linear, unit),
               .quadratic = flop_units(attention_flops_per_token_squared(whisper) / 4, unit),
               .per_item = 0},
      .output_divisor = 4,
      .output_extra = 2, // audio start / end markers, per window
      .max_output_tokens = 0,
      .input_bytes_per_unit = 128 * 2, // bf16 mel bins
      .feature_bytes_per_token = feature_bytes,
  };

  // LLM: the backbone's layers plus the LM head (2·d·vocab per token); causal attention.
  model_description m;
  m.encoders = {vision, audio};
  m.llm = {
      .name = "llm",
      .cost = {.linear = flop_units(linear_flops_per_token(llm.shape) + 2 * d * llm.vocab, unit),
               .quadratic = flop_units(attention_flops_per_token_squared(llm.shape), unit),
               .per_item = 0},
      .text_bytes_per_token = 8}; // int32 token id + int32 label
  return m;
}

} // namespace detail

/// Names of the built-in models: "omni-7b" and "omni-72b".
[[nodiscard]] inline std::array<std::string_view, 2> model_preset_names() noexcept {
  return {detail::preset_backbones[0].name, detail::preset_backbones[1].name};
}

/// A built-in three-modality MLLM: a Qwen2-VL-style ViT (675M) over "image" and "video"
/// (video cut into chunks of 4,096 patches), a Whisper-large-style audio encoder (635M) over
/// "audio" (30-s windows of 3,000 frames at 100 frames/s), and a Qwen2-7B- or 72B-shaped
/// LLM; costs in forward kFLOPs, bf16 inputs and features. docs/model.md derives every
/// coefficient and gives its sources.
/// Complexity: O(1). Throws: orch::invalid_argument (an unknown name, listing the presets).
[[nodiscard]] inline model_description model_preset(std::string_view name) {
  for (const auto& b : detail::preset_backbones) {
    if (b.name == name) {
      return detail::omni_model(b);
    }
  }
  throw_invalid_argument("model_preset: unknown model '", name, "' (presets: omni-7b, omni-72b)");
}

} // namespace orch
