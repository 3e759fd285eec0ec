// SPDX-License-Identifier: Apache-2.0
#include "model_presets.hpp"

#include "input_error.hpp"

#include <orch/config.hpp>
#include <orch/orchestrate/model_presets.hpp>

#include <cmath>

namespace orch_bench {

void bench_model::validate() const {
  model.validate();
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

std::vector<std::string> preset_names() {
  std::vector<std::string> out;
  for (const auto n : orch::model_preset_names()) {
    out.emplace_back(n);
  }
  return out;
}

bench_model preset_model(const std::string& name) {
  bench_model m;
  try {
    m.model = orch::model_preset(name);
  } catch (const orch::invalid_argument&) {
    throw input_error(cat("unknown model preset '", name, "' (known: omni-7b, omni-72b)"));
  }
  m.name = name;
  m.sim.cost_unit_flops = static_cast<double>(orch::preset_cost_unit_flops);
  m.description = std::string("three-modality MLLM: Qwen2-VL-style ViT (675M), Whisper-large-"
                              "style audio encoder (635M), ") +
                  (name == "omni-7b" ? "Qwen2-7B" : "Qwen2-72B") +
                  "-shaped LLM; costs in forward kFLOPs (docs/model.md)";
  return m;
}

bench_model default_model() {
  return preset_model("omni-7b");
}

} // namespace orch_bench
