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
#include <orch/media_chunks.hpp>
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

  /// Whether any limit is set.
  [[nodiscard]] bool any() const noexcept {
    return max_examples_per_rank > 0 || max_tokens_per_rank > 0;
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
  /// bytes across nodes (fractional knapsack per node; 0 for feature exchanges, whose bound
  /// depends on two placements).
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
  /// feature buffer holds them in this layout's slot order, which the assembly reads.
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
    throw_invalid_argument("step_plan: no encoder named '", name, "' (encoders: ", names(false),
                           ")");
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

namespace detail {

/// Names phase item i in an error message ("example 4 (rank 1, local index 0)").
using item_describer = std::function<std::string(std::size_t)>;

/// lower_bound(ph.costs, ranks), with an overflow of the costs' sum reported by phase and by
/// the item at which the running sum leaves int64 (the bound is the first sum a phase takes).
/// Throws: orch::overflow naming the phase, the item and its cost.
[[nodiscard]] inline cost_t phase_lower_bound(const phase_result& ph, rank_t ranks,
                                              const item_describer& describe) {
  try {
    return lower_bound(ph.costs, ranks);
  } catch (const overflow&) {
    cost_t sum = 0;
    for (std::size_t i = 0; i < ph.costs.size(); ++i) {
      if (__builtin_add_overflow(sum, ph.costs[i], &sum)) {
        throw_overflow("orchestrate: phase '", ph.name, "': the costs of its items sum past ",
                       "2^63 - 1 at ", describe(i), ", cost ", ph.costs[i],
                       " (scale the model's cost coefficients down)");
      }
    }
    throw;
  }
}

/// Rejects options orchestrate cannot honour, naming the option.
/// Throws: orch::invalid_argument.
inline void check_options(const orchestrate_options& options) {
  if (options.threads < 1) {
    throw_invalid_argument("orchestrate: options.threads must be at least 1, got ",
                           options.threads);
  }
  const partition_options& p = options.partition;
  const char* rejected = p.max_items_per_bin != 0 ? "max_items_per_bin"
                         : p.equal_counts         ? "equal_counts"
                         : !p.second_resource.empty() || p.second_capacity != 0
                             ? "second_resource / second_capacity"
                         : !p.speeds.empty() ? "speeds"
                                             : nullptr;
  if (rejected != nullptr) {
    throw_invalid_argument(
        "orchestrate: options.partition.", rejected,
        " is not supported: it would apply to every phase, whose items differ, and the "
        "locality placement cannot honour it (per-rank limits of the LLM phase are "
        "options.llm.max_examples_per_rank and options.llm.max_tokens_per_rank)");
  }
  if (p.time_limit_ms != 0) {
    throw_invalid_argument("orchestrate: options.partition.time_limit_ms = ", p.time_limit_ms,
                           " would make the plan depend on each rank's clock, so ranks would "
                           "disagree; it must be 0 (work_budget bounds the search)");
  }
  if (options.llm.max_examples_per_rank < 0 || options.llm.max_tokens_per_rank < 0) {
    throw_invalid_argument("orchestrate: options.llm limits must be non-negative, got "
                           "max_examples_per_rank = ",
                           options.llm.max_examples_per_rank,
                           " and max_tokens_per_rank = ", options.llm.max_tokens_per_rank);
  }
}

/// Strategy none keeps every example on its owner: checks the owners against options.llm's
/// limits. Throws: orch::infeasible naming the rank and the limit.
inline void check_owner_limits(std::span<const rank_t> owners, std::span<const length_t> tokens,
                               rank_t ranks, const llm_limits& lim) {
  std::vector<index_t> count(static_cast<std::size_t>(ranks), 0);
  std::vector<length_t> held(static_cast<std::size_t>(ranks), 0);
  for (std::size_t x = 0; x < owners.size(); ++x) {
    const auto r = static_cast<std::size_t>(owners[x]);
    ++count[r];
    held[r] = checked_add(held[r], tokens[x], "orchestrate: LLM tokens of a rank");
  }
  for (std::size_t r = 0; r < count.size(); ++r) {
    if (lim.max_examples_per_rank > 0 && count[r] > lim.max_examples_per_rank) {
      throw_infeasible("orchestrate: strategy none keeps examples on their owner, and rank ", r,
                       " holds ", count[r], " examples, above options.llm.max_examples_per_rank = ",
                       lim.max_examples_per_rank);
    }
    if (lim.max_tokens_per_rank > 0 && held[r] > lim.max_tokens_per_rank) {
      throw_infeasible("orchestrate: strategy none keeps examples on their owner, and rank ", r,
                       " holds ", held[r], " LLM tokens, above options.llm.max_tokens_per_rank = ",
                       lim.max_tokens_per_rank);
    }
  }
}

/// The LLM phase of a balanced strategy under options.llm's per-rank limits: orch::partition
/// under the limits (max_items_per_bin, and the sequence tokens as second resource); per_phase
/// (and llm_only) puts bin b on rank b, orch maps the bins to ranks with rearrange_bins (every
/// bin whole, so the limits hold, placed node-wise to keep `stay` bytes local). Fills `ph` as
/// balance_phase does.
/// Throws: orch::infeasible naming the limit (and the example over it).
inline std::vector<rank_t> limited_llm_phase(phase_result& ph, std::span<const rank_t> owners,
                                             std::span<const bytes_t> stay,
                                             std::span<const length_t> tokens, const topology& topo,
                                             const orchestrate_options& options,
                                             const item_describer& describe) {
  const llm_limits& lim = options.llm;
  const rank_t ranks = topo.ranks();
  static_cast<void>(phase_lower_bound(ph, ranks, describe));
  for (std::size_t x = 0; x < tokens.size() && lim.max_tokens_per_rank > 0; ++x) {
    if (tokens[x] > lim.max_tokens_per_rank) {
      throw_infeasible(
          "orchestrate: ", describe(x), " has ", tokens[x],
          " LLM tokens, above options.llm.max_tokens_per_rank = ", lim.max_tokens_per_rank);
    }
  }
  const auto examples = static_cast<index_t>(tokens.size());
  if (lim.max_examples_per_rank > 0 &&
      examples > static_cast<int128>(lim.max_examples_per_rank) * ranks) {
    throw_infeasible("orchestrate: ", examples, " examples do not fit ", ranks,
                     " ranks of options.llm.max_examples_per_rank = ", lim.max_examples_per_rank);
  }
  partition_options po = options.partition;
  po.max_items_per_bin = lim.max_examples_per_rank;
  if (lim.max_tokens_per_rank > 0) {
    po.second_resource = tokens;
    po.second_capacity = lim.max_tokens_per_rank;
  }
  partition_result p;
  try {
    p = partition(ph.costs, ranks, po);
  } catch (const infeasible& e) {
    throw_infeasible("orchestrate: no placement of the LLM phase within options.llm "
                     "(max_examples_per_rank = ",
                     lim.max_examples_per_rank, ", max_tokens_per_rank = ", lim.max_tokens_per_rank,
                     ") was found: ", e.what());
  }
  std::vector<rank_t> rank_of;
  if (options.strategy == strategy::orch) {
    const auto mapped = rearrange_bins(p.bin_of, owners, stay, topo);
    rank_of.resize(p.bin_of.size());
    for (std::size_t x = 0; x < rank_of.size(); ++x) {
      rank_of[x] = mapped.rank_of_bin[static_cast<std::size_t>(p.bin_of[x])];
    }
  } else {
    rank_of = std::move(p.bin_of);
  }
  ph.loads = bin_loads(ph.costs, rank_of, ranks);
  ph.placement = layout::from_assignment(rank_of, ranks);
  ph.balance = measure_loads(ph.loads, p.lower_bound);
  ph.proven_optimal = (p.proven_optimal && ph.balance.max_load == p.max_load) ||
                      ph.balance.max_load == p.lower_bound;
  return rank_of;
}

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
                                         const orchestrate_options& options, int threads,
                                         const item_describer& describe) {
  const rank_t ranks = topo.ranks();
  std::vector<rank_t> rank_of;
  cost_t bound = phase_lower_bound(ph, ranks, describe);
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
inline std::vector<rank_t> follow_phase(phase_result& ph, const layout& placement,
                                        const item_describer& describe) {
  const rank_t ranks = placement.ranks();
  const cost_t bound = phase_lower_bound(ph, ranks, describe);
  ph.placement = placement;
  const auto follow = placement.rank_of_items();
  std::vector<rank_t> rank_of(follow.begin(), follow.end());
  ph.loads = bin_loads(ph.costs, rank_of, ranks);
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
/// Phases: one per encoder (over its media chunks, cost `encoder.cost(length)`: an item
/// longer than its field's chunk_length is cut into chunks, each its own phase item, see
/// media_chunks), then the LLM (over examples, cost `llm.cost(text + Σ encoder outputs)`).
/// Exchanges: per encoder `<name>.inputs` (raw inputs, owner → encoder rank) and
/// `<name>.features` (encoder rank → LLM rank of the parent example, one hop), then `text`
/// (owner → LLM rank). Ranks without items in a phase take part in every exchange with zero
/// counts.
///
/// Under strategy::orch every phase keeps its items where they are unless balance needs them
/// elsewhere (detail::balance_phase): the LLM keeps examples on their owner, weighing each
/// one's text and feature bytes; then each encoder keeps items on their owner, weighing the
/// raw input plus, when the LLM kept the example there, the features. options.llm's per-rank
/// limits are honoured by every strategy (llm_limits).
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
/// Throws: orch::invalid_argument (a media field no encoder consumes — listing the model's
/// fields —, an encoder output above its limit, an inconsistent table or model, naming the
/// example by index, owner rank and local index; an option orchestrate cannot honour, naming
/// it), orch::infeasible (options.llm limits no placement meets, naming the limit),
/// orch::overflow (naming the phase and the example).
[[nodiscard]] inline step_plan orchestrate(const item_table& user_table,
                                           const model_description& model, const topology& topo,
                                           const orchestrate_options& options = {}) {
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
  std::vector<layout> owner_media;     // per encoder: its items on their example's owner
  std::vector<layout> feature_layouts; // per encoder: its items on their example's LLM rank
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

  // ---- the tasks: each writes only its own part of `sp` ----
  const auto llm_phase = [&] {
    phase_result& ph = sp.llm;
    ph.name = model.llm.name;
    ph.costs = std::move(in.llm_costs);
    if (strat == strategy::none) {
      if (options.llm.any()) {
        detail::check_owner_limits(owners, in.sequence_length, ranks, options.llm);
      }
      rank_of[encoders] = detail::follow_phase(ph, sp.owner_examples, example_name);
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
    ph.costs = items.costs;
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
      for (std::size_t i = 0; i < home.size(); ++i) {
        const auto x = static_cast<std::size_t>(items.example[i]);
        home[i] = owners[x];
        stay[i] = llm_rank[x] == owners[x]
                      ? detail::checked_add(items.input_bytes[i], items.feature_bytes[i],
                                            "orchestrate: bytes")
                      : items.input_bytes[i];
      }
    }
    rank_of[e] = detail::balance_phase(ph, home, stay, topo, options, 1, chunk_name(e));
  };
  const auto inputs_exchange = [&](std::size_t e) {
    const auto& ph = sp.encoders[e].phase;
    auto& input_bytes = in.encoders[e].input_bytes;
    const auto from = owner_media[e].rank_of_items();
    const bytes_t bound =
        inter_node_lower_bound(ph.costs, from, input_bytes, topo, ph.balance.max_load);
    // The encoder's phase (the only other reader) is done: the plan takes the array.
    sp.encoders[e].inputs =
        detail::make_exchange(model.encoders[e].name + ".inputs", owner_media[e], ph.placement,
                              std::move(input_bytes), topo, bound);
    plan_hash[2 * e] = sp.encoders[e].inputs.forward.hash();
  };
  const auto features_exchange = [&](std::size_t e) {
    sp.encoders[e].features =
        detail::make_exchange(model.encoders[e].name + ".features", sp.encoders[e].phase.placement,
                              feature_layouts[e], in.encoders[e].feature_bytes, topo, 0);
    plan_hash[2 * e + 1] = sp.encoders[e].features.forward.hash();
  };
  const auto assemble = [&] {
    sp.assembly = build_assembly(table, llm.placement, feature_layouts, in.encoder_media,
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
    sp.text = detail::make_exchange("text", sp.owner_examples, llm.placement,
                                    {in.text_bytes.begin(), in.text_bytes.end()}, topo, bound);
    plan_hash.back() = sp.text.forward.hash();
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
      [&] { owner_media = detail::media_layouts_following(table, in, sp.owner_examples); },
      {owner_task});
  // Each encoder's media on the LLM rank of their example (the LLM-side feature buffers).
  const std::size_t feature_layout_task = graph.add(
      [&] { feature_layouts = detail::media_layouts_following(table, in, llm.placement); },
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
