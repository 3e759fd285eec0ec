// SPDX-License-Identifier: Apache-2.0
/// Peers: the greedy "least-loaded rank" balancers of VeOmni and MindSpeed-MM.
#pragma once

#include "peer_input.hpp"

#include <orch/config.hpp>
#include <orch/partition/order.hpp>
#include <orch/partition/result.hpp>
#include <orch/types.hpp>

#include <cstddef>
#include <cstdint>
#include <functional>
#include <queue>
#include <span>
#include <utility>
#include <vector>

namespace orch_bench::peers {

/// The order in which a greedy peer visits the items.
enum class greedy_order {
  sorted, ///< cost descending, ties by index ascending (what VeOmni and MindSpeed-MM do)
  given,  ///< index order, as sampled (Graham's list scheduling; also verl's greedy_partition)
};

/// VeOmni's `post_mbs_balancing_greedy_without_pad` (ByteDance-Seed/VeOmni,
/// `veomni/utils/data_balance/balance_sorting_algo.py`), re-implemented: items in cost order
/// descending (VeOmni's custom-cost path sorts by (−cost, index); its legacy path uses a
/// non-stable torch.argsort, whose ties we fix to index order), the first min(k, n) items
/// seed ranks 0, 1, …, then every further item goes to the rank popped from a min-heap keyed
/// by (load, rank), i.e. the least-loaded rank, lowest rank on ties. With
/// `greedy_order::given` the same loop runs over the items in index order instead: plain list
/// scheduling, which is also what verl's `greedy_partition` does (argmin over all ranks, first
/// minimum).
///
/// Complexity: O(n log n + n log k).
/// Guarantee: sorted: LPT, max ≤ (4/3 − 1/(3k)) · optimum (Graham 1969); given order:
/// max ≤ (2 − 1/k) · optimum (Graham 1966).
/// Throws: orch::invalid_argument (k ≤ 0, a negative cost), orch::overflow (Σ costs).
[[nodiscard]] inline orch::partition_result
veomni_greedy(std::span<const orch::cost_t> costs, orch::rank_t bins,
              greedy_order order_kind = greedy_order::sorted) {
  const char* name =
      order_kind == greedy_order::sorted ? "veomni_greedy" : "veomni_greedy_unsorted";
  check_input(costs, bins, name);
  const std::size_t n = costs.size();
  std::vector<std::uint32_t> order;
  if (order_kind == greedy_order::sorted) {
    order = orch::order_by_cost_desc(costs);
  } else {
    order.resize(n);
    for (std::size_t i = 0; i < n; ++i) {
      order[i] = static_cast<std::uint32_t>(i);
    }
  }
  std::vector<orch::rank_t> bin_of(n, 0);
  using slot = std::pair<orch::cost_t, orch::rank_t>; // (load, rank): a total order
  std::priority_queue<slot, std::vector<slot>, std::greater<>> heap;
  const std::size_t seeded = std::min(static_cast<std::size_t>(bins), n);
  for (std::size_t r = 0; r < static_cast<std::size_t>(bins); ++r) {
    const auto rank = static_cast<orch::rank_t>(r);
    if (r < seeded) {
      bin_of[order[r]] = rank;
      heap.emplace(costs[order[r]], rank);
    } else {
      heap.emplace(0, rank);
    }
  }
  for (std::size_t j = seeded; j < n; ++j) {
    const auto [load, rank] = heap.top();
    heap.pop();
    bin_of[order[j]] = rank;
    heap.emplace(load + costs[order[j]], rank); // ≤ Σ costs, checked above
  }
  return orch::make_partition_result(costs, std::move(bin_of), bins, name);
}

/// MindSpeed-MM's `post_global_balancing_greedy_without_pad` (Ascend/MindSpeed-MM,
/// `mindspeed_mm/utils/data_balance/balance_sorting_algo.py`), re-implemented: items by cost
/// descending (ties by index; MindSpeed's torch.argsort leaves them unspecified), each to the
/// rank of least load by argmin over all ranks (first minimum); a rank that reaches
/// `capacity` items is closed by setting its load to the int64 maximum. With
/// capacity = n / k this is LPT with equal counts, the same rule as LLaVA's
/// `split_to_even_chunks`. (MindSpeed balances l² of the length; here the costs are given.)
///
/// Complexity: O(n log n + n · k) (the argmin scans all ranks, as the original does).
/// Guarantee: none stated; LPT with a cardinality cap.
/// Throws: orch::invalid_argument (k ≤ 0, a negative cost, capacity ≤ 0),
/// orch::infeasible (n > k · capacity), orch::overflow (Σ costs).
[[nodiscard]] inline orch::partition_result
mindspeed_greedy(std::span<const orch::cost_t> costs, orch::rank_t bins, orch::index_t capacity) {
  const char* name = "mindspeed_greedy";
  check_input(costs, bins, name);
  if (capacity <= 0) {
    orch::throw_invalid_argument(name, ": capacity must be positive, got ", capacity);
  }
  const std::size_t n = costs.size();
  if (ceil_div(static_cast<orch::index_t>(n), bins) > capacity) {
    orch::throw_infeasible(name, ": ", n, " items do not fit ", bins, " ranks of capacity ",
                           capacity);
  }
  const auto order = orch::order_by_cost_desc(costs);
  const auto k = static_cast<std::size_t>(bins);
  // A closed rank behaves as MindSpeed's INT64_MAX load: never the argmin while a rank is
  // open (one is, since n ≤ k · capacity).
  std::vector<orch::cost_t> load(k, 0);
  std::vector<orch::index_t> count(k, 0);
  std::vector<orch::rank_t> bin_of(n, 0);
  for (const std::uint32_t item : order) {
    std::size_t best = k;
    for (std::size_t r = 0; r < k; ++r) {
      if (count[r] < capacity && (best == k || load[r] < load[best])) {
        best = r;
      }
    }
    bin_of[item] = static_cast<orch::rank_t>(best);
    ++count[best];
    load[best] += costs[item];
  }
  return orch::make_partition_result(costs, std::move(bin_of), bins, name);
}

} // namespace orch_bench::peers
