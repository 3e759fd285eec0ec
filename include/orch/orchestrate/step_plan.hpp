// SPDX-License-Identifier: Apache-2.0
/// What orchestrate() takes and returns: its options (strategy, LLM limits, threads) and the
/// step plan (per phase the placement and balance, per exchange the forward and backward
/// plans, the assembly map, the chunks, the hash).
#pragma once

#include <orch/config.hpp>
#include <orch/exchange/layout.hpp>
#include <orch/exchange/plan.hpp>
#include <orch/orchestrate/assembly.hpp>
#include <orch/orchestrate/media_chunks.hpp>
#include <orch/orchestrate/strategy.hpp>
#include <orch/partition/options.hpp>
#include <orch/placement/options.hpp>
#include <orch/quality.hpp>
#include <orch/traffic.hpp>
#include <orch/types.hpp>

#include <cstdint>
#include <functional>
#include <span>
#include <string>
#include <string_view>
#include <vector>

namespace orch {

/// Per-rank limits of the LLM phase, honoured by every strategy (0 / empty: none).
///
/// none keeps every example on its owner, so a sampled batch over a limit is an error there;
/// llm_only, per_phase and orch partition the examples under the limits (orch then maps the
/// bins to ranks node-wise, rearrange_bins, which keeps every bin whole).
struct llm_limits {
  /// At most this many examples (sequences) on a rank.
  index_t max_examples_per_rank = 0;
  /// At most this many LLM tokens on a rank: Σ over its examples of text + every encoder's
  /// output tokens (step_plan::sequence_length), the activation-memory cap trainers set.
  length_t max_tokens_per_rank = 0;
  /// Keep-together groups (empty: none): one id per example (table order); examples that
  /// share an id ≥ 0 run on one LLM rank (RL trainers keep a prompt's sampled responses
  /// together); orch::no_group (-1) leaves an example on its own. The caps above count a
  /// group's examples and tokens on the rank it lands on. The array must outlive the call.
  std::span<const index_t> groups = {};

  /// Whether any limit or group is set.
  [[nodiscard]] bool any() const noexcept {
    return max_examples_per_rank > 0 || max_tokens_per_rank > 0 || !groups.empty();
  }
};

/// Options of orchestrate(). Every field has a default; designated initialisers read well:
/// `orchestrate(table, model, topo, {.strategy = orch::strategy::orch, .threads = 2})`.
struct orchestrate_options {
  orch::strategy strategy = strategy::orch;
  /// How a balanced phase is partitioned where one is (per_phase and llm_only; orch's fallback
  /// and its LLM phase under limits): algorithm, work_budget and tolerance_ppm. Its per-bin
  /// constraints (max_items_per_bin, equal_counts, second_resource / second_capacity, speeds)
  /// would apply to phases of different items and cannot be honoured by the locality
  /// placement: orchestrate rejects them (use `llm`); time_limit_ms would make ranks disagree
  /// and is rejected too.
  partition_options partition{};
  /// Slack of strategy::orch's locality-aware placements (unused by the other strategies).
  locality_options locality{};
  /// Per-rank limits of the LLM phase.
  llm_limits llm{};
  /// Threads that plan the step, the caller's included (the phases, the exchanges and the
  /// assembly are tasks that run as soon as what they read is done). The plan is the same
  /// for every value.
  int threads = 1;
};

/// One compute phase: an encoder (over its media chunks) or the LLM (over examples).
struct phase_result {
  std::string name;
  /// Encoders: the chunk of each phase item (step_plan::chunks; the table media item when no
  /// item was cut). LLM: empty (phase items are examples).
  std::vector<index_t> items;
  std::vector<cost_t> costs; ///< cost of each phase item
  layout placement;          ///< phase item → (rank, slot)
  std::vector<cost_t> loads; ///< per rank
  balance_metrics balance;   ///< against max(ceil(Σc/R), max c) or the partitioner's bound
  bool proven_optimal = false;
};

/// One exchange between phases, with the inverse that carries gradients back.
struct exchange_result {
  std::string name; ///< "<encoder>.inputs", "<encoder>.features" or "text"
  exchange_plan forward;
  exchange_plan backward;
  traffic bytes; ///< of the forward plan (the backward one moves the same bytes)
  /// No placement of the receiving phase with a largest load at most this step's sends fewer
  /// bytes across nodes (fractional knapsack per node). For a feature exchange: given where
  /// the encoder ran, no placement of the LLM phase with a largest load at most this step's
  /// (follow_parent_inter_node_lower_bound).
  bytes_t inter_node_lower_bound = 0;
};

/// One encoder's part of a step: its phase and the two exchanges around it. Its items are
/// the chunks of its fields' media items, in table order; item i of the phase is item i of
/// both exchanges.
struct encoder_step {
  phase_result phase;       ///< name: the encoder's; items: the chunk of each phase item
  exchange_result inputs;   ///< "<name>.inputs": raw inputs, owner → encoder rank
  exchange_result features; ///< "<name>.features": encoder rank → LLM rank of the example
  /// Its items on the owner of their example (= inputs.forward.from()): the owner's input
  /// buffer holds them in this layout's slot order.
  layout owner_media;
  /// Its items on the LLM rank of their example (= features.forward.to()): the LLM rank's
  /// feature buffer holds them in this layout's slot order, which the assembly reads. The
  /// order is the one the features exchange delivers them in (by encoder rank, then slot on
  /// it), so that exchange never unpacks; the assembly puts them in sequence order.
  layout feature_layout;
};

/// Everything a step needs, identical on every rank.
struct step_plan {
  orch::strategy strategy = strategy::orch;
  /// Per encoder, in model order: its phase, exchanges and layouts.
  std::vector<encoder_step> encoders;
  phase_result llm;                        ///< the LLM phase, over examples
  exchange_result text;                    ///< "text": text tokens, owner → LLM rank
  layout owner_examples;                   ///< examples where they were sampled
  assembly_map assembly;                   ///< each LLM rank's sequences from its text and features
  media_chunks chunks;                     ///< how media items were cut into encoder forwards
  std::vector<std::int32_t> media_encoder; ///< per chunk: its encoder
  std::vector<length_t> output_tokens;     ///< per chunk: encoder output tokens
  std::vector<length_t> sequence_length;   ///< per example: LLM tokens
  /// Feature bytes leaving their GPU in the single-hop plans, and what routing them
  /// encoder → owner → LLM (two hops) would have moved.
  bytes_t feature_bytes_direct = 0;
  bytes_t feature_bytes_two_hop = 0;
  std::uint64_t hash = 0; ///< covers every layout, plan and the assembly map

  /// Every phase: the encoders' in model order, then the LLM. Complexity: O(encoders).
  [[nodiscard]] std::vector<std::reference_wrapper<const phase_result>> phases() const {
    std::vector<std::reference_wrapper<const phase_result>> out;
    out.reserve(encoders.size() + 1);
    for (const auto& e : encoders) {
      out.emplace_back(e.phase);
    }
    out.emplace_back(llm);
    return out;
  }
  /// Every exchange in step order: per encoder its inputs then features, then text.
  /// Complexity: O(encoders).
  [[nodiscard]] std::vector<std::reference_wrapper<const exchange_result>> exchanges() const {
    std::vector<std::reference_wrapper<const exchange_result>> out;
    out.reserve(2 * encoders.size() + 1);
    for (const auto& e : encoders) {
      out.emplace_back(e.inputs);
      out.emplace_back(e.features);
    }
    out.emplace_back(text);
    return out;
  }
  /// The encoder named `name`. Complexity: O(encoders). Throws: orch::invalid_argument
  /// listing the encoders.
  [[nodiscard]] const encoder_step& encoder(std::string_view name) const {
    for (const auto& e : encoders) {
      if (e.phase.name == name) {
        return e;
      }
    }
    std::string known;
    for (const auto& e : encoders) {
      known += (known.empty() ? "'" : ", '") + e.phase.name + "'";
    }
    throw_invalid_argument("step_plan: no encoder named '", name,
                           "' (encoders: ", known.empty() ? std::string("none") : known, ")");
  }
  /// The phase named `name` (an encoder's or the LLM's). Complexity: O(encoders).
  /// Throws: orch::invalid_argument listing the phases.
  [[nodiscard]] const phase_result& phase(std::string_view name) const {
    for (const phase_result& p : phases()) {
      if (p.name == name) {
        return p;
      }
    }
    throw_invalid_argument("step_plan: no phase named '", name, "' (phases: ", names(false), ")");
  }
  /// The exchange named `name` ("vision.inputs", "audio.features", "text").
  /// Complexity: O(encoders). Throws: orch::invalid_argument listing the exchanges.
  [[nodiscard]] const exchange_result& exchange(std::string_view name) const {
    for (const exchange_result& x : exchanges()) {
      if (x.name == name) {
        return x;
      }
    }
    throw_invalid_argument("step_plan: no exchange named '", name, "' (exchanges: ", names(true),
                           ")");
  }

private:
  [[nodiscard]] std::string names(bool of_exchanges) const {
    std::string out;
    const auto add = [&](const std::string& n) { out += (out.empty() ? "'" : ", '") + n + "'"; };
    if (of_exchanges) {
      for (const exchange_result& x : exchanges()) {
        add(x.name);
      }
    } else {
      for (const phase_result& p : phases()) {
        add(p.name);
      }
    }
    return out;
  }
};

} // namespace orch
