// SPDX-License-Identifier: Apache-2.0
/// Peer: LLaVA's length-grouped sampler as it splits one megabatch (one global step) to ranks.
#pragma once

#include "peer_input.hpp"

#include <orch/config.hpp>
#include <orch/partition/order.hpp>
#include <orch/partition/result.hpp>
#include <orch/types.hpp>

#include <cstddef>
#include <cstdint>
#include <span>
#include <utility>
#include <vector>

namespace orch_bench::peers {

/// LLaVA's `get_length_grouped_indices` + `split_to_even_chunks` (haotian-liu/LLaVA and
/// LLaVA-VL/LLaVA-NeXT, `llava/train/llava_trainer.py`, enabled by
/// `--group_by_modality_length`), re-implemented for one megabatch of world_size · batch_size
/// items, i.e. one global step, which is what a partitioner sees:
/// - the megabatch is sorted by cost descending (Python's stable sort over the megabatch
///   order; here the megabatch order is the index order, so ties go to the lower index);
/// - if n is a multiple of k, each item goes to the chunk (rank) of least load, first such
///   chunk on ties, and a chunk that holds n/k items is closed (its load set to infinity):
///   LPT with equal counts;
/// - otherwise the sorted list is dealt by stride (`indices[i::k]`): sorted round-robin.
/// `get_modality_length_grouped_indices` decides only which items share a megabatch
/// (image-text and text-only items are pooled apart, megabatches shuffled, the two tails
/// merged); for a given batch it reduces to the rule above. LLaVA's cost is the word count
/// (sign = modality); here the costs are given.
///
/// Complexity: O(n log n + n · k) (the argmin scans all chunks, as the original does).
/// Guarantee: none stated.
/// Throws: orch::invalid_argument (k ≤ 0, a negative cost), orch::overflow (Σ costs).
[[nodiscard]] inline orch::partition_result llava_grouped(std::span<const orch::cost_t> costs,
                                                          orch::rank_t bins) {
  const char* name = "llava_grouped";
  check_input(costs, bins, name);
  const std::size_t n = costs.size();
  const auto k = static_cast<std::size_t>(bins);
  const auto order = orch::order_by_cost_desc(costs);
  std::vector<orch::rank_t> bin_of(n, 0);
  if (n % k != 0) {
    for (std::size_t p = 0; p < n; ++p) {
      bin_of[order[p]] = static_cast<orch::rank_t>(p % k);
    }
    return orch::make_partition_result(costs, std::move(bin_of), bins, name);
  }
  const std::size_t per_chunk = n / k;
  std::vector<orch::cost_t> load(k, 0);
  std::vector<std::size_t> count(k, 0);
  for (const std::uint32_t item : order) {
    std::size_t best = k; // a closed chunk never wins: LLaVA's float("inf") load
    for (std::size_t r = 0; r < k; ++r) {
      if (count[r] < per_chunk && (best == k || load[r] < load[best])) {
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
