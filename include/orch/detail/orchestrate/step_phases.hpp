// SPDX-License-Identifier: Apache-2.0
/// Internals of orch/orchestrate/orchestrate.hpp: placing one phase (balanced, followed, or under
/// the LLM's per-rank limits) and building one exchange. The checks of orchestrate's options
/// are in step_checks.hpp.
#pragma once

#include <orch/config.hpp>
#include <orch/detail/orchestrate/step_checks.hpp>
#include <orch/detail/primitives/checked.hpp>
#include <orch/exchange/layout.hpp>
#include <orch/exchange/plan.hpp>
#include <orch/orchestrate/step_plan.hpp>
#include <orch/partition/partition.hpp>
#include <orch/placement/engine.hpp>
#include <orch/placement/rearrange.hpp>
#include <orch/quality.hpp>
#include <orch/topology.hpp>
#include <orch/types.hpp>

#include <algorithm>
#include <cstddef>
#include <functional>
#include <span>
#include <string>
#include <utility>
#include <vector>

namespace orch {
namespace detail {

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

/// The LLM phase of a balanced strategy under options.llm's per-rank limits: orch::partition
/// under the limits (max_items_per_bin, and the sequence tokens as second resource); per_phase
/// (and llm_only) puts bin b on rank b, orch maps the bins to ranks with rearrange_bins (every
/// bin whole, so the limits hold, placed node-wise to keep `stay` bytes local). Fills `ph` as
/// balance_phase does.
/// Throws: orch::invalid_argument (options.llm.groups of another length or with an id below
/// −1; both limits with groups of different sizes), orch::infeasible naming the limit (and
/// the example over it).
inline std::vector<rank_t> limited_llm_phase(phase_result& ph, std::span<const rank_t> owners,
                                             std::span<const bytes_t> stay,
                                             std::span<const length_t> tokens, const topology& topo,
                                             const orchestrate_options& options,
                                             const item_describer& describe) {
  const llm_limits& lim = options.llm;
  const rank_t ranks = topo.ranks();
  static_cast<void>(phase_lower_bound(ph, ranks, describe));
  check_group_count(lim, tokens.size(), describe);
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
  check_group_sizes(lim, describe);
  partition_options po = options.partition;
  po.max_items_per_bin = lim.max_examples_per_rank;
  po.groups = lim.groups;
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
                     lim.groups.empty() ? "" : ", with groups", ") was found: ", e.what());
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
/// orch: the placement engine (orch::place, docs/plans.md) at the target LB + slack (LB =
/// max(ceil(Σc/R), max c), slack = options.locality.slack_ppm of LB), with no reference
/// partition: the engine runs orch::partition itself only when its heuristics miss that
/// target. `threads`: for the engine's per-node fill (the phase's own task may run beside
/// others).
inline std::vector<rank_t> balance_phase(phase_result& ph, std::span<const rank_t> current,
                                         std::span<const bytes_t> stay, const topology& topo,
                                         const orchestrate_options& options, int threads,
                                         const item_describer& describe) {
  const rank_t ranks = topo.ranks();
  std::vector<rank_t> rank_of;
  cost_t bound = phase_lower_bound(ph, ranks, describe);
  bool proven = false;
  if (options.strategy == strategy::orch) {
    place_options po;
    po.slack_ppm = options.locality.slack_ppm;
    po.threads = threads;
    po.partition = options.partition;
    po.measure = false; // the step measures its exchanges, bounds at their own targets
    auto placed = place(ph.costs, current, stay, topo, po);
    rank_of = std::move(placed.rank_of);
    ph.loads = std::move(placed.loads);
    bound = placed.lower_bound;
    proven = placed.proven_optimal;
  } else {
    auto p = partition(ph.costs, ranks, options.partition);
    bound = p.lower_bound;
    rank_of = std::move(p.bin_of);
    ph.loads = bin_loads(ph.costs, rank_of, ranks);
    proven =
        (p.proven_optimal && *std::max_element(ph.loads.begin(), ph.loads.end()) == p.max_load);
  }
  ph.placement = layout::from_assignment(rank_of, ranks);
  ph.balance = measure_loads(ph.loads, bound);
  ph.proven_optimal = proven || ph.balance.max_load == bound;
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
  // Each rank's load summed over its items in slot order, in a register: the bound checked
  // that the costs are non-negative and that their total fits, so no rank's sum can overflow
  // (bin_loads would add item by item into memory, each add waiting on the previous store
  // when neighbouring items share a rank, as they do here).
  const auto first = placement.first_on();
  const auto order = placement.order();
  ph.loads.resize(static_cast<std::size_t>(ranks));
  for (std::size_t r = 0; r < ph.loads.size(); ++r) {
    cost_t load = 0;
    for (auto p = static_cast<std::size_t>(first[r]); p < static_cast<std::size_t>(first[r + 1]);
         ++p) {
      load += ph.costs[static_cast<std::size_t>(order[p])];
    }
    ph.loads[r] = load;
  }
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

} // namespace orch
