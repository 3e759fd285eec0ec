// SPDX-License-Identifier: Apache-2.0
// The models orch-bench simulates: an orch::model_description plus the constants that turn
// cost units into seconds and bytes into transfer time. Built-in presets derive their cost
// coefficients from the FLOP formulas of docs/model.md.
#pragma once

#include <orch/model.hpp>
#include <orch/types.hpp>

#include <map>
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

/// A model for orch-bench: what the orchestrator balances, how items are cut into encoder
/// forwards, and the step-time constants.
struct bench_model {
  std::string name;
  std::string description;
  orch::model_description model;
  /// Items of a field longer than this are cut into consecutive chunks of at most this input
  /// length, each its own encoder forward (30-s audio windows; video cut into frame groups).
  /// Fields not listed are never cut.
  std::map<std::string, orch::length_t> chunk_input_length;
  simulation_constants sim;

  /// Checks the model description, chunk lengths (positive, of fields an encoder consumes)
  /// and constants (positive and finite; backward_factor ≥ 0).
  /// Throws: orch::invalid_argument naming the value.
  void validate() const;
};

/// Dense transformer shape for the FLOP formulas of docs/model.md.
struct transformer_shape {
  int layers = 0;
  double hidden = 0;          ///< model width d
  double attention_width = 0; ///< query heads × head dim (= d for most models)
  double kv_width = 0;        ///< key/value heads × head dim (< d with grouped-query attention)
  double mlp = 0;             ///< MLP intermediate width
  int mlp_matrices = 2;       ///< 2 for a GELU MLP, 3 for SwiGLU
  bool causal = false;        ///< causal attention computes half the score matrix
};

/// Forward FLOPs per token of the layer matmuls: 2 · layers · (d·a + 2·d·kv + a·d + m·d·f).
[[nodiscard]] double linear_flops_per_token(const transformer_shape& s);
/// Forward FLOPs of attention scores and weighted sum per squared sequence length:
/// 4 · layers · a (QKᵀ and A·V, 2·l²·a each), halved for causal attention.
[[nodiscard]] double attention_flops_per_token_squared(const transformer_shape& s);

/// Names of the built-in presets ("omni-7b", the default, and "omni-72b").
[[nodiscard]] std::vector<std::string> preset_names();
/// A built-in preset by name. Throws: input_error for an unknown name.
[[nodiscard]] bench_model preset_model(const std::string& name);
/// The default model: preset "omni-7b".
[[nodiscard]] bench_model default_model();

} // namespace orch_bench
