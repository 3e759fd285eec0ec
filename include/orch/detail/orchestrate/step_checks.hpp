// SPDX-License-Identifier: Apache-2.0
/// Internals of orch/orchestrate/orchestrate.hpp: the checks of orchestrate's options and of
/// the LLM's per-rank limits, each naming the option (and the example or rank) it rejects.
#pragma once

#include <orch/config.hpp>
#include <orch/detail/primitives/checked.hpp>
#include <orch/orchestrate/step_plan.hpp>
#include <orch/partition/algorithm.hpp>
#include <orch/partition/groups.hpp>
#include <orch/partition/options.hpp>
#include <orch/types.hpp>

#include <cstddef>
#include <functional>
#include <span>
#include <string>
#include <vector>

namespace orch {
namespace detail {

/// Names phase item i in an error message ("example 4 (rank 1, local index 0)").
using item_describer = std::function<std::string(std::size_t)>;

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

} // namespace detail
} // namespace orch
