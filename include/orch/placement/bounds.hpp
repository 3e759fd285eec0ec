// SPDX-License-Identifier: Apache-2.0
/// Lower bounds on the bytes that must cross nodes: for items placed under a largest-load
/// target (inter_node_lower_bound), and for items that follow their parent's placement
/// (follow_parent_inter_node_lower_bound: an encoder's features going to their example's LLM
/// rank). Both rest on the node quotas of detail/packing.hpp, which node_first also sheds by.
#pragma once

#include <orch/config.hpp>
#include <orch/detail/locality_input.hpp>
#include <orch/detail/packing.hpp>
#include <orch/detail/primitives/checked.hpp>
#include <orch/topology.hpp>
#include <orch/types.hpp>

#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <ranges>
#include <span>
#include <utility>
#include <vector>

namespace orch {

/// Lower bound on the bytes that must leave their node in any assignment of the items to
/// ranks whose largest load is at most `target`: for each node, its items' cost beyond
/// ranks_per_node × target must leave, and the cheapest way to shed that cost is the
/// fractional knapsack (items by bytes per cost ascending, the last one fractionally, rounded
/// up). Zero-cost items never need to leave.
/// Complexity: O(items log items). Guarantee: a valid lower bound (exact for divisible items).
/// Throws: orch::invalid_argument (sizes differ, negative values, ranks outside the topology,
/// target < 0), orch::overflow.
[[nodiscard]] inline bytes_t inter_node_lower_bound(std::span<const cost_t> costs,
                                                    std::span<const rank_t> current_rank,
                                                    std::span<const bytes_t> item_bytes,
                                                    const topology& topo, cost_t target) {
  detail::check_balance_input(costs, current_rank, item_bytes, topo, "inter_node_lower_bound");
  if (target < 0) {
    throw_invalid_argument("inter_node_lower_bound: negative target ", target);
  }
  return detail::node_shed_lower_bound(costs, current_rank, item_bytes, topo, target);
}

namespace detail {

/// follow_parent_inter_node_lower_bound on validated input (parents in range, values
/// non-negative, Σ bytes fits); `sorted`: parent_of is non-decreasing.
[[nodiscard]] inline bytes_t follow_parent_bound(std::span<const cost_t> parent_costs,
                                                 std::span<const index_t> parent_of,
                                                 std::span<const rank_t> current_rank,
                                                 std::span<const bytes_t> item_bytes,
                                                 const topology& topo, cost_t target, bool sorted) {
  const char* where = "follow_parent_inter_node_lower_bound";
  const std::size_t parents = parent_costs.size();
  // One (parent, node) entry per node a parent has bytes on, with the parent's cost, placed
  // on the node's first rank (the node shed bound reads only the node). A parent has few
  // items, so its entries are found by a scan of the ones it already has.
  const auto node = topo.node_of_ranks();
  std::vector<rank_t> first_rank(static_cast<std::size_t>(topo.nodes()));
  for (rank_t nd = 0; nd < topo.nodes(); ++nd) {
    first_rank[static_cast<std::size_t>(nd)] = topo.rank_at(nd, 0);
  }
  std::vector<cost_t> entry_cost;
  std::vector<rank_t> entry_rank;
  std::vector<bytes_t> entry_bytes;
  entry_cost.reserve(parent_of.size());
  entry_rank.reserve(parent_of.size());
  entry_bytes.reserve(parent_of.size());
  cost_t entry_cost_sum = 0;
  bytes_t spread = 0; // Σ over parents of their bytes off their best node
  const auto add_parent = [&](std::size_t x, auto items) {
    const std::size_t start = entry_rank.size();
    for (const auto item : items) {
      const auto i = static_cast<std::size_t>(item);
      if (item_bytes[i] == 0) {
        continue;
      }
      const rank_t at =
          first_rank[static_cast<std::size_t>(node[static_cast<std::size_t>(current_rank[i])])];
      std::size_t j = start;
      while (j < entry_rank.size() && entry_rank[j] != at) {
        ++j;
      }
      if (j == entry_rank.size()) {
        entry_rank.push_back(at);
        entry_bytes.push_back(0);
        entry_cost.push_back(parent_costs[x]);
        // A parent's cost counts once per node it has bytes on: the sum may exceed Σ costs.
        entry_cost_sum = checked_add(entry_cost_sum, parent_costs[x], where);
      }
      entry_bytes[j] += item_bytes[i]; // ≤ Σ bytes, checked
    }
    bytes_t all = 0;
    bytes_t best = 0;
    for (std::size_t j = start; j < entry_rank.size(); ++j) {
      all += entry_bytes[j];
      best = std::max(best, entry_bytes[j]);
    }
    spread += all - best;
  };
  if (sorted) {
    for (std::size_t a = 0; a < parent_of.size();) {
      std::size_t b = a + 1;
      while (b < parent_of.size() && parent_of[b] == parent_of[a]) {
        ++b;
      }
      add_parent(static_cast<std::size_t>(parent_of[a]),
                 std::views::iota(a, b)); // the run of one parent's items
      a = b;
    }
  } else {
    const auto by_parent = items_by_key(parent_of, parents);
    for (std::size_t x = 0; x < parents; ++x) {
      add_parent(x, by_parent.group(x));
    }
  }
  const bytes_t shed = node_shed_lower_bound(entry_cost, entry_rank, entry_bytes, topo, target);
  return std::max(shed, spread);
}

} // namespace detail

/// Lower bound on the bytes that must cross nodes to bring every item from its rank to the
/// rank its *parent* gets in any placement of the parents whose largest load is at most
/// `target`: the features of an encoder's items travelling to the LLM rank of their example.
/// Item i belongs to parent `parent_of[i]` (in [0, parent_costs.size())), sits on rank
/// `current_rank[i]` and has `item_bytes[i]` bytes; parent x costs `parent_costs[x]`.
///
/// Two relaxations, the larger is returned:
///  - per node: the parents with bytes on node m can keep there at most ranks_per_node(m) ×
///    target of their cost, so a fractional knapsack cover of their excess cost, paid in
///    their bytes on m, leaves m — inter_node_lower_bound's node shed applied to one
///    (parent, node) entry per parent and node it has bytes on (each node judged alone, so a
///    parent may count as kept by several nodes);
///  - per parent: its bytes off the one node holding most of them leave their node whatever
///    the placement.
/// Complexity: O(items + parents + ranks) plus the node shed bound on the (parent, node)
/// entries. Guarantee: a valid lower bound (checked against brute force in the tests).
/// Throws: orch::invalid_argument (sizes differ, negative values, a parent or rank outside its
/// range, target < 0), orch::overflow.
[[nodiscard]] inline bytes_t follow_parent_inter_node_lower_bound(
    std::span<const cost_t> parent_costs, std::span<const index_t> parent_of,
    std::span<const rank_t> current_rank, std::span<const bytes_t> item_bytes, const topology& topo,
    cost_t target) {
  const char* where = "follow_parent_inter_node_lower_bound";
  detail::check_item_arrays(current_rank, item_bytes, topo, where);
  if (parent_of.size() != current_rank.size()) {
    throw_invalid_argument(where, ": ", current_rank.size(), " items but ", parent_of.size(),
                           " parents of items");
  }
  if (target < 0) {
    throw_invalid_argument(where, ": negative target ", target);
  }
  const std::size_t parents = parent_costs.size();
  cost_t cost_sum = 0;
  for (std::size_t x = 0; x < parents; ++x) {
    if (parent_costs[x] < 0) {
      throw_invalid_argument(where, ": parent ", x, " has negative cost ", parent_costs[x]);
    }
    cost_sum = detail::checked_add(cost_sum, parent_costs[x], where);
  }
  bool sorted = true; // parents in non-decreasing order: each parent's items are one run
  for (std::size_t i = 0; i < parent_of.size(); ++i) {
    if (parent_of[i] < 0 || static_cast<std::size_t>(parent_of[i]) >= parents) {
      throw_invalid_argument(where, ": item ", i, " has parent ", parent_of[i], " outside [0, ",
                             parents, ")");
    }
    sorted = sorted && (i == 0 || parent_of[i - 1] <= parent_of[i]);
  }
  static_cast<void>(detail::sum_bytes(item_bytes, where));
  return detail::follow_parent_bound(parent_costs, parent_of, current_rank, item_bytes, topo,
                                     target, sorted);
}

} // namespace orch
