// SPDX-License-Identifier: Apache-2.0
/// Peers: no balancing (ranks keep what they sampled) and sorted round-robin.
#pragma once

#include "peer_input.hpp"

#include <orch/config.hpp>
#include <orch/partition/order.hpp>
#include <orch/partition/result.hpp>
#include <orch/types.hpp>

#include <cstddef>
#include <span>
#include <utility>
#include <vector>

namespace orch_bench::peers {

/// No balancing: every rank keeps the items it sampled. The items are taken to be listed
/// rank by rank (how a gathered global batch is laid out), so rank r holds the r-th
/// contiguous block; blocks differ in size by at most one (item i goes to ⌊i · k / n⌋). This
/// is the "before balancing" split verl logs in `log_seqlen_unbalance`.
///
/// Complexity: O(n + k).
/// Guarantee: none (it is the baseline).
/// Throws: orch::invalid_argument (k ≤ 0, a negative cost), orch::overflow (Σ costs).
[[nodiscard]] inline orch::partition_result no_balancing(std::span<const orch::cost_t> costs,
                                                         orch::rank_t bins) {
  const char* name = "no_balancing";
  check_input(costs, bins, name);
  const std::size_t n = costs.size();
  std::vector<orch::rank_t> bin_of(n, 0);
  for (std::size_t i = 0; i < n; ++i) {
    // i · k < n · k ≤ 2^31 · 2^32: no overflow in 64-bit unsigned.
    bin_of[i] = static_cast<orch::rank_t>(i * static_cast<std::size_t>(bins) / n);
  }
  return orch::make_partition_result(costs, std::move(bin_of), bins, name);
}

/// Sorted round-robin: items by cost descending (ties by index), the p-th to rank p mod k.
/// What Bagua's `LoadBalancingDistributedSampler` does (sort by a complexity function, rank r
/// takes element r of each run of k; without its random jitter here) and what DeepSpeed's
/// `batch_by_seqlens` with `sequence_picking_order="seqlen"` does when it strides a window
/// across micro-batches. Equal counts (differing by at most one) by construction.
///
/// Complexity: O(n log n).
/// Guarantee: none stated; the gap to the bound grows with the spread of the costs.
/// Throws: orch::invalid_argument (k ≤ 0, a negative cost), orch::overflow (Σ costs).
[[nodiscard]] inline orch::partition_result sorted_round_robin(std::span<const orch::cost_t> costs,
                                                               orch::rank_t bins) {
  const char* name = "sorted_round_robin";
  check_input(costs, bins, name);
  const auto order = orch::order_by_cost_desc(costs);
  std::vector<orch::rank_t> bin_of(costs.size(), 0);
  for (std::size_t p = 0; p < order.size(); ++p) {
    bin_of[order[p]] = static_cast<orch::rank_t>(p % static_cast<std::size_t>(bins));
  }
  return orch::make_partition_result(costs, std::move(bin_of), bins, name);
}

} // namespace orch_bench::peers
