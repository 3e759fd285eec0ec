// SPDX-License-Identifier: Apache-2.0
/// What orch::place and locality_balance return: the new rank of every item, loads, traffic,
/// the bounds and how the engine placed them (placement_method).
#pragma once

#include <orch/config.hpp>
#include <orch/placement/traffic.hpp>
#include <orch/types.hpp>

#include <cstdint>
#include <string_view>
#include <vector>

namespace orch {

/// How the engine placed the items (locality_result::method).
enum class placement_method : std::uint8_t {
  keep_local,           ///< ranks keep what fits, the rest goes to their node first
  keep_local_settle,    ///< keep_local, then a local search across all ranks
  node_first,           ///< nodes shed a knapsack cover of their excess, then balance inside
  node_first_settle,    ///< node_first, then a local search across all ranks
  rearranged_reference, ///< the reference bins mapped by rearrange_bins, then pulled home
  /// node_first, then the nodes it could not balance inside themselves repartitioned
  /// together with the roomiest others (as few as meet the target), mapped node-wise and
  /// pulled home; against a reference's target only
  node_first_repartition,
  /// nodes shed the items with the fewest bytes per cost until the rest packs into their
  /// ranks, and the shed items are packed into the roomiest other nodes together with their
  /// items (evicting smaller ones where none fits), then pulled home; against a reference's
  /// target only
  shed_fill,
};

/// The name tools print for `m`: "keep_local", "keep_local+settle", "node_first",
/// "node_first+settle", "rearranged_reference", "node_first+repartition" or "shed+fill".
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
  case placement_method::node_first_repartition:
    return "node_first+repartition";
  case placement_method::shed_fill:
    return "shed+fill";
  }
  return "?";
}

/// Result of place and locality_balance.
struct locality_result {
  std::vector<rank_t> rank_of; ///< new rank of every item
  std::vector<cost_t> loads;   ///< per rank
  cost_t max_load = 0;
  /// max(ceil(Σc/k), max c), or orch::partition's bound when place ran it (never smaller).
  cost_t lower_bound = 0;
  cost_t reference_max_load = 0; ///< largest load of the reference partition (0: none used)
  cost_t target = 0;             ///< the load every rank was kept under
  traffic moved;                 ///< moving every item from its current rank to rank_of
  /// No assignment with largest load ≤ target sends fewer bytes across nodes.
  bytes_t inter_node_lower_bound = 0;
  /// keep_local or node_first (the engine's heuristics, docs/plans.md; the _settle variants
  /// when a final local search across all ranks was needed to reach the target; against
  /// reference bins the heuristics' result is then pulled home, which keeps its name), or
  /// rearranged_reference (the reference bins through rearrange_bins, then items pulled back
  /// to their node under the reference's largest load; used when that crosses fewer node
  /// boundaries or no heuristic could reach the target), or node_first_repartition (against
  /// a reference's target: node_first's unbalanced nodes repartitioned with the roomiest
  /// others), or shed_fill (against a reference's target: nodes shed, the rest packed by
  /// orch::partition, the shed items packed into the other nodes). Names: to_string.
  placement_method method = placement_method::rearranged_reference;
  /// max_load is optimal: it equals lower_bound, or the partition place ran proved its
  /// largest load optimal and max_load equals it.
  bool proven_optimal = false;

  /// max_load / lower_bound (1 when both are 0). Reporting only.
  [[nodiscard]] double ratio_to_lower_bound() const noexcept {
    return lower_bound == 0 ? 1.0
                            : static_cast<double>(max_load) / static_cast<double>(lower_bound);
  }
};

} // namespace orch
