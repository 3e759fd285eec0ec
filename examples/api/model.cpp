// SPDX-License-Identifier: Apache-2.0
// Model descriptions as docs/api quotes them: an encoder and its output tokens, field lookups,
// validation errors, the built-in presets and the FLOP formulas behind their coefficients.
#include <orch/orchestrate/model.hpp>
#include <orch/orchestrate/model_presets.hpp>

#include <cstdio>
#include <string>

int main() {
  // [doc:encoder]
  const orch::encoder_model audio{.name = "audio",
                                  .fields = {{"audio", 3000}},
                                  .cost = {.linear = 9, .quadratic = 1},
                                  .output_divisor = 4,
                                  .output_extra = 2,
                                  .max_output_tokens = 1024,
                                  .input_bytes_per_unit = 256,
                                  .feature_bytes_per_token = 7168};
  // One forward of a 3,000-frame window: ceil(3000 / 4) + 2 tokens, cost 9·l + l².
  std::printf("audio: %lld output tokens, cost %lld for 3000 frames\n",
              static_cast<long long>(audio.output_tokens(3000)),
              static_cast<long long>(audio.cost(3000)));
  // [/doc:encoder]

  // [doc:description]
  orch::model_description model{.encoders = {{.name = "vision",
                                              .fields = {"image", {"video", 4096}},
                                              .cost = {.linear = 40, .quadratic = 1}},
                                             audio},
                                .llm = {.name = "llm", .cost = {.linear = 14000, .quadratic = 1}}};
  model.validate();
  std::printf("fields %s; 'video' is encoder %d's, chunk_length %lld; 'text' is encoder %d's\n",
              model.field_list().c_str(), model.encoder_of_field("video"),
              static_cast<long long>(model.find_field("video")->chunk_length),
              model.encoder_of_field("text"));
  // [/doc:description]

  // [doc:validate]
  model.encoders[1].fields.emplace_back("video"); // now claimed by vision and audio
  try {
    model.validate();
  } catch (const orch::invalid_argument& e) {
    std::printf("%s\n", e.what());
  }
  // [/doc:validate]

  // [doc:preset]
  for (const std::string_view name : orch::model_preset_names()) {
    const orch::model_description m = orch::model_preset(name);
    std::printf("%.*s:", static_cast<int>(name.size()), name.data());
    for (const orch::encoder_model& e : m.encoders) {
      std::printf(" %s (linear %lld, quadratic %lld)", e.name.c_str(),
                  static_cast<long long>(e.cost.linear), static_cast<long long>(e.cost.quadratic));
    }
    std::printf(" %s (linear %lld, quadratic %lld)\n", m.llm.name.c_str(),
                static_cast<long long>(m.llm.cost.linear),
                static_cast<long long>(m.llm.cost.quadratic));
  }
  try {
    static_cast<void>(orch::model_preset("omni-8b"));
  } catch (const orch::invalid_argument& e) {
    std::printf("%s\n", e.what());
  }
  // [/doc:preset]

  // [doc:flops]
  // A Llama-style 1B decoder: 16 layers, width 2048, grouped-query attention (8 KV heads of
  // 64), SwiGLU MLP 8192. Costs in kFLOPs like the presets' (which round; this truncates).
  const orch::transformer_shape shape{.layers = 16,
                                      .hidden = 2048,
                                      .attention_width = 2048,
                                      .kv_width = 512,
                                      .mlp = 8192,
                                      .mlp_matrices = 3,
                                      .causal = true};
  const std::int64_t linear = orch::linear_flops_per_token(shape);
  const std::int64_t quadratic = orch::attention_flops_per_token_squared(shape);
  const orch::attention_cost llm_cost{.linear = linear / orch::preset_cost_unit_flops,
                                      .quadratic = quadratic / orch::preset_cost_unit_flops};
  std::printf("%lld FLOPs per token + %lld per token^2: cost of 4096 tokens %lld kFLOPs\n",
              static_cast<long long>(linear), static_cast<long long>(quadratic),
              static_cast<long long>(llm_cost(4096)));
  // [/doc:flops]
  return 0;
}
