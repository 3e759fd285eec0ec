// SPDX-License-Identifier: Apache-2.0
#include "model_presets.hpp"

#include "input_error.hpp"

#include <orch/config.hpp>

#include <cmath>

namespace orch_bench {

void bench_model::validate() const {
  model.validate();
  for (const auto& [f, len] : chunk_input_length) {
    if (len <= 0) {
      orch::throw_invalid_argument("model '", name, "': chunk_input_length of field '", f, "' is ",
                                   len, " (must be positive)");
    }
    if (model.encoder_of_field(f) < 0) {
      orch::throw_invalid_argument("model '", name, "': chunk_input_length names field '", f,
                                   "', which no encoder consumes");
    }
  }
  const auto positive = [&](double v, const char* what) {
    if (!(v > 0.0) || !std::isfinite(v)) {
      orch::throw_invalid_argument("model '", name, "': simulation.", what, " = ", v,
                                   " (must be positive and finite)");
    }
  };
  positive(sim.cost_unit_flops, "cost_unit_flops");
  positive(sim.achieved_flops, "achieved_flops");
  positive(sim.nvlink_bytes_per_s, "nvlink_bytes_per_s");
  positive(sim.network_bytes_per_s, "network_bytes_per_s");
  if (!(sim.backward_factor >= 0.0) || !std::isfinite(sim.backward_factor)) {
    orch::throw_invalid_argument("model '", name,
                                 "': simulation.backward_factor = ", sim.backward_factor,
                                 " (must be non-negative and finite)");
  }
}

double linear_flops_per_token(const transformer_shape& s) {
  const double d = s.hidden;
  const double per_layer = d * s.attention_width + 2.0 * d * s.kv_width + s.attention_width * d +
                           static_cast<double>(s.mlp_matrices) * d * s.mlp;
  return 2.0 * static_cast<double>(s.layers) * per_layer;
}

double attention_flops_per_token_squared(const transformer_shape& s) {
  const double full = 4.0 * static_cast<double>(s.layers) * s.attention_width;
  return s.causal ? full / 2.0 : full;
}

namespace {

orch::cost_t units(double flops, double unit) {
  return static_cast<orch::cost_t>(std::llround(flops / unit));
}

// The LLM backbones (Qwen2 architecture, as in the paper's models).
struct llm_shape {
  const char* name;
  transformer_shape shape;
  double vocab;
};

bench_model build(const llm_shape& llm) {
  bench_model m;
  const double unit = m.sim.cost_unit_flops;
  const double llm_d = llm.shape.hidden;
  const orch::bytes_t feature_bytes = static_cast<orch::bytes_t>(llm_d) * 2; // bf16

  // Vision: a Qwen2-VL-style ViT (675M): 32 layers, d 1280, GELU MLP 5120, full attention
  // within an image; 14-px patches (with the 2-frame temporal patch, 3·2·14·14 = 1176 input
  // values); a 2×2 merger MLP (5120 → 5120 → LLM width) per 4 patches.
  const transformer_shape vit{32, 1280, 1280, 1280, 5120, 2, false};
  const double patch_values = 3.0 * 2.0 * 14.0 * 14.0;
  const double vit_linear = linear_flops_per_token(vit) + 2.0 * patch_values * 1280.0 +
                            2.0 * (5120.0 * 5120.0 + 5120.0 * llm_d) / 4.0;
  orch::encoder_model vision;
  vision.name = "vision";
  vision.fields = {"image", "video"};
  vision.cost = {units(vit_linear, unit), units(attention_flops_per_token_squared(vit), unit), 0};
  vision.output_divisor = 4; // 2×2 merge
  vision.output_extra = 2;   // vision start / end markers
  vision.input_bytes_per_unit = static_cast<orch::bytes_t>(patch_values) * 2; // bf16 pixels
  vision.feature_bytes_per_token = feature_bytes;

  // Audio: a Whisper-large-v3-style encoder (635M): 128-bin log-mel frames at 100/s, two
  // convolutions (the second with stride 2) → 50 positions/s, 32 layers, d 1280, GELU MLP
  // 5120, full attention within a 30-s window; then a stride-2 pool and a d → LLM-width
  // projection → 25 LLM tokens/s. Costs are per input frame: positions = frames / 2.
  const transformer_shape whisper{32, 1280, 1280, 1280, 5120, 2, false};
  const double audio_linear = linear_flops_per_token(whisper) / 2.0 +
                              2.0 * 128.0 * 3.0 * 1280.0 +        // conv1, per frame
                              2.0 * 1280.0 * 3.0 * 1280.0 / 2.0 + // conv2, per 2 frames
                              2.0 * 1280.0 * llm_d / 4.0;         // projector, per 4 frames
  orch::encoder_model audio;
  audio.name = "audio";
  audio.fields = {"audio"};
  audio.cost = {units(audio_linear, unit),
                units(attention_flops_per_token_squared(whisper) / 4.0, unit), 0};
  audio.output_divisor = 4;
  audio.output_extra = 2;               // audio start / end markers
  audio.input_bytes_per_unit = 128 * 2; // bf16 mel bins
  audio.feature_bytes_per_token = feature_bytes;

  // LLM: the backbone's layers plus the LM head (2·d·vocab per token); causal attention.
  orch::llm_model backbone;
  backbone.name = "llm";
  backbone.cost = {units(linear_flops_per_token(llm.shape) + 2.0 * llm_d * llm.vocab, unit),
                   units(attention_flops_per_token_squared(llm.shape), unit), 0};
  backbone.text_bytes_per_token = 8; // int32 token id + int32 label

  m.model.encoders = {vision, audio};
  m.model.llm = backbone;
  m.chunk_input_length = {{"audio", 3000}, {"video", 4096}};
  m.name = llm.name;
  m.description = std::string("three-modality MLLM: Qwen2-VL-style ViT (675M), Whisper-large-"
                              "style audio encoder (635M), ") +
                  (llm.name == std::string("omni-7b") ? "Qwen2-7B" : "Qwen2-72B") +
                  "-shaped LLM; costs in forward kFLOPs (docs/model.md)";
  return m;
}

const llm_shape qwen2_7b{"omni-7b", {28, 3584, 3584, 512, 18944, 3, true}, 152064};
const llm_shape qwen2_72b{"omni-72b", {80, 8192, 8192, 1024, 29568, 3, true}, 152064};

} // namespace

std::vector<std::string> preset_names() {
  return {"omni-7b", "omni-72b"};
}

bench_model preset_model(const std::string& name) {
  if (name == "omni-7b") {
    return build(qwen2_7b);
  }
  if (name == "omni-72b") {
    return build(qwen2_72b);
  }
  throw input_error(cat("unknown model preset '", name, "' (known: omni-7b, omni-72b)"));
}

bench_model default_model() {
  return preset_model("omni-7b");
}

} // namespace orch_bench
