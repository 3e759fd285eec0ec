// SPDX-License-Identifier: Apache-2.0
/// The MLLM global orchestrator: one balanced layout per phase (each encoder, the LLM), the
/// exchange plans between phases composed into single hops, their inverses, the assembly map.
#pragma once

#include <orch/assembly.hpp>
#include <orch/config.hpp>
#include <orch/detail/checked.hpp>
#include <orch/detail/hash.hpp>
#include <orch/detail/keep_local.hpp>
#include <orch/detail/node_first.hpp>
#include <orch/detail/parallel.hpp>
#include <orch/detail/step_inputs.hpp>
#include <orch/detail/step_layouts.hpp>
#include <orch/item_table.hpp>
#include <orch/layout.hpp>
#include <orch/locality.hpp>
#include <orch/model.hpp>
#include <orch/partition/partition.hpp>
#include <orch/plan.hpp>
#include <orch/quality.hpp>
#include <orch/strategy.hpp>
#include <orch/topology.hpp>
#include <orch/types.hpp>

#include <algorithm>
#include <array>
#include <cstddef>
#include <cstdint>
#include <functional>
#include <span>
#include <string>
#include <string_view>
#include <vector>

namespace orch {

/// Options of orchestrate().
struct orchestrate_options {
  orch::strategy strategy = strategy::orch;
  partition_options partition{}; ///< used for every balanced phase
  locality_options locality{};   ///< slack of strategy::orch's locality-aware placements
  /// Threads that plan the step, the caller's included (the phases, the exchanges and the
  /// assembly are tasks that run as soon as what they read is done). The plan is the same
  /// for every value.
  int threads = 1;
};

/// One compute phase: an encoder (over its media items) or the LLM (over examples).
struct phase_result {
  std::string name;
  /// Encoders: table media index of each phase item. LLM: empty (phase items are examples).
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
  /// bytes across nodes (fractional knapsack per node; 0 for feature exchanges, whose bound
  /// depends on two placements).
  bytes_t inter_node_lower_bound = 0;
};

/// Everything a step needs, identical on every rank.
struct step_plan {
  orch::strategy strategy = strategy::orch;
  /// Encoders in model order, then the LLM (always phases.size() == encoders + 1).
  std::vector<phase_result> phases;
  layout owner_examples;               ///< examples where they were sampled
  std::vector<layout> owner_media;     ///< per encoder: its media on their example's owner
  std::vector<layout> feature_layouts; ///< per encoder: its media on their example's LLM rank
  /// Per encoder: inputs (owner → encoder), features (encoder → LLM); then text (owner → LLM).
  std::vector<exchange_result> exchanges;
  assembly_map assembly;
  std::vector<std::int32_t> media_encoder; ///< per table media item
  std::vector<length_t> output_tokens;     ///< per table media item
  std::vector<length_t> sequence_length;   ///< per example: LLM tokens
  /// Feature bytes leaving their GPU in the single-hop plans, and what routing them
  /// encoder → owner → LLM (two hops) would have moved.
  bytes_t feature_bytes_direct = 0;
  bytes_t feature_bytes_two_hop = 0;
  std::uint64_t hash = 0; ///< covers every layout, plan and the assembly map

  [[nodiscard]] const phase_result& llm() const { return phases.back(); }
  /// The phase named `name`. Throws: orch::invalid_argument.
  [[nodiscard]] const phase_result& phase(std::string_view name) const {
    for (const auto& p : phases) {
      if (p.name == name) {
        return p;
      }
    }
    throw_invalid_argument("step_plan: no phase named '", name, "'");
  }
  /// The exchange named `name`. Throws: orch::invalid_argument.
  [[nodiscard]] const exchange_result& exchange(std::string_view name) const {
    for (const auto& x : exchanges) {
      if (x.name == name) {
        return x;
      }
    }
    throw_invalid_argument("step_plan: no exchange named '", name, "'");
  }
};

namespace detail {

/// Balances one phase under strategy per_phase or orch: fills `ph.placement`, `ph.loads`,
/// `ph.balance`, `ph.proven_optimal` and returns the rank of every phase item.
///
/// per_phase: orch::partition's bins, bin b on rank b.
/// orch: the locality heuristics of locality_balance (docs/plans.md) at the target LB + slack
/// (LB = max(ceil(Σc/R), max c), slack = options.locality.slack_ppm of LB), without a
/// reference partition: first keep_local (every rank keeps what fits, the rest moves inside
/// its node where it can), which with many items per rank almost always meets the target;
/// else the better of node_first (nodes shed a knapsack cover of their excess, local search
/// inside each node) and keep_local finished by local search across all ranks (settle), which
/// handle few items per rank and fragmented room. Only when both miss the target does the full
/// locality_balance run against orch::partition's bins (never worse than node-wise rearrangement of
/// those bins). `threads`: for the per-node work of keep_local (the phase's own task may run beside
/// others).
inline std::vector<rank_t> balance_phase(phase_result& ph, std::span<const rank_t> current,
                                         std::span<const bytes_t> stay, const topology& topo,
                                         const orchestrate_options& options, int threads) {
  const rank_t ranks = topo.ranks();
  std::vector<rank_t> rank_of;
  cost_t bound = lower_bound(ph.costs, ranks);
  cost_t proven_max = -1; // a largest load the partitioner proved optimal
  bool placed = false;
  if (options.strategy == strategy::orch) {
    const auto slack = static_cast<cost_t>(int128{bound} * options.locality.slack_ppm / 1'000'000);
    const cost_t target = checked_add(bound, slack, "orchestrate: target");
    // The planner places every node once for both ways a rank chooses what to keep.
    keep_local_planner planner(ph.costs, current, stay, topo, target, threads);
    keep_local_result kept;
    for (const keep_mode mode : {keep_mode::most_bytes, keep_mode::largest_first}) {
      kept = planner.finish(mode);
      if (kept.max_load <= target) {
        rank_of = std::move(kept.rank_of);
        ph.loads = std::move(kept.loads);
        placed = true;
        break;
      }
    }
    if (!placed) {
      // As locality_balance does: keep_local finished by local search across all ranks, or
      // node_first; the one sending fewer bytes across nodes, then fewer moved, wins.
      auto first = node_first(ph.costs, current, stay, topo, target).rank_of;
      auto settled = settle(ph.costs, ranks, std::move(kept.rank_of), target);
      if (!first.empty() && !settled.empty()) {
        if (sends_fewer(measure_traffic(current, settled, stay, topo),
                        measure_traffic(current, first, stay, topo))) {
          first = std::move(settled);
        }
      } else if (first.empty()) {
        first = std::move(settled);
      }
      if (!first.empty()) {
        rank_of = std::move(first);
        ph.loads = bin_loads(ph.costs, rank_of, ranks);
        placed = true;
      }
    }
  }
  if (!placed) {
    auto p = partition(ph.costs, ranks, options.partition);
    bound = p.lower_bound;
    proven_max = p.proven_optimal ? p.max_load : -1; // rearranging bins keeps every load
    if (options.strategy == strategy::orch) {
      rank_of = locality_balance(ph.costs, current, stay, topo, p.bin_of, options.locality).rank_of;
    } else {
      rank_of = std::move(p.bin_of);
    }
    ph.loads = bin_loads(ph.costs, rank_of, ranks);
  }
  ph.placement = layout::from_assignment(rank_of, ranks);
  ph.balance = measure_loads(ph.loads, bound);
  ph.proven_optimal = ph.balance.max_load == proven_max || ph.balance.max_load == bound;
  return rank_of;
}

/// A phase that is not balanced (none, llm_only's encoders): it runs where `placement` puts
/// it; fills loads and metrics and returns the rank of every item.
inline std::vector<rank_t> follow_phase(phase_result& ph, const layout& placement) {
  const rank_t ranks = placement.ranks();
  ph.placement = placement;
  const auto follow = placement.rank_of_items();
  std::vector<rank_t> rank_of(follow.begin(), follow.end());
  ph.loads = bin_loads(ph.costs, rank_of, ranks);
  const cost_t bound = lower_bound(ph.costs, ranks);
  ph.balance = measure_loads(ph.loads, bound);
  ph.proven_optimal = ph.balance.max_load == bound;
  return rank_of;
}

/// The exchange `name` from `from` to `to` moving `bytes` per item (the plan keeps the array:
/// callers move in what they no longer need), its inverse and traffic.
inline exchange_result make_exchange(std::string name, const layout& from, const layout& to,
                                     std::vector<bytes_t> bytes, const topology& topo,
                                     bytes_t inter_node_bound) {
  exchange_result x;
  x.name = std::move(name);
  x.forward = make_plan(from, to, std::move(bytes));
  x.backward = inverse(x.forward);
  x.bytes = measure_traffic(x.forward, topo);
  x.inter_node_lower_bound = inter_node_bound;
  return x;
}

} // namespace detail

/// Plans one training step: balances every phase per `options.strategy`, places the bins on
/// ranks, and builds the exchanges between phases, their inverses and the assembly map.
///
/// Phases: one per encoder (over its media items, cost `encoder.cost(length)`), then the LLM
/// (over examples, cost `llm.cost(text + Σ encoder outputs)`). Exchanges: per encoder
/// `<name>.inputs` (raw inputs, owner → encoder rank) and `<name>.features` (encoder rank →
/// LLM rank of the parent example, one hop), then `text` (owner → LLM rank). Ranks without
/// items in a phase take part in every exchange with zero counts.
///
/// Under strategy::orch every phase keeps its items where they are unless balance needs them
/// elsewhere (detail::balance_phase): the LLM keeps examples on their owner, weighing each
/// one's text and feature bytes; then each encoder keeps items on their owner, weighing the
/// raw input plus, when the LLM kept the example there, the features.
///
/// The work runs as a graph of tasks, each starting once what it reads is done: the owner
/// layouts; the LLM phase (beside per_phase's encoder phases); then, once the LLM placement is
/// known, orch's encoder phases, the LLM-side feature layouts, the assembly and the text
/// exchange; each encoder's two exchanges as soon as its phase is placed. With
/// `options.threads` > 1 ready tasks run concurrently, and the result is the same.
/// Complexity: O(n log n) in the items plus the partitioner's budgeted search where one runs;
/// measured in docs/benchmarks.md ("Orchestrator": 2,560 ranks × 32 examples).
/// Determinism: a function of (table, model, topology, options) only — not of
/// options.threads or thread timing; `hash` lets ranks check.
/// Throws: orch::invalid_argument (a media field no encoder consumes, an encoder output above
/// its limit, an inconsistent table or model — naming the example; threads < 1),
/// orch::overflow.
[[nodiscard]] inline step_plan orchestrate(const item_table& table, const model_description& model,
                                           const topology& topo,
                                           const orchestrate_options& options = {}) {
  if (options.threads < 1) {
    throw_invalid_argument("orchestrate: threads must be at least 1, got ", options.threads);
  }
  model.validate();
  const rank_t ranks = topo.ranks();
  table.validate(ranks);
  auto in = detail::resolve_inputs(table, model, options.threads);
  const std::size_t encoders = model.encoders.size();
  const strategy strat = options.strategy;
  const bool balanced = strat == strategy::per_phase || strat == strategy::orch;
  const auto owners = table.owners();

  step_plan sp;
  sp.strategy = strat;
  sp.phases.resize(encoders + 1);
  sp.exchanges.resize(2 * encoders + 1);
  std::vector<std::vector<rank_t>> rank_of(encoders + 1); // per phase, per item
  std::vector<std::uint64_t> plan_hash(sp.exchanges.size());
  std::uint64_t assembly_hash = 0;
  const auto& llm = sp.phases[encoders];
  const auto& llm_rank = rank_of[encoders];

  // ---- the tasks: each writes only its own part of `sp` ----
  const auto llm_phase = [&] {
    phase_result& ph = sp.phases[encoders];
    ph.name = model.llm.name;
    ph.costs = std::move(in.llm_costs);
    if (strat == strategy::none) {
      rank_of[encoders] = detail::follow_phase(ph, sp.owner_examples);
      return;
    }
    // What stays on the owner saves its text and its features.
    std::vector<bytes_t> stay;
    if (strat == strategy::orch) {
      stay.resize(in.text_bytes.size());
      for (std::size_t x = 0; x < stay.size(); ++x) {
        stay[x] = detail::checked_add(in.text_bytes[x], in.example_feature_bytes[x],
                                      "orchestrate: bytes");
      }
    }
    orchestrate_options o = options;
    o.strategy = strat == strategy::llm_only ? strategy::per_phase : strat;
    // Nothing else of length runs beside the LLM phase under orch: its nodes get every thread.
    rank_of[encoders] = detail::balance_phase(ph, owners, stay, topo, o, options.threads);
  };
  const auto encoder_phase = [&](std::size_t e) {
    const auto& items = in.encoders[e];
    phase_result& ph = sp.phases[e];
    ph.costs = items.costs;
    if (!balanced) {
      // none / llm_only: the encoder runs where its example is (owner, LLM rank).
      rank_of[e] = detail::follow_phase(ph, strat == strategy::none ? sp.owner_media[e]
                                                                    : sp.feature_layouts[e]);
      return;
    }
    std::vector<rank_t> home;
    std::vector<bytes_t> stay;
    if (strat == strategy::orch) {
      // Items stay on their owner, where their raw input is; when the LLM keeps the example
      // there too, staying also saves the features. (Preferring the LLM rank of moved
      // examples, whose features are larger than the input, moves fewer bytes in all but
      // sends more across nodes on the bundled trace: 17.7 vs 14.0 GB per step at 512 ranks.)
      home.resize(ph.costs.size());
      stay.resize(ph.costs.size());
      for (std::size_t i = 0; i < home.size(); ++i) {
        const auto x = static_cast<std::size_t>(items.example[i]);
        home[i] = owners[x];
        stay[i] = llm_rank[x] == owners[x]
                      ? detail::checked_add(items.input_bytes[i], items.feature_bytes[i],
                                            "orchestrate: bytes")
                      : items.input_bytes[i];
      }
    }
    rank_of[e] = detail::balance_phase(ph, home, stay, topo, options, 1);
  };
  const auto inputs_exchange = [&](std::size_t e) {
    const auto& ph = sp.phases[e];
    auto& input_bytes = in.encoders[e].input_bytes;
    const auto from = sp.owner_media[e].rank_of_items();
    const bytes_t bound =
        inter_node_lower_bound(ph.costs, from, input_bytes, topo, ph.balance.max_load);
    // The encoder's phase (the only other reader) is done: the plan takes the array.
    sp.exchanges[2 * e] =
        detail::make_exchange(model.encoders[e].name + ".inputs", sp.owner_media[e], ph.placement,
                              std::move(input_bytes), topo, bound);
    plan_hash[2 * e] = sp.exchanges[2 * e].forward.hash();
  };
  const auto features_exchange = [&](std::size_t e) {
    sp.exchanges[2 * e + 1] =
        detail::make_exchange(model.encoders[e].name + ".features", sp.phases[e].placement,
                              sp.feature_layouts[e], in.encoders[e].feature_bytes, topo, 0);
    plan_hash[2 * e + 1] = sp.exchanges[2 * e + 1].forward.hash();
  };
  const auto assemble = [&] {
    sp.assembly = build_assembly(table, llm.placement, sp.feature_layouts, in.encoder_media,
                                 in.media_encoder, in.output_tokens);
    // One hash per field: four independent multiply chains run side by side, where one
    // chain over every field in turn waits on each multiply (~5 segments per example).
    std::array<detail::word_hash, 4> fields;
    for (const auto& seg : sp.assembly.segments) {
      fields[0].add_signed(seg.source);
      fields[1].add_signed(seg.source_token);
      fields[2].add_signed(seg.target_token);
      fields[3].add_signed(seg.tokens);
    }
    detail::word_hash h;
    for (const auto& f : fields) {
      h.add(f.value());
    }
    assembly_hash = h.value();
  };
  const auto text_exchange = [&] {
    const bytes_t bound =
        inter_node_lower_bound(llm.costs, owners, in.text_bytes, topo, llm.balance.max_load);
    sp.exchanges.back() =
        detail::make_exchange("text", sp.owner_examples, llm.placement,
                              {in.text_bytes.begin(), in.text_bytes.end()}, topo, bound);
    plan_hash.back() = sp.exchanges.back().forward.hash();
  };
  const auto feature_route = [&] {
    // Feature bytes leaving their GPU: direct (encoder → LLM) vs via the owner.
    for (std::size_t e = 0; e < encoders; ++e) {
      const auto& items = in.encoders[e];
      for (std::size_t i = 0; i < items.costs.size(); ++i) {
        const auto x = static_cast<std::size_t>(items.example[i]);
        const bytes_t b = items.feature_bytes[i];
        const rank_t at = rank_of[e][i];
        sp.feature_bytes_direct += at != llm_rank[x] ? b : 0;
        sp.feature_bytes_two_hop += (at != owners[x] ? b : 0) + (owners[x] != llm_rank[x] ? b : 0);
      }
    }
  };

  // ---- the graph: a task starts once what it reads is done; among ready tasks the one
  // listed first starts first, so the long chains (the LLM phase, then the encoder phases)
  // are listed first ----
  detail::task_graph graph;
  const std::size_t owner_task =
      graph.add([&] { sp.owner_examples = detail::owner_layout(table, ranks); });
  const std::size_t llm_task =
      strat == strategy::none ? graph.add(llm_phase, {owner_task}) : graph.add(llm_phase);
  std::vector<std::size_t> encoder_task(encoders);
  // per_phase balances the encoders beside the LLM; orch places them once the LLM ranks
  // (where their features go) are known.
  for (std::size_t e = 0; e < encoders && balanced; ++e) {
    encoder_task[e] = strat == strategy::per_phase
                          ? graph.add([&, e] { encoder_phase(e); })
                          : graph.add([&, e] { encoder_phase(e); }, {llm_task});
  }
  const std::size_t owner_media_task = graph.add(
      [&] { sp.owner_media = detail::media_layouts_following(table, in, sp.owner_examples); },
      {owner_task});
  // Each encoder's media on the LLM rank of their example (the LLM-side feature buffers).
  const std::size_t feature_layout_task = graph.add(
      [&] { sp.feature_layouts = detail::media_layouts_following(table, in, llm.placement); },
      {llm_task});
  graph.add(assemble, {feature_layout_task});
  graph.add(text_exchange, {llm_task, owner_task});
  for (std::size_t e = 0; e < encoders && !balanced; ++e) {
    encoder_task[e] = graph.add([&, e] { encoder_phase(e); },
                                {strat == strategy::none ? owner_media_task : feature_layout_task});
  }
  for (std::size_t e = 0; e < encoders; ++e) {
    graph.add([&, e] { inputs_exchange(e); }, {encoder_task[e], owner_media_task});
    graph.add([&, e] { features_exchange(e); }, {encoder_task[e], feature_layout_task});
  }
  std::vector<std::size_t> route_after(encoder_task);
  route_after.push_back(llm_task);
  graph.add(feature_route, route_after);
  graph.run(options.threads);

  for (std::size_t e = 0; e < encoders; ++e) {
    sp.phases[e].name = model.encoders[e].name;
    sp.phases[e].items = in.encoder_media[e];
  }
  sp.media_encoder = std::move(in.media_encoder);
  sp.output_tokens = std::move(in.output_tokens);
  sp.sequence_length = std::move(in.sequence_length);

  detail::word_hash h;
  h.add(static_cast<std::uint64_t>(strat));
  for (const std::uint64_t ph : plan_hash) {
    h.add(ph);
  }
  h.add(assembly_hash);
  sp.hash = h.value();
  return sp;
}

} // namespace orch
