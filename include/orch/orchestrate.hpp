// SPDX-License-Identifier: Apache-2.0
/// The MLLM global orchestrator: one balanced layout per phase (each encoder, the LLM), the
/// exchange plans between phases composed into single hops, their inverses, the assembly map.
#pragma once

#include <orch/assembly.hpp>
#include <orch/config.hpp>
#include <orch/detail/checked.hpp>
#include <orch/detail/hash.hpp>
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

#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

namespace orch {

/// Options of orchestrate().
struct orchestrate_options {
  orch::strategy strategy = strategy::orch;
  partition_options partition{}; ///< used for every balanced phase
  locality_options locality{};   ///< the LLM placement of strategy::orch
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

/// Validated per-item quantities of a step, before any placement.
struct step_inputs {
  std::vector<std::int32_t> media_encoder;         // per table media item
  std::vector<length_t> output_tokens;             // per table media item
  std::vector<std::vector<index_t>> encoder_media; // per encoder: table media, in order
  std::vector<index_t> phase_index;                // per table media: index in its encoder
  std::vector<std::vector<cost_t>> encoder_costs;  // per encoder, per phase item
  std::vector<length_t> sequence_length;           // per example
  std::vector<cost_t> llm_costs;                   // per example
};

inline step_inputs resolve_inputs(const item_table& table, const model_description& model) {
  step_inputs in;
  const auto& names = table.field_names();
  std::vector<std::int32_t> encoder_of_field(names.size(), -1);
  for (std::size_t f = 0; f < names.size(); ++f) {
    encoder_of_field[f] = model.encoder_of_field(names[f]);
  }
  const auto media = static_cast<std::size_t>(table.media_items());
  in.media_encoder.resize(media);
  in.output_tokens.resize(media);
  in.phase_index.resize(media);
  in.encoder_media.resize(model.encoders.size());
  in.encoder_costs.resize(model.encoders.size());
  for (std::size_t m = 0; m < media; ++m) {
    const auto mi = static_cast<index_t>(m);
    const auto field = static_cast<std::size_t>(table.media_field(mi));
    const std::int32_t e = encoder_of_field[field];
    if (e < 0) {
      throw_invalid_argument("orchestrate: example ", table.media_example(mi), " has a '",
                             names[field], "' item, a field no encoder of the model consumes");
    }
    const auto& enc = model.encoders[static_cast<std::size_t>(e)];
    const length_t length = table.media_length(mi);
    const length_t out = enc.output_tokens(length);
    if (enc.max_output_tokens > 0 && out > enc.max_output_tokens) {
      throw_invalid_argument("orchestrate: example ", table.media_example(mi), " has a '",
                             names[field], "' item of length ", length, " whose ", out,
                             " output tokens exceed encoder '", enc.name, "' limit of ",
                             enc.max_output_tokens);
    }
    cost_t cost = 0;
    try {
      cost = enc.cost(length);
    } catch (const overflow& err) {
      throw_overflow("orchestrate: example ", table.media_example(mi), ", encoder '", enc.name,
                     "': ", err.what());
    }
    in.media_encoder[m] = e;
    in.output_tokens[m] = out;
    auto& list = in.encoder_media[static_cast<std::size_t>(e)];
    in.phase_index[m] = static_cast<index_t>(list.size());
    list.push_back(mi);
    in.encoder_costs[static_cast<std::size_t>(e)].push_back(cost);
  }
  const auto examples = static_cast<std::size_t>(table.examples());
  in.sequence_length.resize(examples);
  in.llm_costs.resize(examples);
  for (std::size_t x = 0; x < examples; ++x) {
    const auto xi = static_cast<index_t>(x);
    length_t l = table.text_tokens(xi);
    for (index_t m = table.media_begin(xi); m < table.media_end(xi); ++m) {
      l = checked_add(l, in.output_tokens[static_cast<std::size_t>(m)], "orchestrate: sequence");
    }
    in.sequence_length[x] = l;
    try {
      in.llm_costs[x] = model.llm.cost(l);
    } catch (const overflow& err) {
      throw_overflow("orchestrate: example ", x, ", LLM sequence of ", l, " tokens: ", err.what());
    }
  }
  return in;
}

/// Layout of encoder e's items (phase item i ↔ table media `items[i]`, `phase_index[m]` the
/// inverse map) on the rank of their example in `examples_layout`, ordered there by (slot of
/// the example, position in the example).
/// Complexity: O(examples + media + ranks).
inline layout media_layout_following(const item_table& table, std::span<const index_t> items,
                                     std::span<const std::int32_t> media_encoder,
                                     std::int32_t encoder, std::span<const index_t> phase_index,
                                     const layout& examples_layout) {
  const rank_t ranks = examples_layout.ranks();
  std::vector<index_t> slot_of_item(items.size(), 0);
  std::vector<rank_t> rank_of_item(items.size(), 0);
  const auto order = examples_layout.order();
  const auto first = examples_layout.first_on();
  // Walk each rank's examples in slot order and their media in order: that is the slot order.
  for (std::size_t r = 0; r + 1 < first.size(); ++r) {
    index_t next = 0;
    for (auto p = first[r]; p < first[r + 1]; ++p) {
      const index_t x = order[static_cast<std::size_t>(p)];
      for (index_t m = table.media_begin(x); m < table.media_end(x); ++m) {
        if (media_encoder[static_cast<std::size_t>(m)] == encoder) {
          const auto i = static_cast<std::size_t>(phase_index[static_cast<std::size_t>(m)]);
          rank_of_item[i] = static_cast<rank_t>(r);
          slot_of_item[i] = next++;
        }
      }
    }
  }
  return layout::from_placements(ranks, std::move(rank_of_item), std::move(slot_of_item));
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
/// Complexity: dominated by the partitioner (see orch::partition) and plan building, O(n log n)
/// in the items; ≤ 40 ms at 2,560 ranks × 32 examples (docs/benchmarks.md).
/// Determinism: a function of (table, model, topology, options) only; `hash` lets ranks check.
/// Throws: orch::invalid_argument (a media field no encoder consumes, an encoder output above
/// its limit, an inconsistent table or model — naming the example), orch::overflow.
[[nodiscard]] inline step_plan orchestrate(const item_table& table, const model_description& model,
                                           const topology& topo,
                                           const orchestrate_options& options = {}) {
  model.validate();
  const rank_t ranks = topo.ranks();
  table.validate(ranks);
  auto in = detail::resolve_inputs(table, model);
  const std::size_t encoders = model.encoders.size();
  const auto examples = static_cast<std::size_t>(table.examples());
  const strategy strat = options.strategy;

  step_plan sp;
  sp.strategy = strat;
  const auto owners = table.owners();
  sp.owner_examples = layout::from_placements(
      ranks, std::vector<rank_t>(owners.begin(), owners.end()),
      std::vector<index_t>(table.local_indices().begin(), table.local_indices().end()));
  for (std::size_t e = 0; e < encoders; ++e) {
    sp.owner_media.push_back(detail::media_layout_following(
        table, in.encoder_media[e], in.media_encoder, static_cast<std::int32_t>(e), in.phase_index,
        sp.owner_examples));
  }

  // Bytes each item moves in each exchange.
  std::vector<bytes_t> text_bytes(examples);
  for (std::size_t x = 0; x < examples; ++x) {
    text_bytes[x] = detail::checked_mul(table.text_tokens(static_cast<index_t>(x)),
                                        model.llm.text_bytes_per_token, "orchestrate: text bytes");
  }
  std::vector<std::vector<bytes_t>> input_bytes(encoders);
  std::vector<std::vector<bytes_t>> feature_bytes(encoders);
  for (std::size_t e = 0; e < encoders; ++e) {
    const auto& enc = model.encoders[e];
    for (const index_t m : in.encoder_media[e]) {
      input_bytes[e].push_back(detail::checked_mul(table.media_length(m), enc.input_bytes_per_unit,
                                                   "orchestrate: input bytes"));
      feature_bytes[e].push_back(detail::checked_mul(in.output_tokens[static_cast<std::size_t>(m)],
                                                     enc.feature_bytes_per_token,
                                                     "orchestrate: feature bytes"));
    }
  }

  // ---- the LLM phase ----
  phase_result llm;
  llm.name = model.llm.name;
  llm.costs = in.llm_costs;
  std::vector<rank_t> llm_rank(owners.begin(), owners.end());
  cost_t llm_bound = lower_bound(llm.costs, ranks);
  cost_t proven_max = -1; // a largest load the partitioner proved optimal
  if (strat != strategy::none) {
    auto p = partition(llm.costs, ranks, options.partition);
    llm_bound = p.lower_bound;
    proven_max = p.proven_optimal ? p.max_load : -1;
    if (strat == strategy::orch) {
      // Locality-aware placement: keep examples on their owner unless balance needs them
      // elsewhere. What stays there saves its text and its features (encoders are placed
      // next to both owner and LLM rank below).
      std::vector<bytes_t> stay(text_bytes);
      for (std::size_t e = 0; e < encoders; ++e) {
        for (std::size_t i = 0; i < in.encoder_media[e].size(); ++i) {
          auto& s = stay[static_cast<std::size_t>(table.media_example(in.encoder_media[e][i]))];
          s = detail::checked_add(s, feature_bytes[e][i], "orchestrate: bytes");
        }
      }
      auto placed = locality_balance(llm.costs, owners, stay, topo, p.bin_of, options.locality);
      llm_rank = std::move(placed.rank_of);
    } else {
      llm_rank = std::move(p.bin_of);
    }
  }
  llm.placement =
      strat == strategy::none ? sp.owner_examples : layout::from_assignment(llm_rank, ranks);
  llm.loads = bin_loads(llm.costs, llm_rank, ranks);
  llm.balance = measure_loads(llm.loads, llm_bound);
  llm.proven_optimal = llm.balance.max_load == proven_max || llm.balance.max_load == llm_bound;

  // Each encoder's media on the LLM rank of their example (the LLM-side feature buffers).
  for (std::size_t e = 0; e < encoders; ++e) {
    sp.feature_layouts.push_back(detail::media_layout_following(
        table, in.encoder_media[e], in.media_encoder, static_cast<std::int32_t>(e), in.phase_index,
        llm.placement));
  }

  // ---- encoder phases ----
  for (std::size_t e = 0; e < encoders; ++e) {
    const auto& items = in.encoder_media[e];
    phase_result ph;
    ph.name = model.encoders[e].name;
    ph.items = items;
    ph.costs = std::move(in.encoder_costs[e]);
    std::vector<rank_t> rank_of(items.size());
    cost_t bound = lower_bound(ph.costs, ranks);
    if (strat == strategy::none || strat == strategy::llm_only) {
      // The encoder runs where its example is: the owner, or the LLM rank.
      const auto& follow = strat == strategy::none ? sp.owner_media[e] : sp.feature_layouts[e];
      ph.placement = follow;
      for (std::size_t i = 0; i < items.size(); ++i) {
        rank_of[i] = follow.rank_of(static_cast<index_t>(i));
      }
    } else {
      auto p = partition(ph.costs, ranks, options.partition);
      bound = p.lower_bound;
      ph.proven_optimal = p.proven_optimal; // rearranging bins keeps every load
      if (strat == strategy::orch) {
        // Keep media on their owner unless the balance needs them elsewhere: their raw input
        // is there, and so is the LLM rank of most examples (then the features stay too).
        // locality_balance also weighs the partitioner's bins under node-wise rearrangement
        // and keeps whichever sends fewer bytes across nodes.
        std::vector<rank_t> owner_of(items.size());
        std::vector<bytes_t> stay(items.size());
        for (std::size_t i = 0; i < items.size(); ++i) {
          const auto x = static_cast<std::size_t>(table.media_example(items[i]));
          owner_of[i] = owners[x];
          stay[i] = input_bytes[e][i] + (llm_rank[x] == owners[x] ? feature_bytes[e][i] : 0);
        }
        rank_of =
            locality_balance(ph.costs, owner_of, stay, topo, p.bin_of, options.locality).rank_of;
      } else {
        rank_of = std::move(p.bin_of);
      }
      ph.placement = layout::from_assignment(rank_of, ranks);
    }
    ph.loads = bin_loads(ph.costs, rank_of, ranks);
    ph.balance = measure_loads(ph.loads, bound);
    ph.proven_optimal = ph.proven_optimal || ph.balance.max_load == bound;

    // Feature bytes leaving their GPU: direct (encoder → LLM) vs via the owner.
    for (std::size_t i = 0; i < items.size(); ++i) {
      const auto x = static_cast<std::size_t>(table.media_example(items[i]));
      const bytes_t b = feature_bytes[e][i];
      if (rank_of[i] != llm_rank[x]) {
        sp.feature_bytes_direct += b;
      }
      sp.feature_bytes_two_hop +=
          (rank_of[i] != owners[x] ? b : 0) + (owners[x] != llm_rank[x] ? b : 0);
    }
    sp.phases.push_back(std::move(ph));
  }
  sp.phases.push_back(std::move(llm));

  // ---- exchanges ----
  auto add_exchange = [&](std::string name, const layout& from, const layout& to,
                          std::span<const bytes_t> bytes, bytes_t bound) {
    exchange_result x;
    x.name = std::move(name);
    x.forward = make_plan(from, to, bytes);
    x.backward = inverse(x.forward);
    x.bytes = measure_traffic(x.forward, topo);
    x.inter_node_lower_bound = bound;
    sp.exchanges.push_back(std::move(x));
  };
  for (std::size_t e = 0; e < encoders; ++e) {
    const auto& ph = sp.phases[e];
    const auto& name = model.encoders[e].name;
    const auto from = sp.owner_media[e].rank_of_items();
    add_exchange(name + ".inputs", sp.owner_media[e], ph.placement, input_bytes[e],
                 inter_node_lower_bound(ph.costs, from, input_bytes[e], topo, ph.balance.max_load));
    add_exchange(name + ".features", ph.placement, sp.feature_layouts[e], feature_bytes[e], 0);
  }
  add_exchange(
      "text", sp.owner_examples, sp.llm().placement, text_bytes,
      inter_node_lower_bound(sp.llm().costs, owners, text_bytes, topo, sp.llm().balance.max_load));

  sp.assembly = build_assembly(table, sp.llm().placement, sp.feature_layouts, in.encoder_media,
                               in.media_encoder, in.output_tokens);
  sp.media_encoder = std::move(in.media_encoder);
  sp.output_tokens = std::move(in.output_tokens);
  sp.sequence_length = std::move(in.sequence_length);

  detail::word_hash h;
  h.add(static_cast<std::uint64_t>(strat));
  for (const auto& x : sp.exchanges) {
    h.add(x.forward.hash());
  }
  for (const auto& seg : sp.assembly.segments) {
    h.add_signed(seg.source);
    h.add_signed(seg.source_token);
    h.add_signed(seg.target_token);
    h.add_signed(seg.tokens);
  }
  sp.hash = h.value();
  return sp;
}

} // namespace orch
