// SPDX-License-Identifier: Apache-2.0
/// Internals of the placement engine (orch/placement/engine.hpp): its one cascade of
/// heuristics at a target (per-node fill, then node_first and settle) and the cascade against
/// reference bins (the heuristics and the node-wise rearranged reference, each pulled home).
#pragma once

#include <orch/detail/placement/keep_local.hpp>
#include <orch/detail/placement/node_first.hpp>
#include <orch/detail/placement/pull_home.hpp>
#include <orch/detail/placement/repartition.hpp>
#include <orch/detail/placement/settle.hpp>
#include <orch/detail/placement/shed_fill.hpp>
#include <orch/placement/rearrange.hpp>
#include <orch/placement/result.hpp>
#include <orch/placement/traffic.hpp>
#include <orch/topology.hpp>
#include <orch/types.hpp>

#include <algorithm>
#include <span>
#include <utility>
#include <vector>

namespace orch::detail {

/// A placement the heuristics found: the new rank of every item, the loads, the traffic.
struct placement_candidate {
  std::vector<rank_t> rank_of;
  std::vector<cost_t> loads;
  traffic moved;
  placement_method method = placement_method::keep_local;
  bool found = false;
  /// node_first's assignment when some node could not be balanced inside itself (empty
  /// otherwise): where repartition_nodes starts.
  std::vector<rank_t> unbalanced;
};

/// The heuristics at one target, in the engine's one order (docs/plans.md):
///  1. per-node fill (keep_local_planner): every rank keeps what fits, the rest goes inside
///     its node by best fit, then repair; what fits nowhere on the node crosses nodes, "most
///     bytes per cost first", then "largest first" if that misses the target;
///  2. if the fill misses the target: node_first (nodes shed their quota's knapsack cover,
///     the same quotas the inter-node lower bound is computed from, then balance inside;
///     where a node cannot be balanced inside itself, finished by local search across all
///     ranks: settle) and the fill finished by settle. The one sending fewer bytes across
///     nodes, then fewer moved, wins (node_first on a tie). node_first's unfinished
///     assignment is kept in `unbalanced` for place_against_reference.
/// Inputs validated by the caller. Returns found = false when none meets the target.
/// `measure`: fill `moved` even when the fill succeeds (the finishes always measure, to
/// compare).
[[nodiscard]] inline placement_candidate run_heuristics(std::span<const cost_t> costs,
                                                        std::span<const rank_t> current_rank,
                                                        std::span<const bytes_t> item_bytes,
                                                        const topology& topo, cost_t target,
                                                        int threads, bool measure = true) {
  const rank_t k = topo.ranks();
  placement_candidate out;
  keep_local_planner planner(costs, current_rank, item_bytes, topo, target, threads);
  auto kept = planner.finish(keep_mode::most_bytes);
  if (kept.max_load > target) {
    kept = planner.finish(keep_mode::largest_first);
  }
  if (kept.max_load <= target) {
    if (measure) {
      out.moved = traffic_of(current_rank, kept.rank_of, item_bytes, topo);
    }
    out.rank_of = std::move(kept.rank_of);
    out.loads = std::move(kept.loads);
    out.found = true;
    return out;
  }
  // Candidates in order; a later one replaces the best so far only if it sends fewer bytes.
  const auto offer = [&](std::vector<rank_t>&& rank_of, placement_method method) {
    if (rank_of.empty()) {
      return;
    }
    const traffic t = traffic_of(current_rank, rank_of, item_bytes, topo);
    if (!out.found || sends_fewer(t, out.moved)) {
      out.moved = t;
      out.rank_of = std::move(rank_of);
      out.method = method;
      out.found = true;
    }
  };
  auto first = node_first(costs, current_rank, item_bytes, topo, target);
  if (!first.short_of_target) {
    offer(std::move(first.rank_of), placement_method::node_first);
  } else {
    offer(settle(costs, k, first.rank_of, target), placement_method::node_first_settle);
    out.unbalanced = std::move(first.rank_of);
  }
  offer(settle(costs, k, std::move(kept.rank_of), target), placement_method::keep_local_settle);
  if (out.found) {
    out.loads = loads_of(costs, out.rank_of, k);
  }
  return out;
}

/// Every reference bin in [0, ranks): one bin per rank.
inline void check_reference_bins(std::span<const rank_t> reference_bin_of, rank_t ranks,
                                 const char* where) {
  for (std::size_t i = 0; i < reference_bin_of.size(); ++i) {
    if (reference_bin_of[i] < 0 || reference_bin_of[i] >= ranks) {
      throw_invalid_argument(where, ": item ", i, " has reference bin ", reference_bin_of[i],
                             " outside [0, ", ranks, ") (one bin per rank)");
    }
  }
}

/// The cascade against reference bins at `target` (validated bins): the heuristics, pulled
/// home (pull_home, under their own largest load); if the per-node fill missed the target,
/// shed_and_fill (its stranded nodes finished by repartition_nodes, pulled home); unless a
/// cheap bound on the plain rearrangement says the best so far is close enough, then
/// node_first's unbalanced nodes
/// repartitioned (repartition_nodes) and the reference mapped by rearrange_bins and pulled
/// home (under the reference's largest load), the one sending fewest bytes across nodes
/// winning. Fills rank_of, loads, moved and method of `out`.
inline void place_against_reference(std::span<const cost_t> costs,
                                    std::span<const rank_t> current_rank,
                                    std::span<const bytes_t> item_bytes, const topology& topo,
                                    std::span<const rank_t> reference_bin_of, cost_t target,
                                    int threads, locality_result& out) {
  auto found = run_heuristics(costs, current_rank, item_bytes, topo, target, threads);
  // The heuristics' placement is pulled home too, under its own largest load: at a target
  // taken from a reference its crossings are rarely all needed (on the bundled trace this
  // cuts the input and text exchanges' inter-node bytes by a further 4-8 %).
  if (found.found) {
    pull_home(costs, current_rank, item_bytes, topo,
              *std::max_element(found.loads.begin(), found.loads.end()), found.rank_of,
              found.loads);
    found.moved = traffic_of(current_rank, found.rank_of, item_bytes, topo);
  }
  // Shed and fill decides per node what leaves and packs it into the others: on coarse items
  // at a tight target it sends far fewer bytes across nodes than repartitioning (on the
  // bundled trace's vision inputs at 512 ranks, 1.34x their bound over 10 steps, where
  // repartitioning or the rearranged reference sent 2.3x). Nodes it leaves above the target
  // are finished by repartition_nodes; the result, pulled home, competes on equal terms.
  // Tried whenever the per-node fill missed the target (node_first or settle finished it, or
  // nothing did).
  if (!found.found || found.method != placement_method::keep_local) {
    auto rank_of = shed_and_fill(costs, current_rank, item_bytes, topo, target);
    auto loads = loads_of(costs, rank_of, topo.ranks());
    if (*std::max_element(loads.begin(), loads.end()) > target) {
      rank_of =
          repartition_nodes(costs, current_rank, item_bytes, topo, target, std::move(rank_of));
      loads = rank_of.empty() ? std::vector<cost_t>{} : loads_of(costs, rank_of, topo.ranks());
    } else {
      pull_home(costs, current_rank, item_bytes, topo,
                *std::max_element(loads.begin(), loads.end()), rank_of, loads);
    }
    if (!rank_of.empty()) {
      const traffic t = traffic_of(current_rank, rank_of, item_bytes, topo);
      if (!found.found || sends_fewer(t, found.moved)) {
        found.loads = std::move(loads);
        found.rank_of = std::move(rank_of);
        found.moved = t;
        found.method = placement_method::shed_fill;
        found.found = true;
      }
    }
  }
  const auto take_found = [&] {
    out.rank_of = std::move(found.rank_of);
    out.loads = std::move(found.loads);
    out.moved = found.moved;
    out.method = found.method;
  };
  // The rearranged reference keeps at most, per bin, the bytes of its best node; when the
  // best so far already sends fewer bytes across nodes than that allows, it is kept without
  // trying it (pulling home might still gain, but the best so far is close to the bound).
  if (found.found &&
      found.moved.inter_node <
          rearranged_inter_node_bound(reference_bin_of, current_rank, item_bytes, topo)) {
    take_found();
    return;
  }
  // The target is known to be reachable (the reference meets it), so node_first's unbalanced
  // nodes can be repartitioned with the roomiest others, as few as meet it; pulled home
  // already, the result competes with the best so far on equal terms, and the better of the
  // two with the rearranged reference below (always: the shortcut above judges only the
  // candidates before this one, so no result is ever worse than without it).
  if (!found.unbalanced.empty()) {
    auto rank_of = repartition_nodes(costs, current_rank, item_bytes, topo, target,
                                     std::move(found.unbalanced));
    if (!rank_of.empty()) {
      const traffic t = traffic_of(current_rank, rank_of, item_bytes, topo);
      if (!found.found || sends_fewer(t, found.moved)) {
        found.loads = loads_of(costs, rank_of, topo.ranks());
        found.rank_of = std::move(rank_of);
        found.moved = t;
        found.method = placement_method::node_first_repartition;
        found.found = true;
      }
    }
  }
  // The reference mapped node-wise keeps its bins whole; pull_home then brings items back to
  // their node (moves, then swaps), never sending more across nodes. Its bound is the
  // reference's largest load, not the target: the slack is for the heuristics' locality, and
  // the reference's balance is kept exactly.
  const auto mapped = rearrange_bins(reference_bin_of, current_rank, item_bytes, topo);
  auto rank_of = mapped.rank_of_items(reference_bin_of);
  auto loads = loads_of(costs, rank_of, topo.ranks());
  pull_home(costs, current_rank, item_bytes, topo, *std::max_element(loads.begin(), loads.end()),
            rank_of, loads);
  const traffic pulled = traffic_of(current_rank, rank_of, item_bytes, topo);
  if (found.found && !sends_fewer(pulled, found.moved)) {
    take_found();
    return;
  }
  out.rank_of = std::move(rank_of);
  out.loads = std::move(loads);
  out.moved = pulled;
  out.method = placement_method::rearranged_reference;
}

} // namespace orch::detail
