// SPDX-License-Identifier: Apache-2.0
/// Internals of orch/locality.hpp: input checks, grouping of items by a key, and the sparse
/// (bin, target) byte totals the rearrangement solves on.
#pragma once

#include <orch/config.hpp>
#include <orch/detail/placement/sparse_assignment.hpp>
#include <orch/detail/primitives/checked.hpp>
#include <orch/detail/primitives/group_by_key.hpp>
#include <orch/topology.hpp>
#include <orch/types.hpp>

#include <cstddef>
#include <cstdint>
#include <limits>
#include <span>
#include <utility>
#include <vector>

namespace orch::detail {

/// Items' current ranks inside the topology and sizes non-negative, arrays of equal length.
inline void check_item_arrays(std::span<const rank_t> current_rank,
                              std::span<const bytes_t> item_bytes, const topology& topo,
                              const char* where) {
  if (item_bytes.size() != current_rank.size()) {
    throw_invalid_argument(where, ": ", current_rank.size(), " item ranks but ", item_bytes.size(),
                           " item sizes");
  }
  for (std::size_t i = 0; i < current_rank.size(); ++i) {
    if (current_rank[i] < 0 || current_rank[i] >= topo.ranks()) {
      throw_invalid_argument(where, ": item ", i, " is on rank ", current_rank[i],
                             " outside the topology's [0, ", topo.ranks(), ")");
    }
    if (item_bytes[i] < 0) {
      throw_invalid_argument(where, ": item ", i, " has negative size ", item_bytes[i], " bytes");
    }
  }
}

/// check_item_arrays plus costs of the same length, non-negative, with a representable sum.
/// One branch-free pass decides whether everything is valid; only input it cannot accept
/// takes the item-by-item checks, which find and name the first problem (or accept it).
///
/// Why it is sound: a rank cast to unsigned is below the rank count only if it is in
/// [0, ranks); the OR of all costs (bytes) has the sign bit set iff one is negative, and is at
/// least every single one, so n · OR ≤ INT64_MAX bounds the sum. Inputs whose values are too
/// large for that bound go to the exact checks.
inline void check_balance_input(std::span<const cost_t> costs, std::span<const rank_t> current_rank,
                                std::span<const bytes_t> item_bytes, const topology& topo,
                                const char* where) {
  if (costs.size() == current_rank.size() && item_bytes.size() == current_rank.size()) {
    const auto ranks = static_cast<std::uint32_t>(topo.ranks());
    std::uint32_t bad = 0;
    std::uint64_t cost_or = 0;
    std::uint64_t bytes_or = 0;
    for (std::size_t i = 0; i < costs.size(); ++i) {
      bad |= static_cast<std::uint32_t>(static_cast<std::uint32_t>(current_rank[i]) >= ranks);
      cost_or |= static_cast<std::uint64_t>(costs[i]);
      bytes_or |= static_cast<std::uint64_t>(item_bytes[i]);
    }
    constexpr std::uint64_t sign = std::uint64_t{1} << 63;
    constexpr int128 limit = std::numeric_limits<std::int64_t>::max();
    const auto n = static_cast<int128>(costs.size());
    if (bad == 0 && ((cost_or | bytes_or) & sign) == 0 &&
        n * static_cast<int128>(cost_or) <= limit && n * static_cast<int128>(bytes_or) <= limit) {
      return;
    }
  }
  check_item_arrays(current_rank, item_bytes, topo, where);
  if (costs.size() != current_rank.size()) {
    throw_invalid_argument(where, ": ", costs.size(), " costs but ", current_rank.size(),
                           " item ranks");
  }
  cost_t total = 0;
  for (std::size_t i = 0; i < costs.size(); ++i) {
    if (costs[i] < 0) {
      throw_invalid_argument(where, ": item ", i, " has negative cost ", costs[i]);
    }
    total = checked_add(total, costs[i], where);
  }
  bytes_t bytes = 0;
  for (const bytes_t b : item_bytes) {
    bytes = checked_add(bytes, b, where);
  }
}

/// Σ item bytes, checked.
[[nodiscard]] inline bytes_t sum_bytes(std::span<const bytes_t> item_bytes, const char* where) {
  bytes_t total = 0;
  for (const bytes_t b : item_bytes) {
    total = checked_add(total, b, where);
  }
  return total;
}

/// bin_loads for assignments the library made itself (bins valid, Σ costs checked).
[[nodiscard]] inline std::vector<cost_t> loads_of(std::span<const cost_t> costs,
                                                  std::span<const rank_t> rank_of, rank_t ranks) {
  std::vector<cost_t> loads(static_cast<std::size_t>(ranks), 0);
  for (std::size_t i = 0; i < costs.size(); ++i) {
    loads[static_cast<std::size_t>(rank_of[i])] += costs[i];
  }
  return loads;
}

/// Items grouped by rank (or bin, node, parent): the counting sort of
/// detail/primitives/group_by_key.hpp.
[[nodiscard]] inline grouping items_by_key(std::span<const rank_t> key, std::size_t keys) {
  return group_by_key(key, keys);
}

[[nodiscard]] inline grouping items_by_key(std::span<const index_t> key, std::size_t keys) {
  return group_by_key(key, keys);
}

/// Sorts the entries from `start` to the end by target (entries per bin are few).
inline void sort_entries(sparse_profits& p, std::size_t start) {
  for (std::size_t a = start + 1; a < p.target.size(); ++a) {
    for (std::size_t b = a; b > start && p.target[b - 1] > p.target[b]; --b) {
      std::swap(p.target[b - 1], p.target[b]);
      std::swap(p.profit[b - 1], p.profit[b]);
    }
  }
}

/// Per bin of `by_bin`, the positive byte totals per target (target_of(item)), sorted by
/// target. Σ bytes must already be known to fit.
template <class TargetOf>
[[nodiscard]] sparse_profits aggregate_profits(const grouping& by_bin,
                                               std::span<const bytes_t> item_bytes,
                                               TargetOf target_of, std::size_t targets) {
  sparse_profits p;
  const std::size_t bins = by_bin.first.size() - 1;
  p.first.assign(1, 0);
  p.first.reserve(bins + 1);
  p.target.reserve(by_bin.order.size());
  p.profit.reserve(by_bin.order.size());
  std::vector<index_t> slot(targets, -1); // entry of the target in the current bin, if any
  for (std::size_t k = 0; k < bins; ++k) {
    const std::size_t start = p.target.size();
    for (auto x = static_cast<std::size_t>(by_bin.first[k]);
         x < static_cast<std::size_t>(by_bin.first[k + 1]); ++x) {
      const auto i = static_cast<std::size_t>(by_bin.order[x]);
      if (item_bytes[i] == 0) {
        continue;
      }
      const rank_t t = target_of(i);
      auto& s = slot[static_cast<std::size_t>(t)];
      if (s < 0 || static_cast<std::size_t>(s) < start) {
        s = static_cast<index_t>(p.target.size());
        p.target.push_back(t);
        p.profit.push_back(0);
      }
      p.profit[static_cast<std::size_t>(s)] += item_bytes[i];
    }
    sort_entries(p, start);
    p.first.push_back(static_cast<index_t>(p.target.size()));
  }
  return p;
}

/// A lower bound on the bytes that leave their node under any bijection bins → ranks: every
/// bin keeps at most the bytes it has on its best node. O(items + ranks).
[[nodiscard]] inline bytes_t rearranged_inter_node_bound(std::span<const rank_t> bin_of,
                                                         std::span<const rank_t> current_rank,
                                                         std::span<const bytes_t> item_bytes,
                                                         const topology& topo) {
  const auto node = topo.node_of_ranks();
  const auto by_bin = items_by_key(bin_of, static_cast<std::size_t>(topo.ranks()));
  std::vector<bytes_t> on_node(static_cast<std::size_t>(topo.nodes()), 0);
  std::vector<rank_t> touched;
  bytes_t total = 0;
  bytes_t kept = 0;
  for (std::size_t k = 0; k + 1 < by_bin.first.size(); ++k) {
    bytes_t best = 0;
    touched.clear();
    for (auto x = static_cast<std::size_t>(by_bin.first[k]);
         x < static_cast<std::size_t>(by_bin.first[k + 1]); ++x) {
      const auto i = static_cast<std::size_t>(by_bin.order[x]);
      const rank_t nd = node[static_cast<std::size_t>(current_rank[i])];
      auto& v = on_node[static_cast<std::size_t>(nd)];
      if (v == 0) {
        touched.push_back(nd);
      }
      v += item_bytes[i]; // Σ bytes fits: callers checked it
      total += item_bytes[i];
      best = v > best ? v : best;
    }
    kept += best;
    for (const rank_t nd : touched) {
      on_node[static_cast<std::size_t>(nd)] = 0;
    }
  }
  return total - kept;
}

} // namespace orch::detail
