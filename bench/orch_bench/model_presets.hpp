// SPDX-License-Identifier: Apache-2.0
// The models orch-bench simulates: an orch::model_description plus the constants that turn
// cost units into seconds and bytes into transfer time. The built-in presets are the
// library's (orch/orchestrate/model_presets.hpp, docs/model.md).
#pragma once

#include <orch/orchestrate/model.hpp>
#include <orch/types.hpp>

#include <string>
#include <vector>

namespace orch_bench {

/// Constants of the step-time model (docs/orch-bench.md, "Step time").
struct simulation_constants {
  double cost_unit_flops = 1000.0;     ///< forward FLOPs one cost unit stands for
  double achieved_flops = 4.0e14;      ///< achieved FLOP/s per GPU (≈ 40 % of H100 bf16 dense)
  double backward_factor = 2.0;        ///< backward FLOPs / forward FLOPs (train = 1 + this)
  double nvlink_bytes_per_s = 3.6e11;  ///< achieved intra-node bytes/s per GPU per direction
  double network_bytes_per_s = 4.0e10; ///< achieved inter-node bytes/s per GPU per direction
};

/// A model for orch-bench: what the orchestrator balances (chunking included: each
/// media_field's chunk_length) and the step-time constants.
struct bench_model {
  std::string name;
  std::string description;
  orch::model_description model;
  simulation_constants sim;

  /// Checks the model description and constants (positive and finite; backward_factor ≥ 0).
  /// Throws: orch::invalid_argument naming the value.
  void validate() const;
};

/// Names of the built-in presets ("omni-7b", the default, and "omni-72b"): the library's
/// (orch::model_preset_names()).
[[nodiscard]] std::vector<std::string> preset_names();
/// A built-in preset by name: orch::model_preset(name) with its description and the default
/// step-time constants. Throws: input_error for an unknown name.
[[nodiscard]] bench_model preset_model(const std::string& name);
/// The default model: preset "omni-7b".
[[nodiscard]] bench_model default_model();

} // namespace orch_bench
