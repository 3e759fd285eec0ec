// SPDX-License-Identifier: Apache-2.0
/// Traffic by locality class: the bytes of moving items between ranks that stay on their rank,
/// stay inside their node, or cross nodes (the traffic of an exchange plan is measured on the
/// plan side: measure_traffic(const exchange_plan&, topo) in orch/exchange/plan.hpp).
#pragma once

#include <orch/config.hpp>
#include <orch/detail/placement/locality_input.hpp>
#include <orch/detail/primitives/checked.hpp>
#include <orch/topology.hpp>
#include <orch/types.hpp>

#include <cstddef>
#include <cstdint>
#include <limits>
#include <span>

namespace orch {

/// Bytes of an exchange by where they go: staying on their rank, to another rank of the same
/// node (NVLink), to another node (network).
struct traffic {
  bytes_t self = 0;
  bytes_t intra_node = 0;
  bytes_t inter_node = 0;

  /// self + intra_node + inter_node.
  [[nodiscard]] bytes_t total() const noexcept { return self + intra_node + inter_node; }
  /// inter_node / total (0 when nothing moves). Reporting only.
  [[nodiscard]] double inter_node_share() const noexcept {
    const bytes_t t = total();
    return t == 0 ? 0.0 : static_cast<double>(inter_node) / static_cast<double>(t);
  }
  /// Member-wise equality.
  friend bool operator==(const traffic&, const traffic&) = default;
};

namespace detail {

/// Whether traffic `a` is the better placement's: fewer bytes across nodes, then fewer bytes
/// moved at all (the order every locality heuristic is judged by).
[[nodiscard]] inline bool sends_fewer(const traffic& a, const traffic& b) noexcept {
  return a.inter_node != b.inter_node ? a.inter_node < b.inter_node
                                      : a.intra_node + a.inter_node < b.intra_node + b.inter_node;
}

/// The member of `t` that bytes moving from rank s to rank d count in (`node`: the node of
/// every rank): the one classification every traffic measure uses.
[[nodiscard]] inline bytes_t& class_of(traffic& t, std::span<const rank_t> node, std::size_t s,
                                       std::size_t d) noexcept {
  return s == d ? t.self : node[s] == node[d] ? t.intra_node : t.inter_node;
}

/// measure_traffic for assignments the library made itself (ranks valid, Σ bytes checked).
[[nodiscard]] inline traffic traffic_of(std::span<const rank_t> from_rank,
                                        std::span<const rank_t> to_rank,
                                        std::span<const bytes_t> item_bytes, const topology& topo) {
  const auto node = topo.node_of_ranks();
  traffic t;
  for (std::size_t i = 0; i < from_rank.size(); ++i) {
    class_of(t, node, static_cast<std::size_t>(from_rank[i]),
             static_cast<std::size_t>(to_rank[i])) += item_bytes[i];
  }
  return t;
}

} // namespace detail

/// Traffic of moving item i from rank `from_rank[i]` to rank `to_rank[i]`.
/// Complexity: O(items). Throws: orch::invalid_argument (sizes differ, a rank outside the
/// topology, a negative size — naming the item), orch::overflow.
[[nodiscard]] inline traffic measure_traffic(std::span<const rank_t> from_rank,
                                             std::span<const rank_t> to_rank,
                                             std::span<const bytes_t> item_bytes,
                                             const topology& topo) {
  // One branch-free pass accepts valid input (ranks in range, sizes ≥ 0, n · OR of the sizes
  // bounding every sum); anything else takes the checks below, which name the first problem.
  if (item_bytes.size() == from_rank.size() && to_rank.size() == from_rank.size()) {
    const auto ranks = static_cast<std::uint32_t>(topo.ranks());
    std::uint32_t bad = 0;
    std::uint64_t bytes_or = 0;
    for (std::size_t i = 0; i < from_rank.size(); ++i) {
      bad |= static_cast<std::uint32_t>(static_cast<std::uint32_t>(from_rank[i]) >= ranks) |
             static_cast<std::uint32_t>(static_cast<std::uint32_t>(to_rank[i]) >= ranks);
      bytes_or |= static_cast<std::uint64_t>(item_bytes[i]);
    }
    const auto bound = static_cast<detail::int128>(from_rank.size()) * bytes_or;
    if (bad == 0 && (bytes_or >> 63) == 0 && bound <= std::numeric_limits<bytes_t>::max()) {
      return detail::traffic_of(from_rank, to_rank, item_bytes, topo);
    }
  }
  detail::check_item_arrays(from_rank, item_bytes, topo, "measure_traffic");
  if (to_rank.size() != from_rank.size()) {
    throw_invalid_argument("measure_traffic: ", from_rank.size(), " source ranks but ",
                           to_rank.size(), " destination ranks");
  }
  const auto node = topo.node_of_ranks();
  traffic t;
  for (std::size_t i = 0; i < from_rank.size(); ++i) {
    if (to_rank[i] < 0 || to_rank[i] >= topo.ranks()) {
      throw_invalid_argument("measure_traffic: item ", i, " goes to rank ", to_rank[i],
                             " outside the topology's [0, ", topo.ranks(), ")");
    }
    auto& cls = detail::class_of(t, node, static_cast<std::size_t>(from_rank[i]),
                                 static_cast<std::size_t>(to_rank[i]));
    cls = detail::checked_add(cls, item_bytes[i], "measure_traffic");
  }
  return t;
}

} // namespace orch
