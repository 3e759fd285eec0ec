// SPDX-License-Identifier: Apache-2.0
/// Internals of the placement engine (orch/placement/engine.hpp): settle, the last-resort
/// local search over all ranks that finishes a placement some of whose ranks are above the
/// target (after node_first, and after the per-node fill).
#pragma once

#include <orch/detail/tuning.hpp>
#include <orch/partition/local_search.hpp>
#include <orch/types.hpp>

#include <cstdint>
#include <span>
#include <utility>
#include <vector>

namespace orch::detail {

/// settle() (below) from an assignment the caller no longer needs: the search works in it in
/// place.
[[nodiscard]] inline std::vector<rank_t> settle(std::span<const cost_t> costs, rank_t ranks,
                                                std::vector<rank_t>&& start, cost_t target) {
  local_search_options options;
  options.target = target;
  options.partners = settle_partners;
  options.work_budget =
      settle_work_per_item * static_cast<std::int64_t>(costs.size()) + settle_work_base;
  local_searcher search; // the input was validated by the caller
  if (search.run(costs, ranks, std::move(start), options) > target) {
    return {};
  }
  return search.take_bin_of();
}

/// Last resort for an assignment with ranks above `target`: orch::local_search over all ranks
/// (moves and swaps out of the largest rank, least-loaded partners first), budgeted in work
/// units. Returns the improved assignment, or an empty vector if it is still above target.
[[nodiscard]] inline std::vector<rank_t> settle(std::span<const cost_t> costs, rank_t ranks,
                                                std::span<const rank_t> start, cost_t target) {
  return settle(costs, ranks, std::vector<rank_t>(start.begin(), start.end()), target);
}

} // namespace orch::detail
