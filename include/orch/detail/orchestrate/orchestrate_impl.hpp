// SPDX-License-Identifier: Apache-2.0
/// The definition of orch::orchestrate (declared in orch/orchestrate/orchestrate.hpp): included by
/// that header in header-only mode (inline), compiled once into orch::compiled
/// (src/orchestrate.cpp) in compiled mode.
#pragma once

#include <orch/config.hpp>
#include <orch/detail/orchestrate/step_inputs.hpp>
#include <orch/detail/orchestrate/step_layouts.hpp>
#include <orch/detail/orchestrate/step_phases.hpp>
#include <orch/detail/primitives/checked.hpp>
#include <orch/detail/primitives/hash.hpp>
#include <orch/detail/primitives/parallel.hpp>
#include <orch/exchange/layout.hpp>
#include <orch/exchange/plan.hpp>
#include <orch/locality.hpp>
#include <orch/orchestrate/assembly.hpp>
#include <orch/orchestrate/build_assembly.hpp>
#include <orch/orchestrate/item_table.hpp>
#include <orch/orchestrate/media_chunks.hpp>
#include <orch/orchestrate/model.hpp>
#include <orch/orchestrate/orchestrate.hpp>
#include <orch/orchestrate/step_plan.hpp>
#include <orch/orchestrate/strategy.hpp>
#include <orch/partition/partition.hpp>
#include <orch/quality.hpp>
#include <orch/topology.hpp>
#include <orch/types.hpp>

#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <functional>
#include <span>
#include <string>
#include <string_view>
#include <vector>

// In compiled mode only orch::compiled's own source may define orchestrate() (once, not
// inline); a user TU that included this header there would define it a second time.
#if defined(ORCH_COMPILED) && !defined(ORCH_COMPILED_LIBRARY_SOURCE)
#error                                                                                             \
    "with ORCH_COMPILED, orch::compiled defines orchestrate(): include <orch/orchestrate/orchestrate.hpp>"
#endif

namespace orch {

ORCH_INLINE step_plan orchestrate(const item_table& user_table, const model_description& model,
                                  const topology& topo, const orchestrate_options& options) {
  detail::check_options(options);
  model.validate();
  const rank_t ranks = topo.ranks();
  user_table.validate(ranks);
  step_plan sp;
  // Chunked media: the planned table has one media item per chunk (the user's own when no
  // item is cut, without a copy).
  sp.chunks = media_chunks::make(user_table, model);
  const item_table chunked = sp.chunks.cut() ? sp.chunks.apply(user_table) : item_table{};
  const item_table& table = sp.chunks.cut() ? chunked : user_table;
  auto in = detail::resolve_inputs(table, model, options.threads);
  const std::size_t encoders = model.encoders.size();
  const strategy strat = options.strategy;
  const bool balanced = strat == strategy::per_phase || strat == strategy::orch;
  const auto owners = table.owners();

  sp.strategy = strat;
  sp.encoders.resize(encoders);
  std::vector<std::vector<rank_t>> rank_of(encoders + 1); // per phase, per item
  std::vector<std::uint64_t> plan_hash(2 * encoders + 1);
  std::vector<layout> owner_media; // per encoder: its items on their example's owner
  // Per encoder: its items on their example's LLM rank, in the order the features exchange
  // delivers them (see the graph below), so that no LLM rank unpacks its features.
  std::vector<layout> feature_layouts;
  std::uint64_t assembly_hash = 0;
  const auto& llm = sp.llm;
  const auto& llm_rank = rank_of[encoders];
  const detail::item_describer example_name = [&](std::size_t x) {
    return detail::describe_example(user_table, static_cast<index_t>(x));
  };
  const auto chunk_name = [&](std::size_t e) -> detail::item_describer {
    return [&, e](std::size_t i) {
      const index_t c = in.encoder_media[e][i];
      const index_t m = sp.chunks.media_of(c);
      return detail::describe_example(user_table, in.encoders[e].example[i]) + ", media item " +
             std::to_string(m) + (sp.chunks.cut() ? ", chunk " + std::to_string(c) : "");
    };
  };

  // What an example or item saves by staying on its owner (a sum of sizes each checked to
  // fit int64); the name is built only for the error.
  const auto saved_bytes = [](bytes_t a, bytes_t b, const detail::item_describer& name,
                              std::size_t i, const char* what) {
    bytes_t sum = 0;
    if (__builtin_add_overflow(a, b, &sum)) {
      throw_overflow("orchestrate: ", name(i), ": bytes saved by staying on the owner (", what,
                     "): ", a, " + ", b, " overflows int64");
    }
    return sum;
  };

  // ---- the tasks: each writes only its own part of `sp` ----
  const auto llm_phase = [&] {
    phase_result& ph = sp.llm;
    ph.name = model.llm.name;
    ph.costs = std::move(in.llm_costs);
    if (strat == strategy::none) {
      if (options.llm.any()) {
        detail::check_owner_limits(owners, in.sequence_length, ranks, options.llm, example_name);
      }
      rank_of[encoders] = detail::follow_phase(ph, sp.owner_examples, example_name);
      return;
    }
    // What stays on the owner saves its text and its features.
    std::vector<bytes_t> stay;
    if (strat == strategy::orch) {
      stay.resize(in.text_bytes.size());
      for (std::size_t x = 0; x < stay.size(); ++x) {
        stay[x] = saved_bytes(in.text_bytes[x], in.example_feature_bytes[x], example_name, x,
                              "text + features");
      }
    }
    orchestrate_options o = options;
    o.strategy = strat == strategy::llm_only ? strategy::per_phase : strat;
    if (options.llm.any()) {
      rank_of[encoders] =
          detail::limited_llm_phase(ph, owners, stay, in.sequence_length, topo, o, example_name);
      return;
    }
    // Nothing else of length runs beside the LLM phase under orch: its nodes get every thread.
    rank_of[encoders] =
        detail::balance_phase(ph, owners, stay, topo, o, options.threads, example_name);
  };
  const auto encoder_phase = [&](std::size_t e) {
    const auto& items = in.encoders[e];
    phase_result& ph = sp.encoders[e].phase;
    ph.name = model.encoders[e].name;
    ph.costs = std::move(in.encoders[e].costs); // nothing else reads the array: the phase takes it
    if (!balanced) {
      // none / llm_only: the encoder runs where its example is (owner, LLM rank).
      rank_of[e] = detail::follow_phase(
          ph, strat == strategy::none ? owner_media[e] : feature_layouts[e], chunk_name(e));
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
      const detail::item_describer item_name = chunk_name(e);
      for (std::size_t i = 0; i < home.size(); ++i) {
        const auto x = static_cast<std::size_t>(items.example[i]);
        home[i] = owners[x];
        stay[i] = llm_rank[x] == owners[x]
                      ? saved_bytes(items.input_bytes[i], items.feature_bytes[i], item_name, i,
                                    "input + features")
                      : items.input_bytes[i];
      }
    }
    rank_of[e] = detail::balance_phase(ph, home, stay, topo, options, 1, chunk_name(e));
  };
  // An exchange's inter-node lower bound is the fewest bytes that any placement within its
  // phase's largest load must move across nodes; the step's own placement is one of them, so
  // the bound is 0 whenever the exchange keeps every byte on its node (always under none):
  // it is computed only otherwise.
  const auto inputs_exchange = [&](std::size_t e) {
    const auto& ph = sp.encoders[e].phase;
    auto& x = sp.encoders[e].inputs;
    // The encoder's phase (the only other reader) is done: the plan takes the array.
    x = detail::make_exchange(model.encoders[e].name + ".inputs", owner_media[e], ph.placement,
                              std::move(in.encoders[e].input_bytes), topo, 0);
    if (x.bytes.inter_node > 0) {
      x.inter_node_lower_bound =
          inter_node_lower_bound(ph.costs, owner_media[e].rank_of_items(), x.forward.item_bytes(),
                                 topo, ph.balance.max_load);
    }
    plan_hash[2 * e] = x.forward.hash();
  };
  const auto features_exchange = [&](std::size_t e) {
    const auto& items = in.encoders[e];
    auto& x = sp.encoders[e].features;
    x = detail::make_exchange(model.encoders[e].name + ".features", sp.encoders[e].phase.placement,
                              feature_layouts[e], items.feature_bytes, topo, 0);
    // Given where the encoder ran, the fewest feature bytes any LLM placement within the LLM
    // phase's largest load must move across nodes (0 under none and llm_only, see above).
    // The step's arrays are valid (ranks, examples, sizes, sums).
    if (x.bytes.inter_node > 0) {
      x.inter_node_lower_bound = detail::follow_parent_bound(
          llm.costs, items.example, rank_of[e], items.feature_bytes, topo, llm.balance.max_load,
          std::is_sorted(items.example.begin(), items.example.end()));
    }
    plan_hash[2 * e + 1] = sp.encoders[e].features.forward.hash();
  };
  const auto assemble = [&] {
    // build_assembly, hashing the segments as it writes them (~5 segments per example).
    sp.assembly =
        detail::assemble_sequences<true>(table, llm.placement, feature_layouts, in.encoder_media,
                                         in.media_encoder, in.output_tokens, &assembly_hash);
  };
  const auto text_exchange = [&] {
    sp.text = detail::make_exchange("text", sp.owner_examples, llm.placement,
                                    {in.text_bytes.begin(), in.text_bytes.end()}, topo, 0);
    if (sp.text.bytes.inter_node > 0) {
      sp.text.inter_node_lower_bound =
          inter_node_lower_bound(llm.costs, owners, in.text_bytes, topo, llm.balance.max_load);
    }
    plan_hash.back() = sp.text.forward.hash();
  };
  const auto feature_route = [&] {
    // Feature bytes leaving their GPU: direct (encoder → LLM) vs via the owner.
    for (std::size_t e = 0; e < encoders; ++e) {
      const auto& items = in.encoders[e];
      for (std::size_t i = 0; i < items.example.size(); ++i) {
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
      [&] { owner_media = detail::media_layouts_following(table, in, sp.owner_examples); },
      {owner_task});
  // Each encoder's media on the LLM rank of their example (the LLM-side feature buffers), in
  // arrival order. An encoder that follows its examples (none, llm_only) runs them in example
  // order on the rank whose layout it follows, so example order is arrival order there (and
  // llm_only's encoder needs the layout before it runs); a balanced encoder's items arrive by
  // (encoder rank, slot), known once it is placed.
  std::vector<std::size_t> feature_layout_task(encoders);
  if (balanced) {
    feature_layouts.resize(encoders);
    for (std::size_t e = 0; e < encoders; ++e) {
      feature_layout_task[e] = graph.add(
          [&, e] {
            feature_layouts[e] = detail::layout_in_arrival_order(sp.encoders[e].phase.placement,
                                                                 in.encoders[e].example, llm_rank);
          },
          {encoder_task[e], llm_task});
    }
  } else if (strat == strategy::none) {
    // The LLM runs every example on its owner, in the owner's slots: the media on their LLM
    // rank are the owner's media layouts (shared arrays, not a second walk building the same).
    const std::size_t all = graph.add([&] { feature_layouts = owner_media; }, {owner_media_task});
    std::fill(feature_layout_task.begin(), feature_layout_task.end(), all);
  } else {
    const std::size_t all = graph.add(
        [&] { feature_layouts = detail::media_layouts_following(table, in, llm.placement); },
        {llm_task});
    std::fill(feature_layout_task.begin(), feature_layout_task.end(), all);
  }
  std::vector<std::size_t> assemble_after(feature_layout_task);
  assemble_after.push_back(llm_task);
  graph.add(assemble, assemble_after);
  graph.add(text_exchange, {llm_task, owner_task});
  for (std::size_t e = 0; e < encoders && !balanced; ++e) {
    encoder_task[e] =
        graph.add([&, e] { encoder_phase(e); },
                  {strat == strategy::none ? owner_media_task : feature_layout_task[e]});
  }
  for (std::size_t e = 0; e < encoders; ++e) {
    graph.add([&, e] { inputs_exchange(e); }, {encoder_task[e], owner_media_task});
    graph.add([&, e] { features_exchange(e); }, {encoder_task[e], feature_layout_task[e]});
  }
  std::vector<std::size_t> route_after(encoder_task);
  route_after.push_back(llm_task);
  graph.add(feature_route, route_after);
  graph.run(options.threads);

  for (std::size_t e = 0; e < encoders; ++e) {
    sp.encoders[e].phase.items = std::move(in.encoder_media[e]);
    sp.encoders[e].owner_media = std::move(owner_media[e]);
    sp.encoders[e].feature_layout = std::move(feature_layouts[e]);
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
