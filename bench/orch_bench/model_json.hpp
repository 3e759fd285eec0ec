// SPDX-License-Identifier: Apache-2.0
// Model JSON (docs/orch-bench.md, "Model JSON"): loads and saves a bench_model with
// nlohmann/json, strictly (unknown keys and wrong types are errors).
#pragma once

#include "model_presets.hpp"

#include <nlohmann/json.hpp>

#include <string>
#include <string_view>

namespace orch_bench {

/// The JSON object of `m`; model_from_json(to_json(m)) == m.
[[nodiscard]] nlohmann::json to_json(const bench_model& m);

/// Parses a model object. Keys: name, description (optional strings); encoders (array);
/// llm (object); simulation (optional object, defaults as simulation_constants).
/// Throws: input_error "SOURCE: PATH: ..." naming the JSON path of a missing key, an unknown
/// key, a wrong type or a value out of range (including model validation errors).
[[nodiscard]] bench_model model_from_json(const nlohmann::json& j, std::string_view source);

/// Reads and parses a model JSON file. Throws: input_error (cannot open, not JSON, as above).
[[nodiscard]] bench_model load_model_file(const std::string& path);

} // namespace orch_bench
