// SPDX-License-Identifier: Apache-2.0
// `orch-bench simulate`: samples training steps from a trace, plans each with every strategy
// (orch::orchestrate) and models the step time (docs/orch-bench.md, "Step time").
#pragma once

#include "model_presets.hpp"
#include "trace.hpp"

#include <orch/orchestrate/item_table.hpp>
#include <orch/orchestrate/strategy.hpp>
#include <orch/placement/options.hpp>
#include <orch/types.hpp>

#include <cstdint>
#include <functional>
#include <iosfwd>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

namespace orch_bench {

/// What to simulate.
struct simulate_config {
  std::string trace_name; ///< reported only
  orch::rank_t ranks = 64;
  orch::rank_t ranks_per_node = 8;
  orch::index_t examples_per_rank = 16;
  int steps = 20;
  std::uint64_t seed = 1;
  std::vector<orch::strategy> strategies{orch::all_strategies.begin(), orch::all_strategies.end()};
  int threads = 1; ///< orchestrate_options::threads (plans are identical for every value)
  /// orchestrate_options::locality.slack_ppm: the room above each phase's bound that `orch`
  /// may spend on keeping bytes local.
  std::int64_t slack_ppm = orch::locality_options{}.slack_ppm;
};

/// Per-phase balance of one strategy, averaged over steps.
struct phase_stats {
  std::string name;
  double max_over_mean = 0.0;
  double max_over_lower_bound = 0.0;
  double idle_fraction = 0.0;
  double max_time_s = 0.0; ///< training time of the phase's largest rank load
};

/// Bytes of one exchange (or all of them), per step, averaged over steps.
struct bytes_stats {
  double self = 0.0;
  double intra_node = 0.0;
  double inter_node = 0.0;
  double inter_node_lower_bound = 0.0;
};

/// One exchange's bytes and modelled time, averaged over steps.
struct exchange_stats {
  std::string name;
  bytes_stats bytes;
};

/// One strategy's results, averaged over steps (plan_ms: median).
struct strategy_stats {
  std::string name;
  double step_time_s = 0.0;     ///< compute_s + exchange_s
  double compute_s = 0.0;       ///< forward + backward compute on the critical path
  double exchange_s = 0.0;      ///< dispatch + feature exchanges (forward and backward)
  double speedup_vs_none = 0.0; ///< mean over steps of none's step time / this step time
  double idle_fraction = 0.0;   ///< share of rank-time in compute spent waiting
  double plan_ms = 0.0;         ///< median wall-clock time of orch::orchestrate
  std::vector<phase_stats> phases;
  bytes_stats bytes; ///< all exchanges together
  std::vector<exchange_stats> exchanges;
  double feature_bytes_direct = 0.0;  ///< feature bytes leaving their GPU (one hop)
  double feature_bytes_two_hop = 0.0; ///< what encoder → owner → LLM routing would move
  // Consistency totals over all steps: what was sampled and what the plans placed.
  std::int64_t sampled_examples = 0;
  std::int64_t placed_examples = 0;
  std::int64_t sampled_media = 0;
  std::int64_t placed_media = 0;
};

/// One step's values of a strategy (the rows of --csv).
struct step_record {
  int step = 0;
  std::string strategy;
  double step_time_s = 0.0;
  double compute_s = 0.0;
  double exchange_s = 0.0;
  double idle_fraction = 0.0;
  double plan_ms = 0.0;
  std::vector<double> max_over_mean;        ///< per phase
  std::vector<double> max_over_lower_bound; ///< per phase
  bytes_stats bytes;
  std::uint64_t plan_hash = 0;
};

struct simulate_result {
  simulate_config config;
  std::string model_name;
  simulation_constants sim;
  std::size_t trace_examples = 0;
  std::vector<std::string> phase_names; ///< encoders used by the trace, then the LLM
  std::vector<strategy_stats> strategies;
  std::vector<step_record> steps;
};

/// The model restricted to the encoders whose fields occur in `t` (a phase nothing feeds
/// would only add empty rows); the LLM is always kept.
[[nodiscard]] bench_model restrict_to_trace(const bench_model& model, const trace& t);

/// The item table of one step: R×B trace examples drawn uniformly with replacement from a
/// std::mt19937_64 seeded with `seed`; the one at position p goes to owner p / B, local index
/// p % B. The table is made for the model (orch::item_table(model)): a field no encoder
/// consumes is an error when added. Media are added whole: orchestrate cuts items longer than
/// their field's chunk_length into chunks.
/// The seed of step `step` of a run seeded with `seed` (splitmix64 of both, so that steps
/// are decorrelated): what `orch-bench simulate --seed` samples each step with.
[[nodiscard]] std::uint64_t step_seed(std::uint64_t seed, int step);

[[nodiscard]] orch::item_table sample_step(const trace& t, const bench_model& model,
                                           orch::rank_t ranks, orch::index_t examples_per_rank,
                                           std::uint64_t seed);

/// Runs the simulation. `progress(done, total)` is called after each planned step ×
/// strategy. Throws: orch::error (from orchestrate: a field the model lacks, overflow, ...),
/// std::invalid_argument for a bad config.
[[nodiscard]] simulate_result simulate(const trace& t, const bench_model& model,
                                       const simulate_config& config,
                                       const std::function<void(int, int)>& progress = {});

/// The --json object: {"config":{...}, "strategies":[...]} (docs/orch-bench.md).
[[nodiscard]] nlohmann::json to_json(const simulate_result& r);
/// The human-readable tables.
void print_tables(std::ostream& out, const simulate_result& r);
/// The --csv rows: one per step and strategy.
void write_csv(std::ostream& out, const simulate_result& r);

} // namespace orch_bench
