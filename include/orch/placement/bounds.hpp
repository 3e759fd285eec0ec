// SPDX-License-Identifier: Apache-2.0
/// Lower bounds on the bytes that must cross nodes: for items placed under a largest-load
/// target (inter_node_lower_bound), and for items that follow their parent's placement
/// (follow_parent_inter_node_lower_bound: an encoder's features going to their example's LLM
/// rank). Both rest on the node quotas of detail/placement/packing.hpp, which node_first also sheds
/// by.
#pragma once

#include <orch/config.hpp>
#include <orch/detail/placement/locality_input.hpp>
#include <orch/detail/placement/packing.hpp>
#include <orch/detail/primitives/checked.hpp>
#include <orch/detail/primitives/uninit_vector.hpp>
#include <orch/topology.hpp>
#include <orch/types.hpp>

#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <limits>
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
  // At most one entry per item: sized once, written in place (no zero-fill, no growth).
  uninit_vector<cost_t> entry_cost(parent_of.size());
  uninit_vector<rank_t> entry_rank(parent_of.size());
  uninit_vector<bytes_t> entry_bytes(parent_of.size());
  std::size_t entries = 0;
  int128 entry_cost_sum = 0; // a parent's cost counts once per node it has bytes on
  bytes_t spread = 0;        // Σ over parents of their bytes off their best node
  // Parent x's items are item_at(0 .. count-1).
  const auto add_parent = [&](std::size_t x, std::size_t count, auto item_at) {
    const std::size_t start = entries;
    for (std::size_t k = 0; k < count; ++k) {
      const auto i = static_cast<std::size_t>(item_at(k));
      if (item_bytes[i] == 0) {
        continue;
      }
      const rank_t at =
          first_rank[static_cast<std::size_t>(node[static_cast<std::size_t>(current_rank[i])])];
      std::size_t j = start;
      while (j < entries && entry_rank[j] != at) {
        ++j;
      }
      if (j == entries) {
        entry_rank[j] = at;
        entry_bytes[j] = 0;
        entry_cost[j] = parent_costs[x];
        entry_cost_sum += parent_costs[x];
        ++entries;
      }
      entry_bytes[j] += item_bytes[i]; // ≤ Σ bytes, checked
    }
    bytes_t all = 0;
    bytes_t best = 0;
    for (std::size_t j = start; j < entries; ++j) {
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
      // The run of one parent's items.
      add_parent(static_cast<std::size_t>(parent_of[a]), b - a,
                 [a](std::size_t k) { return a + k; });
      a = b;
    }
  } else {
    const auto by_parent = items_by_key(parent_of, parents);
    for (std::size_t x = 0; x < parents; ++x) {
      const auto items = by_parent.group(x);
      add_parent(x, items.size(), [items](std::size_t k) { return items[k]; });
    }
  }
  if (entry_cost_sum > std::numeric_limits<cost_t>::max()) {
    throw_overflow(where, ": the parents' costs, counted once per node they have bytes on, sum "
                          "past 2^63 - 1");
  }
  const bytes_t shed =
      node_shed_lower_bound(std::span<const cost_t>(entry_cost.data(), entries),
                            std::span<const rank_t>(entry_rank.data(), entries),
                            std::span<const bytes_t>(entry_bytes.data(), entries), topo, target);
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
