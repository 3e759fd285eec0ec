// SPDX-License-Identifier: Apache-2.0
/// The options of the placement stage, on their own (so that orch/orchestrate/step_plan.hpp can
/// hold them without the placers): locality_options (locality_balance) and place_options
/// (orch::place).
#pragma once

#include <orch/partition/options.hpp>
#include <orch/types.hpp>

#include <cstdint>
#include <span>

namespace orch {

/// Options of locality_balance.
struct locality_options {
  /// Allowed excess of the largest load over the reference partition's, in millionths of the
  /// cost lower bound max(ceil(Σc/k), max c): target = reference max + slack · LB / 10^6.
  /// The default 1000 (0.1 %) buys room to keep items local at a balance cost far below the
  /// noise of a step time.
  std::int64_t slack_ppm = 1000;
};

/// Options of orch::place.
struct place_options {
  /// Room above the reference load, in millionths of the cost lower bound (as
  /// locality_options::slack_ppm).
  std::int64_t slack_ppm = locality_options{}.slack_ppm;
  /// Threads for the per-node fill (same result for any count).
  int threads = 1;
  /// Bins of a balancer, one bin per rank (pass orch::partition's), or empty. With bins the
  /// target is their largest load + slack and the result never sends more bytes across nodes
  /// than their node-wise rearrangement; without, the target is the cost lower bound + slack
  /// and, when the heuristics miss it, orch::partition(costs, ranks, partition) supplies the
  /// bins and the cascade runs again against them.
  std::span<const rank_t> reference_bin_of;
  /// Options of that fallback partition (unused with reference bins).
  partition_options partition;
  /// Fill locality_result::moved and inter_node_lower_bound (a pass over the items each, plus
  /// the over-capacity nodes' items ordered). Off, both stay 0 unless a comparison needed the
  /// traffic anyway: for callers that measure the resulting exchange themselves.
  bool measure = true;
};

} // namespace orch
