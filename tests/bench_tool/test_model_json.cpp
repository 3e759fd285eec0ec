// SPDX-License-Identifier: Apache-2.0
// Model presets (coefficients from the FLOP formulas of docs/model.md) and the model JSON.
#include "input_error.hpp"
#include "model_json.hpp"
#include "model_presets.hpp"

#include <orch/orchestrate/model_presets.hpp>

#include <doctest/doctest.h>

#include <cstdint>
#include <string>

using nlohmann::json;

TEST_CASE("FLOP formulas: dense layer matmuls and attention") {
  // One layer, d = 4, attention width 4, kv width 2, GELU MLP 8:
  // 2 · (16 + 2·4·2 + 16 + 2·4·8) = 2 · 112 = 224 FLOPs per token.
  const orch::transformer_shape s{1, 4, 4, 2, 8, 2, false};
  CHECK(orch::linear_flops_per_token(s) == 224);
  CHECK(orch::attention_flops_per_token_squared(s) == 16);
  auto causal = s;
  causal.causal = true;
  CHECK(orch::attention_flops_per_token_squared(causal) == 8);
  // Past 2^63 - 1 is an error, not a wrapped coefficient.
  const orch::transformer_shape huge{1,    std::int64_t{1} << 40, std::int64_t{1} << 40, 0, 0, 2,
                                     false};
  CHECK_THROWS_AS((void)orch::linear_flops_per_token(huge), orch::overflow);
}

TEST_CASE("the default model: a three-modality MLLM with FLOP-derived coefficients") {
  const auto m = orch_bench::default_model();
  CHECK(m.name == "omni-7b");
  CHECK_NOTHROW(m.validate());
  REQUIRE(m.model.encoders.size() == 2);
  const auto& vision = m.model.encoders[0];
  const auto& audio = m.model.encoders[1];
  CHECK(m.model.encoder_of_field("image") == 0);
  CHECK(m.model.encoder_of_field("video") == 0);
  CHECK(m.model.encoder_of_field("audio") == 1);
  // Chunking is part of the model: 30-s audio windows, video in groups of 4,096 patches.
  CHECK(m.model.find_field("audio")->chunk_length == 3000);
  CHECK(m.model.find_field("video")->chunk_length == 4096);
  CHECK(m.model.find_field("image")->chunk_length == 0);
  // ViT: 2 · 32 · (4·1280² + 2·1280·5120) = 1,258,291,200; patch embedding 2 · 1176 · 1280 =
  // 3,010,560; merger 2 · (5120² + 5120 · 3584) / 4 = 22,282,240 → 1,283,584,000 FLOPs/patch.
  CHECK(vision.cost.linear == 1'283'584);
  CHECK(vision.cost.quadratic == 164); // 4 · 32 · 1280 = 163,840 FLOPs per patch²
  CHECK(vision.output_tokens(1564) == 391 + 2);
  // Whisper: 1,258,291,200 / 2 + 983,040 + 4,915,200 + 2,293,760 = 637,337,600 per frame.
  CHECK(audio.cost.linear == 637'338);
  CHECK(audio.cost.quadratic == 41);           // 163,840 / 4 per frame²
  CHECK(audio.output_tokens(3000) == 750 + 2); // 25 tokens per second
  // Qwen2-7B: 2 · (28 · 233,046,016 + 3584 · 152,064) = 14,140,571,648 FLOPs per token.
  CHECK(m.model.llm.cost.linear == 14'140'572);
  CHECK(m.model.llm.cost.quadratic == 201); // causal: 2 · 28 · 3584 = 200,704
  // The LLM dominates per token, about 11 ViT patches' worth.
  const auto big = orch_bench::preset_model("omni-72b");
  CHECK(big.model.llm.cost.linear > 9 * m.model.llm.cost.linear);
  CHECK(big.model.encoders[0].feature_bytes_per_token == 8192 * 2);
  CHECK_THROWS_AS((void)orch_bench::preset_model("gpt"), orch_bench::input_error);
}

TEST_CASE("model JSON round-trips every preset") {
  for (const auto& name : orch_bench::preset_names()) {
    CAPTURE(name);
    const auto m = orch_bench::preset_model(name);
    const json j = orch_bench::to_json(m);
    const auto back = orch_bench::model_from_json(j, "x.json");
    CHECK(orch_bench::to_json(back) == j);
    CHECK(back.sim.achieved_flops == m.sim.achieved_flops);
    CHECK(back.model.encoders[0].fields == m.model.encoders[0].fields);
  }
}

namespace {

std::string error_of(const json& j) {
  try {
    (void)orch_bench::model_from_json(j, "m.json");
  } catch (const orch_bench::input_error& e) {
    return e.what();
  }
  return "";
}

} // namespace

TEST_CASE("model JSON: minimal input gets defaults; mistakes are named") {
  const json minimal = json::parse(R"({
    "encoders": [{"name": "vision", "fields": ["image"], "cost": {"linear": 3}}],
    "llm": {"cost": {"linear": 10, "quadratic": 1}}
  })");
  const auto m = orch_bench::model_from_json(minimal, "m.json");
  CHECK(m.name == "custom");
  CHECK(m.model.encoders[0].output_divisor == 1);
  CHECK(m.model.llm.name == "llm");
  CHECK(m.model.llm.cost.quadratic == 1);
  CHECK(m.sim.cost_unit_flops == orch_bench::simulation_constants{}.cost_unit_flops);

  auto j = minimal;
  j["encoders"][0]["output_divisr"] = 4;
  CHECK(error_of(j) == "m.json: encoders[0]: unknown key 'output_divisr'");
  j = minimal;
  j["encoders"][0]["cost"]["linear"] = -1;
  CHECK(error_of(j) == "m.json: encoders[0].cost: 'linear' must be non-negative, got -1");
  j = minimal;
  j["encoders"][0]["cost"]["linear"] = 1.5;
  CHECK(error_of(j) == "m.json: encoders[0].cost: 'linear' must be an integer");
  j = minimal;
  j["llm"].erase("cost");
  CHECK(error_of(j) == "m.json: llm: missing key 'cost'");
  j = minimal;
  j.erase("encoders");
  CHECK(error_of(j) == "m.json: model: missing key 'encoders'");
  j = minimal;
  j["encoders"][0]["chunk_input_length"] = {{"audio", 10}};
  CHECK(error_of(j).find("field 'audio' is not one of this encoder's fields") != std::string::npos);
  j = minimal;
  j["encoders"][0]["chunk_input_length"] = {{"image", 0}};
  CHECK(error_of(j).find("chunk_input_length of field 'image' is 0") != std::string::npos);
  j = minimal;
  j["simulation"] = {{"achieved_flops", 0}};
  CHECK(error_of(j).find("achieved_flops") != std::string::npos);
  j = minimal;
  j["encoders"][0]["fields"] = {"text"};
  CHECK(error_of(j).find("claims field 'text'") != std::string::npos);
  CHECK_THROWS_AS((void)orch_bench::load_model_file("/nonexistent.json"), orch_bench::input_error);
}
