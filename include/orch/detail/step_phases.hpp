// SPDX-License-Identifier: Apache-2.0
/// Internals of orch/orchestrate.hpp: placing one phase (balanced, followed, or under the LLM's
/// per-rank limits), building one exchange, and the checks of orchestrate's options.
#pragma once

#include <orch/config.hpp>
#include <orch/detail/primitives/checked.hpp>
#include <orch/layout.hpp>
#include <orch/partition/partition.hpp>
#include <orch/placement/engine.hpp>
#include <orch/placement/rearrange.hpp>
#include <orch/plan.hpp>
#include <orch/quality.hpp>
#include <orch/step_plan.hpp>
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
                         : !p.groups.empty() ? "groups"
                                             : nullptr;
  if (rejected != nullptr) {
    throw_invalid_argument(
        "orchestrate: options.partition.", rejected,
        " is not supported: it would apply to every phase, whose items differ, and the "
        "locality placement cannot honour it (per-rank limits and keep-together groups of the "
        "LLM phase are options.llm.max_examples_per_rank, max_tokens_per_rank and groups)");
  }
  if (p.time_limit_ms != 0) {
    throw_invalid_argument("orchestrate: options.partition.time_limit_ms = ", p.time_limit_ms,
                           " would make the plan depend on each rank's clock, so ranks would "
                           "disagree; it must be 0 (work_budget bounds the search)");
  }
  const partition_algorithm algo = p.algorithm;
  if (options.llm.any() && options.strategy != strategy::none &&
      algo != partition_algorithm::automatic && algo != partition_algorithm::lpt &&
      algo != partition_algorithm::lpt_ls) {
    // The limited LLM phase partitions under per-rank constraints, which only these honour;
    // said here, by orchestrate's option names, rather than by partition's.
    throw_invalid_argument("orchestrate: options.partition.algorithm = \"", to_string(algo),
                           "\" cannot honour options.llm's limits (max_examples_per_rank, "
                           "max_tokens_per_rank, groups); use auto, lpt or lpt+ls, or no limits");
  }
  if (options.llm.max_examples_per_rank < 0 || options.llm.max_tokens_per_rank < 0) {
    throw_invalid_argument("orchestrate: options.llm limits must be non-negative, got "
                           "max_examples_per_rank = ",
                           options.llm.max_examples_per_rank,
                           " and max_tokens_per_rank = ", options.llm.max_tokens_per_rank);
  }
}

/// options.llm.groups has one id per example (or none), each ≥ no_group (−1), whatever the
/// strategy (so that none and the balanced strategies reject it alike, by orchestrate's option
/// name rather than partition's). Throws: orch::invalid_argument naming the example.
inline void check_group_count(const llm_limits& lim, std::size_t examples,
                              const item_describer& describe) {
  if (!lim.groups.empty() && lim.groups.size() != examples) {
    throw_invalid_argument("orchestrate: options.llm.groups has ", lim.groups.size(),
                           " entries for ", examples, " examples (one group id per example)");
  }
  for (std::size_t x = 0; x < lim.groups.size(); ++x) {
    if (lim.groups[x] < no_group) {
      throw_invalid_argument("orchestrate: options.llm.groups gives ", describe(x), " group id ",
                             lim.groups[x], " (ids are ≥ 0, or −1 for an example alone)");
    }
  }
}

/// Partition cannot combine a per-bin item limit with a second resource when the groups
/// differ in size: said up front by orchestrate's option names (max_examples_per_rank,
/// max_tokens_per_rank, groups) rather than by partition's.
/// Throws: orch::invalid_argument naming two groups (or lone examples) of different sizes.
inline void check_group_sizes(const llm_limits& lim, const item_describer& describe) {
  if (lim.groups.empty() || lim.max_examples_per_rank <= 0 || lim.max_tokens_per_rank <= 0) {
    return;
  }
  const auto g = contract_groups(std::vector<cost_t>(lim.groups.size(), 0), lim.groups, {},
                                 "orchestrate: options.llm.groups");
  if (g.equal_sizes()) {
    return;
  }
  const auto size_of = [&](std::size_t j) {
    return g.id[j] == no_group ? message(describe(g.first_item[j]), " is alone")
                               : message("group ", g.id[j], " has ", g.size[j],
                                         g.size[j] == 1 ? " example" : " examples");
  };
  std::size_t j = 1;
  while (g.size[j] == g.size[0]) {
    ++j;
  }
  throw_invalid_argument("orchestrate: options.llm.max_examples_per_rank and max_tokens_per_rank "
                         "cannot both be set with options.llm.groups of different sizes (",
                         size_of(0), ", ", size_of(j),
                         "); use groups of one size, or only one of the two limits");
}

/// Strategy none keeps every example on its owner: checks the owners against options.llm's
/// limits and groups. Throws: orch::invalid_argument (as check_group_count),
/// orch::infeasible naming the rank (or the group and its examples) and the limit.
inline void check_owner_limits(std::span<const rank_t> owners, std::span<const length_t> tokens,
                               rank_t ranks, const llm_limits& lim,
                               const item_describer& describe = {}) {
  const item_describer name = [&](std::size_t x) {
    return describe ? describe(x) : message("example ", x);
  };
  check_group_count(lim, owners.size(), name);
  if (!lim.groups.empty()) {
    // A group's examples must share an owner: the first owner seen per group id.
    const auto g = contract_groups(std::vector<cost_t>(owners.size(), 0), lim.groups, {},
                                   "orchestrate: options.llm.groups");
    std::vector<rank_t> owner_of_group(g.count(), -1);
    std::vector<std::size_t> first_of_group(g.count(), 0);
    for (std::size_t x = 0; x < owners.size(); ++x) {
      const std::size_t j = g.super_of[x];
      if (owner_of_group[j] < 0) {
        owner_of_group[j] = owners[x];
        first_of_group[j] = x;
      } else if (owner_of_group[j] != owners[x]) {
        throw_infeasible("orchestrate: strategy none keeps examples on their owner, and ",
                         g.name(j), " spans ", name(first_of_group[j]), " and ", name(x),
                         " (options.llm.groups)");
      }
    }
  }
  std::vector<index_t> count(static_cast<std::size_t>(ranks), 0);
  // A rank's tokens saturate at 2^63 - 1 (above any limit, and reported as "more than").
  std::vector<length_t> held(static_cast<std::size_t>(ranks), 0);
  for (std::size_t x = 0; x < owners.size(); ++x) {
    const auto r = static_cast<std::size_t>(owners[x]);
    ++count[r];
    if (__builtin_add_overflow(held[r], tokens[x], &held[r])) {
      held[r] = max_cost;
    }
  }
  for (std::size_t r = 0; r < count.size(); ++r) {
    if (lim.max_examples_per_rank > 0 && count[r] > lim.max_examples_per_rank) {
      throw_infeasible("orchestrate: strategy none keeps examples on their owner, and rank ", r,
                       " holds ", count[r], " examples, above options.llm.max_examples_per_rank = ",
                       lim.max_examples_per_rank);
    }
    if (lim.max_tokens_per_rank > 0 && held[r] > lim.max_tokens_per_rank) {
      throw_infeasible(
          "orchestrate: strategy none keeps examples on their owner, and rank ", r, " holds ",
          held[r] == max_cost ? std::string("more than 2^63 - 1") : std::to_string(held[r]),
          " LLM tokens, above options.llm.max_tokens_per_rank = ", lim.max_tokens_per_rank);
    }
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

} // namespace orch
