// SPDX-License-Identifier: Apache-2.0
/// The node-wise rearrangement of balanced bins onto ranks: the bijection bins → ranks that
/// keeps the most bytes on their node, then on their rank.
#pragma once

#include <orch/config.hpp>
#include <orch/detail/placement/locality_input.hpp>
#include <orch/detail/placement/sparse_assignment.hpp>
#include <orch/detail/primitives/checked.hpp>
#include <orch/placement/traffic.hpp>
#include <orch/topology.hpp>
#include <orch/types.hpp>

#include <cstddef>
#include <cstdint>
#include <span>
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
  traffic t; // Σ ≤ total_bytes, which was checked
  for (std::size_t i = 0; i < bin_of.size(); ++i) {
    const auto to = out.rank_of_bin[static_cast<std::size_t>(bin_of[i])];
    detail::class_of(t, node, static_cast<std::size_t>(current_rank[i]),
                     static_cast<std::size_t>(to)) += item_bytes[i];
  }
  out.kept_on_rank = t.self;
  out.kept_on_node = t.self + t.intra_node;
  return out;
}

} // namespace orch
