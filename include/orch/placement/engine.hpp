// SPDX-License-Identifier: Apache-2.0
/// The placement engine: assigns items to ranks so that every load is at most a target while
/// the fewest bytes leave their node, then their GPU. One cascade (docs/plans.md, "The
/// placement engine") that every caller uses: locality_balance and orchestrate's phases.
#pragma once

#include <orch/config.hpp>
#include <orch/detail/placement/cascade.hpp>
#include <orch/detail/placement/locality_input.hpp>
#include <orch/detail/placement/packing.hpp>
#include <orch/detail/primitives/checked.hpp>
#include <orch/partition/options.hpp>
#include <orch/partition/partition.hpp>
#include <orch/partition/result.hpp>
#include <orch/placement/options.hpp>
#include <orch/placement/rearrange.hpp>
#include <orch/placement/result.hpp>
#include <orch/placement/traffic.hpp>
#include <orch/quality.hpp>
#include <orch/topology.hpp>
#include <orch/types.hpp>

#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <span>
#include <utility>
#include <vector>

namespace orch {

namespace detail {

/// place, naming `where` in its messages (locality_balance passes its own name).
[[nodiscard]] inline locality_result place_named(std::span<const cost_t> costs,
                                                 std::span<const rank_t> current_rank,
                                                 std::span<const bytes_t> item_bytes,
                                                 const topology& topo, const place_options& options,
                                                 const char* where) {
  detail::check_balance_input(costs, current_rank, item_bytes, topo, where);
  if (options.slack_ppm < 0) {
    throw_invalid_argument(where, ": negative slack_ppm ", options.slack_ppm);
  }
  if (options.threads < 1) {
    throw_invalid_argument(where, ": threads must be at least 1, got ", options.threads);
  }
  const rank_t k = topo.ranks();
  locality_result out;
  const cost_t bound = lower_bound(costs, k);
  // bound and slack_ppm are below 2^63, so their product fits 128 bits; the slack may not fit.
  const detail::int128 wide_slack = detail::int128{bound} * options.slack_ppm / 1'000'000;
  if (wide_slack > detail::int128{max_cost}) {
    throw_overflow(where, ": slack_ppm = ", options.slack_ppm, " of the lower bound ", bound,
                   " is a slack past 2^63 - 1");
  }
  const auto slack = static_cast<cost_t>(wide_slack);
  out.lower_bound = bound;
  cost_t proven_max = -1; // a largest load the fallback partition proved optimal
  const auto finish = [&] {
    if (options.measure) {
      out.inter_node_lower_bound =
          detail::node_shed_lower_bound(costs, current_rank, item_bytes, topo, out.target);
    }
    out.max_load = *std::max_element(out.loads.begin(), out.loads.end()); // k ≥ 1 loads
    out.proven_optimal = out.max_load == out.lower_bound || out.max_load == proven_max;
    return std::move(out);
  };
  if (!options.reference_bin_of.empty() || costs.empty()) {
    if (options.reference_bin_of.size() != costs.size()) {
      throw_invalid_argument(where, ": ", costs.size(), " items but ",
                             options.reference_bin_of.size(), " reference bins");
    }
    detail::check_reference_bins(options.reference_bin_of, k, where);
    const auto ref_loads = detail::loads_of(costs, options.reference_bin_of, k); // Σ c checked
    out.reference_max_load = *std::max_element(ref_loads.begin(), ref_loads.end());
    out.target = detail::checked_add(out.reference_max_load, slack, where);
    detail::place_against_reference(costs, current_rank, item_bytes, topo, options.reference_bin_of,
                                    out.target, options.threads, out);
    return finish();
  }
  out.target = detail::checked_add(bound, slack, where);
  auto found = detail::run_heuristics(costs, current_rank, item_bytes, topo, out.target,
                                      options.threads, options.measure);
  if (found.found) {
    out.rank_of = std::move(found.rank_of);
    out.loads = std::move(found.loads);
    out.moved = found.moved;
    out.method = found.method;
    return finish();
  }
  // The heuristics cannot reach the lower bound's target: a balancer's bins set a target
  // that is reachable (its own loads) and the cascade runs once more against them.
  const auto p = partition(costs, k, options.partition);
  out.lower_bound = std::max(bound, p.lower_bound);
  out.reference_max_load = p.max_load;
  proven_max = p.proven_optimal ? p.max_load : -1;
  out.target = detail::checked_add(p.max_load, slack, where);
  detail::place_against_reference(costs, current_rank, item_bytes, topo, p.bin_of, out.target,
                                  options.threads, out);
  return finish();
}

} // namespace detail

/// The placement engine. Places items of cost `costs[i]`, currently on rank
/// `current_rank[i]`, with `item_bytes[i]` bytes, so that every rank's load is at most the
/// target and, within that, the fewest bytes leave their node, then their rank. The cascade:
///  1. per-node fill: a rank at or under the target keeps everything; a rank above it keeps
///     what fits (the better of "most bytes per cost first" and "largest first"), what it
///     sheds goes best-fit to ranks of its node (then a budgeted repair of fragmented room),
///     and only what fits nowhere on its node crosses nodes (largest first, best fit);
///  2. if that misses the target: node quotas (nodes over ranks_per_node × target shed a
///     knapsack cover of the excess — the computation the inter-node lower bound is made of)
///     balanced inside each node, and the fill finished by a budgeted local search over all
///     ranks; the feasible one sending fewer bytes across nodes, then fewer moved, wins;
///  3. against reference bins (options.reference_bin_of, or orch::partition's when step 2
///     also misses a target taken from the lower bound): the heuristics' result, shed+fill
///     (nodes shed what orch::partition cannot pack into their ranks, packed into the other
///     nodes with their items) when the fill missed the target, node_first+repartition and
///     the reference mapped by rearrange_bins are each pulled home (items off their node
///     moved or swapped back while no load passes that placement's own largest), and the one
///     sending fewest bytes across nodes wins, so the result is never worse than node-wise
///     rearrangement of the reference.
/// Target: reference max + slack with reference bins, else lower bound + slack (then, if the
/// heuristics miss it, partition max + slack).
/// Complexity: O(n log n + ranks) plus work-budgeted searches, plus orch::partition and
/// rearrange_bins when needed.
/// Guarantee: max_load ≤ target; inter-node bytes ≥ the reported lower bound (how close they
/// come is measured in docs/benchmarks.md). Deterministic for any thread count: budgets count
/// work, never time.
/// Throws: orch::invalid_argument (sizes differ, negative values, ranks or bins outside the
/// topology, negative slack, threads < 1), orch::overflow, and what orch::partition throws.
[[nodiscard]] inline locality_result place(std::span<const cost_t> costs,
                                           std::span<const rank_t> current_rank,
                                           std::span<const bytes_t> item_bytes,
                                           const topology& topo,
                                           const place_options& options = {}) {
  return detail::place_named(costs, current_rank, item_bytes, topo, options, "place");
}

/// Locality-aware balancing against a reference partition: place() with `reference_bin_of`
/// (pass the bins of orch::partition or any other balancer) at its largest load +
/// options.slack_ppm — balanced as well as the reference, up to the slack, while keeping
/// items where they are; never worse than node-wise rearrangement of the reference.
/// Complexity, Guarantee: as place. Throws: orch::invalid_argument (sizes differ, negative
/// values, ranks or bins outside the topology, negative slack), orch::overflow.
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
  detail::check_reference_bins(reference_bin_of, topo.ranks(), where);
  place_options po;
  po.slack_ppm = options.slack_ppm;
  po.reference_bin_of = reference_bin_of;
  return detail::place_named(costs, current_rank, item_bytes, topo, po, where);
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
