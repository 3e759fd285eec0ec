// SPDX-License-Identifier: Apache-2.0
/// Locality: the node-wise rearrangement of balanced bins onto ranks, the bound on bytes that
/// must cross nodes, and balancing that keeps items where they are (traffic by class:
/// orch/traffic.hpp, included here).
#pragma once

#include <orch/config.hpp>
#include <orch/detail/checked.hpp>
#include <orch/detail/keep_local.hpp>
#include <orch/detail/locality_input.hpp>
#include <orch/detail/node_first.hpp>
#include <orch/detail/sparse_assignment.hpp>
#include <orch/locality_options.hpp>
#include <orch/partition/partition.hpp>
#include <orch/partition/result.hpp>
#include <orch/plan.hpp>
#include <orch/quality.hpp>
#include <orch/topology.hpp>
#include <orch/traffic.hpp>
#include <orch/types.hpp>

#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <span>
#include <string_view>
#include <utility>
#include <vector>

namespace orch {

/// Result of rearrange_bins: where each balanced bin goes and what that keeps local.
struct rearrangement {
  std::vector<rank_t> rank_of_bin; ///< a bijection bins → ranks
  bytes_t total_bytes = 0;
  bytes_t kept_on_node = 0; ///< bytes whose new rank is on their current node (self included)
  bytes_t kept_on_rank = 0; ///< bytes whose new rank is their current rank

  /// The traffic of moving every item from its current rank to the rank of its bin.
  [[nodiscard]] traffic moves() const noexcept {
    return {kept_on_rank, kept_on_node - kept_on_rank, total_bytes - kept_on_node};
  }
  /// rank_of_bin[bin_of[i]] for every item. Complexity: O(items).
  /// Throws: orch::invalid_argument (a bin outside [0, bins)).
  [[nodiscard]] std::vector<rank_t> rank_of_items(std::span<const rank_t> bin_of) const {
    std::vector<rank_t> out(bin_of.size());
    for (std::size_t i = 0; i < bin_of.size(); ++i) {
      if (bin_of[i] < 0 || static_cast<std::size_t>(bin_of[i]) >= rank_of_bin.size()) {
        throw_invalid_argument("rearrangement::rank_of_items: item ", i, " is in bin ", bin_of[i],
                               " outside [0, ", rank_of_bin.size(), ")");
      }
      out[i] = rank_of_bin[static_cast<std::size_t>(bin_of[i])];
    }
    return out;
  }
};

/// Node-wise rearrangement. Balanced bins are interchangeable, so choose the bijection bins →
/// ranks that (1) maximises the bytes that stay on their node and then, with the bins of each
/// node fixed, (2) maximises the bytes that stay on their rank. Item i is in bin `bin_of[i]`
/// (one bin per rank: bins = topo.ranks()), currently on rank `current_rank[i]`, and has
/// `item_bytes[i]` bytes.
///
/// Level 1 is a transportation problem (bins → nodes with room ranks_per_node(n)); level 2 is
/// one assignment problem per node (its bins → its ranks). Both are solved exactly by
/// detail::max_profit_assignment on the sparse (bin, node) / (bin, rank) byte totals.
/// Complexity: O(items + ranks) to aggregate, plus the solver (milliseconds at 2,560 ranks).
/// Guarantee: bytes leaving their node are minimal over all bijections; bytes leaving their
/// rank are minimal among bijections with the same bin → node map. Deterministic.
/// Throws: orch::invalid_argument (sizes differ, a bin or rank outside [0, ranks), a negative
/// size — naming the item), orch::overflow (Σ bytes).
[[nodiscard]] inline rearrangement rearrange_bins(std::span<const rank_t> bin_of,
                                                  std::span<const rank_t> current_rank,
                                                  std::span<const bytes_t> item_bytes,
                                                  const topology& topo) {
  const char* where = "rearrange_bins";
  detail::check_item_arrays(current_rank, item_bytes, topo, where);
  if (bin_of.size() != current_rank.size()) {
    throw_invalid_argument(where, ": ", bin_of.size(), " bins of items but ", current_rank.size(),
                           " current ranks");
  }
  const auto bins = static_cast<std::size_t>(topo.ranks());
  for (std::size_t i = 0; i < bin_of.size(); ++i) {
    if (bin_of[i] < 0 || static_cast<std::size_t>(bin_of[i]) >= bins) {
      throw_invalid_argument(where, ": item ", i, " is in bin ", bin_of[i], " outside [0, ", bins,
                             ") (one bin per rank)");
    }
  }
  rearrangement out;
  out.total_bytes = detail::sum_bytes(item_bytes, where);
  const auto node = topo.node_of_ranks();
  const auto by_bin = detail::items_by_key(bin_of, bins);

  // Level 1: bins → nodes, profit = bytes of the bin already on the node.
  std::vector<rank_t> node_capacity(static_cast<std::size_t>(topo.nodes()));
  for (rank_t n = 0; n < topo.nodes(); ++n) {
    node_capacity[static_cast<std::size_t>(n)] = topo.ranks_per_node(n);
  }
  const auto level1 = detail::aggregate_profits(
      by_bin, item_bytes,
      [&](std::size_t i) { return node[static_cast<std::size_t>(current_rank[i])]; },
      node_capacity.size());
  const auto node_of_bin = detail::max_profit_assignment(level1, node_capacity);

  // Level 2, per node: its bins → its ranks (by local index), profit = bytes already there.
  out.rank_of_bin.assign(bins, -1);
  const auto bins_on_node = detail::items_by_key(node_of_bin, node_capacity.size());
  const auto local = topo.local_indices();
  std::vector<rank_t> ones;
  for (rank_t n = 0; n < topo.nodes(); ++n) {
    const auto nb = static_cast<std::size_t>(n);
    const auto first = static_cast<std::size_t>(bins_on_node.first[nb]);
    const auto count = static_cast<std::size_t>(bins_on_node.first[nb + 1]) - first;
    ones.assign(static_cast<std::size_t>(topo.ranks_per_node(n)), 1);
    // The items of this node's bins that sit on this node, as one small sub-problem.
    detail::sparse_profits level2;
    level2.first.assign(1, 0);
    std::vector<index_t> scratch(ones.size(), -1);
    for (std::size_t j = 0; j < count; ++j) {
      const auto bin = static_cast<std::size_t>(bins_on_node.order[first + j]);
      const auto start = level2.target.size();
      for (auto x = static_cast<std::size_t>(by_bin.first[bin]);
           x < static_cast<std::size_t>(by_bin.first[bin + 1]); ++x) {
        const auto i = static_cast<std::size_t>(by_bin.order[x]);
        const auto r = static_cast<std::size_t>(current_rank[i]);
        if (node[r] != n || item_bytes[i] == 0) {
          continue;
        }
        const auto l = static_cast<std::size_t>(local[r]);
        if (scratch[l] < 0 || static_cast<std::size_t>(scratch[l]) < start) {
          scratch[l] = static_cast<index_t>(level2.target.size());
          level2.target.push_back(local[r]);
          level2.profit.push_back(0);
        }
        level2.profit[static_cast<std::size_t>(scratch[l])] += item_bytes[i];
      }
      detail::sort_entries(level2, start);
      level2.first.push_back(static_cast<index_t>(level2.target.size()));
    }
    const auto local_of = detail::max_profit_assignment(level2, ones);
    for (std::size_t j = 0; j < count; ++j) {
      const auto bin = static_cast<std::size_t>(bins_on_node.order[first + j]);
      out.rank_of_bin[bin] = topo.rank_at(n, local_of[j]);
    }
  }
  for (std::size_t i = 0; i < bin_of.size(); ++i) {
    const auto r = static_cast<std::size_t>(current_rank[i]);
    const auto to = static_cast<std::size_t>(out.rank_of_bin[static_cast<std::size_t>(bin_of[i])]);
    if (node[to] == node[r]) {
      out.kept_on_node += item_bytes[i]; // ≤ total_bytes, which was checked
      if (to == r) {
        out.kept_on_rank += item_bytes[i];
      }
    }
  }
  return out;
}

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

/// How locality_balance placed the items (locality_result::method).
enum class placement_method : std::uint8_t {
  keep_local,           ///< ranks keep what fits, the rest goes to their node first
  keep_local_settle,    ///< keep_local, then a local search across all ranks
  node_first,           ///< nodes shed a knapsack cover of their excess, then balance inside
  node_first_settle,    ///< node_first, then a local search across all ranks
  rearranged_reference, ///< the reference bins mapped onto ranks by rearrange_bins
};

/// The name tools print for `m`: "keep_local", "keep_local+settle", "node_first",
/// "node_first+settle" or "rearranged_reference".
[[nodiscard]] constexpr std::string_view to_string(placement_method m) noexcept {
  switch (m) {
  case placement_method::keep_local:
    return "keep_local";
  case placement_method::keep_local_settle:
    return "keep_local+settle";
  case placement_method::node_first:
    return "node_first";
  case placement_method::node_first_settle:
    return "node_first+settle";
  case placement_method::rearranged_reference:
    return "rearranged_reference";
  }
  return "?";
}

/// Result of locality_balance.
struct locality_result {
  std::vector<rank_t> rank_of; ///< new rank of every item
  std::vector<cost_t> loads;   ///< per rank
  cost_t max_load = 0;
  cost_t lower_bound = 0;        ///< max(ceil(Σc/k), max c)
  cost_t reference_max_load = 0; ///< largest load of the reference partition
  cost_t target = 0;             ///< the load every rank was kept under
  traffic moved;                 ///< moving every item from its current rank to rank_of
  /// No assignment with largest load ≤ target sends fewer bytes across nodes.
  bytes_t inter_node_lower_bound = 0;
  /// keep_local or node_first (the locality heuristics, docs/plans.md; the _settle variants
  /// when a final local search across all ranks was needed to reach the target), or
  /// rearranged_reference (the reference bins through rearrange_bins, used when that crosses
  /// fewer node boundaries or no heuristic could reach the target). Names: to_string.
  placement_method method = placement_method::rearranged_reference;

  /// max_load / lower_bound (1 when both are 0). Reporting only.
  [[nodiscard]] double ratio_to_lower_bound() const noexcept {
    return lower_bound == 0 ? 1.0
                            : static_cast<double>(max_load) / static_cast<double>(lower_bound);
  }
};

/// Locality-aware balancing: the items' costs balanced over the ranks as well as the
/// reference partition `reference_bin_of` does (pass the bins of orch::partition or any other
/// balancer), up to options.slack_ppm, while keeping items where they are. Two heuristics
/// (docs/plans.md); node_first runs only when keep_local cannot meet the target by itself,
/// and then the better feasible one wins (fewer inter-node bytes, then fewer moved):
///  - keep_local: a rank at or under the target keeps everything; a rank above it keeps what
///    fits (the better of "most bytes per cost first" and "largest first"); what it sheds
///    goes best-fit to ranks of its node (with a budgeted repair of fragmented room); only
///    what fits nowhere on the node crosses to another node (largest first, best fit);
///  - node_first: nodes over their capacity shed a knapsack cover of the excess, shed items go
///    to the nodes with the most spare capacity, local search balances inside each node;
///  - either finishes with a budgeted local search over all ranks ("+settle") if needed.
/// The winner is compared with the reference bins mapped by rearrange_bins (solved only when
/// a cheap bound says it could win), so the result is never worse than node-wise
/// rearrangement of the reference.
/// Complexity: O(n log n + ranks) plus work-budgeted searches, plus rearrange_bins when
/// needed.
/// Guarantee: max_load ≤ target = reference max + slack; without "+settle", a node whose ranks
/// are all at or under the target keeps all its items on the node; inter-node bytes ≥ the
/// reported lower bound (how close they come is measured in docs/benchmarks.md, not
/// guaranteed). Deterministic: budgets count work, never time.
/// Throws: orch::invalid_argument (sizes differ, negative values, ranks or bins outside the
/// topology, negative slack), orch::overflow.
[[nodiscard]] inline locality_result
locality_balance(std::span<const cost_t> costs, std::span<const rank_t> current_rank,
                 std::span<const bytes_t> item_bytes, const topology& topo,
                 std::span<const rank_t> reference_bin_of, locality_options options = {}) {
  const char* where = "locality_balance";
  detail::check_balance_input(costs, current_rank, item_bytes, topo, where);
  if (reference_bin_of.size() != costs.size()) {
    throw_invalid_argument(where, ": ", costs.size(), " items but ", reference_bin_of.size(),
                           " reference bins");
  }
  if (options.slack_ppm < 0) {
    throw_invalid_argument(where, ": negative slack_ppm ", options.slack_ppm);
  }
  const rank_t k = topo.ranks();
  const auto ref_loads = bin_loads(costs, reference_bin_of, k); // validates the bins
  locality_result out;
  out.lower_bound = lower_bound(costs, k);
  out.reference_max_load = *std::max_element(ref_loads.begin(), ref_loads.end());
  const auto slack =
      static_cast<cost_t>(detail::int128{out.lower_bound} * options.slack_ppm / 1'000'000);
  out.target = detail::checked_add(out.reference_max_load, slack, where);
  out.inter_node_lower_bound =
      detail::node_shed_lower_bound(costs, current_rank, item_bytes, topo, out.target);

  // Two heuristics (docs/plans.md): "keep local" (ranks keep what fits, leftovers go to
  // their node first; retried keeping the largest items if the leftovers then fit nowhere)
  // and, when that cannot meet the target by itself, "node first" (nodes shed a knapsack
  // cover of their excess, then local search inside each node). Either may finish with
  // settle() (local search across all ranks). The feasible one with fewer inter-node bytes,
  // then fewer moved bytes, wins.
  detail::keep_local_planner planner(costs, current_rank, item_bytes, topo, out.target);
  auto kept = planner.finish(detail::keep_mode::most_bytes);
  if (kept.max_load > out.target) {
    kept = planner.finish(detail::keep_mode::largest_first);
  }
  auto local = std::move(kept.rank_of);
  auto local_loads = std::move(kept.loads);
  bool local_ok = kept.max_load <= out.target;
  placement_method local_method = placement_method::keep_local;
  if (!local_ok) {
    if (auto settled = detail::settle(costs, k, local, out.target); !settled.empty()) {
      local = std::move(settled);
      local_loads = detail::loads_of(costs, local, k);
      local_ok = true;
      local_method = placement_method::keep_local_settle;
    }
  }
  traffic local_traffic;
  if (local_ok) {
    local_traffic = detail::traffic_of(current_rank, local, item_bytes, topo);
  }
  // node_first is for targets keep_local cannot meet by itself: where keep_local succeeds it
  // moves fewer bytes inside nodes, and skipping node_first halves the time.
  if (!local_ok || local_method != placement_method::keep_local) {
    auto first = detail::node_first(costs, current_rank, item_bytes, topo, out.target);
    if (!first.rank_of.empty()) {
      const traffic t = detail::traffic_of(current_rank, first.rank_of, item_bytes, topo);
      if (!local_ok || detail::sends_fewer(t, local_traffic)) {
        local = std::move(first.rank_of);
        local_loads = detail::loads_of(costs, local, k);
        local_traffic = t;
        local_ok = true;
        local_method =
            first.settled ? placement_method::node_first_settle : placement_method::node_first;
      }
    }
  }
  // The rearranged reference keeps at most, per bin, the bytes of its best node; when the
  // heuristic already sends fewer bytes across nodes than that bound allows, the exact
  // rearrangement cannot win and is not solved.
  if (local_ok &&
      local_traffic.inter_node <
          detail::rearranged_inter_node_bound(reference_bin_of, current_rank, item_bytes, topo)) {
    out.rank_of = std::move(local);
    out.loads = std::move(local_loads);
    out.moved = local_traffic;
    out.method = local_method;
  } else {
    const auto mapped = rearrange_bins(reference_bin_of, current_rank, item_bytes, topo);
    const traffic mapped_traffic = mapped.moves();
    const bool use_local = local_ok && !detail::sends_fewer(mapped_traffic, local_traffic);
    if (use_local) {
      out.rank_of = std::move(local);
      out.loads = std::move(local_loads);
      out.moved = local_traffic;
      out.method = local_method;
    } else {
      out.rank_of = mapped.rank_of_items(reference_bin_of);
      out.loads = detail::loads_of(costs, out.rank_of, k);
      out.moved = mapped_traffic;
      out.method = placement_method::rearranged_reference;
    }
  }
  out.max_load = *std::max_element(out.loads.begin(), out.loads.end());
  return out;
}

/// locality_balance with orch::partition (default options) as the reference partition.
/// Complexity: as above plus orch::partition. Throws: as above.
[[nodiscard]] inline locality_result locality_balance(std::span<const cost_t> costs,
                                                      std::span<const rank_t> current_rank,
                                                      std::span<const bytes_t> item_bytes,
                                                      const topology& topo,
                                                      locality_options options = {}) {
  detail::check_balance_input(costs, current_rank, item_bytes, topo, "locality_balance");
  const auto reference = partition(costs, topo.ranks());
  return locality_balance(costs, current_rank, item_bytes, topo, reference.bin_of, options);
}

} // namespace orch
