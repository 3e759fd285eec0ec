// SPDX-License-Identifier: Apache-2.0
/// Ranks grouped into nodes: which node each rank is on and its position inside that node.
#pragma once

#include <orch/config.hpp>
#include <orch/types.hpp>

#include <cstddef>
#include <limits>
#include <span>
#include <utility>
#include <vector>

namespace orch {

/// The machine shape of a job: `ranks()` ranks on `nodes()` nodes. Nodes are numbered densely
/// 0..nodes()-1; inside a node, ranks are numbered by their *local index* 0..size-1 in
/// increasing rank order. Ranks with the same local index on different nodes share a "rail"
/// (on a rail-optimised fabric they hang off the same leaf switch), which is what the
/// node-wise schedule (orch/exchange/schedule.hpp) keeps inter-node traffic on.
///
/// A default-constructed topology is one rank on one node.
class topology {
public:
  topology() : topology(std::vector<rank_t>{0}) {}

  /// `ranks` ranks, `ranks_per_node` per node, consecutive: rank r is on node r / ranks_per_node
  /// with local index r % ranks_per_node (the usual launcher order).
  /// Complexity: O(ranks).
  /// Throws: orch::invalid_argument (ranks ≤ 0, ranks_per_node ≤ 0, or ranks not a multiple of
  /// ranks_per_node — use from_node_of_rank for nodes of different sizes).
  [[nodiscard]] static topology uniform(rank_t ranks, rank_t ranks_per_node) {
    if (ranks <= 0) {
      throw_invalid_argument("topology::uniform: ranks must be positive, got ", ranks);
    }
    if (ranks_per_node <= 0) {
      throw_invalid_argument("topology::uniform: ranks_per_node must be positive, got ",
                             ranks_per_node);
    }
    if (ranks % ranks_per_node != 0) {
      throw_invalid_argument("topology::uniform: ", ranks, " ranks are not a multiple of ",
                             ranks_per_node, " ranks per node");
    }
    std::vector<rank_t> node_of(static_cast<std::size_t>(ranks));
    for (rank_t r = 0; r < ranks; ++r) {
      node_of[static_cast<std::size_t>(r)] = r / ranks_per_node;
    }
    return topology(std::move(node_of));
  }

  /// An explicit node for every rank (nodes may differ in size and need not be contiguous).
  /// Complexity: O(ranks).
  /// Throws: orch::invalid_argument (no ranks, a negative node, or node numbers that are not
  /// dense: some node below the largest one has no rank; the message names it).
  [[nodiscard]] static topology from_node_of_rank(std::vector<rank_t> node_of_rank) {
    if (node_of_rank.empty()) {
      throw_invalid_argument("topology::from_node_of_rank: no ranks");
    }
    if (node_of_rank.size() >= static_cast<std::size_t>(std::numeric_limits<rank_t>::max())) {
      throw_invalid_argument("topology::from_node_of_rank: ", node_of_rank.size(),
                             " ranks, above the ", std::numeric_limits<rank_t>::max() - 1,
                             " that rank_t can number");
    }
    rank_t largest = 0;
    for (std::size_t r = 0; r < node_of_rank.size(); ++r) {
      if (node_of_rank[r] < 0) {
        throw_invalid_argument("topology::from_node_of_rank: rank ", r, " has negative node ",
                               node_of_rank[r]);
      }
      largest = node_of_rank[r] > largest ? node_of_rank[r] : largest;
    }
    // With more node numbers than ranks some node is empty; looking for it among the first
    // ranks + 1 numbers is enough and keeps the scratch array small.
    const rank_t nodes = static_cast<std::size_t>(largest) < node_of_rank.size()
                             ? largest + 1
                             : static_cast<rank_t>(node_of_rank.size()) + 1;
    std::vector<char> used(static_cast<std::size_t>(nodes), 0);
    for (const rank_t n : node_of_rank) {
      if (n < nodes) {
        used[static_cast<std::size_t>(n)] = 1;
      }
    }
    for (rank_t n = 0; n < nodes; ++n) {
      if (used[static_cast<std::size_t>(n)] == 0) {
        throw_invalid_argument("topology::from_node_of_rank: node ", n,
                               " has no rank (nodes must be numbered densely from 0)");
      }
    }
    return topology(std::move(node_of_rank));
  }

  /// Number of ranks. Complexity: O(1).
  [[nodiscard]] rank_t ranks() const noexcept { return static_cast<rank_t>(node_of_.size()); }
  /// Number of nodes. Complexity: O(1).
  [[nodiscard]] rank_t nodes() const noexcept { return static_cast<rank_t>(first_.size() - 1); }

  /// The node of `rank`. Complexity: O(1). Throws: orch::invalid_argument (rank out of range).
  [[nodiscard]] rank_t node_of(rank_t rank) const {
    check_rank(rank, "topology::node_of");
    return node_of_[static_cast<std::size_t>(rank)];
  }
  /// Position of `rank` inside its node (0 for the node's lowest rank).
  /// Complexity: O(1). Throws: orch::invalid_argument (rank out of range).
  [[nodiscard]] rank_t local_index(rank_t rank) const {
    check_rank(rank, "topology::local_index");
    return local_[static_cast<std::size_t>(rank)];
  }
  /// Number of ranks on `node`. Complexity: O(1). Throws: orch::invalid_argument.
  [[nodiscard]] rank_t ranks_per_node(rank_t node) const {
    check_node(node, "topology::ranks_per_node");
    const auto n = static_cast<std::size_t>(node);
    return first_[n + 1] - first_[n];
  }
  /// The rank with local index `local` on `node`. Complexity: O(1).
  /// Throws: orch::invalid_argument (node or local index out of range).
  [[nodiscard]] rank_t rank_at(rank_t node, rank_t local) const {
    check_node(node, "topology::rank_at");
    const auto n = static_cast<std::size_t>(node);
    if (local < 0 || local >= first_[n + 1] - first_[n]) {
      throw_invalid_argument("topology::rank_at: node ", node, " has ", first_[n + 1] - first_[n],
                             " ranks, no local index ", local);
    }
    return by_node_[static_cast<std::size_t>(first_[n] + local)];
  }
  /// The ranks of `node` in local-index order. Complexity: O(1). Throws: orch::invalid_argument.
  [[nodiscard]] std::span<const rank_t> ranks_on(rank_t node) const {
    check_node(node, "topology::ranks_on");
    const auto n = static_cast<std::size_t>(node);
    return std::span<const rank_t>(by_node_).subspan(
        static_cast<std::size_t>(first_[n]), static_cast<std::size_t>(first_[n + 1] - first_[n]));
  }
  /// Node of every rank, indexed by rank (for loops that must not pay a range check).
  [[nodiscard]] std::span<const rank_t> node_of_ranks() const noexcept { return node_of_; }
  /// Local index of every rank, indexed by rank.
  [[nodiscard]] std::span<const rank_t> local_indices() const noexcept { return local_; }
  /// Largest number of ranks on one node. Complexity: O(1).
  [[nodiscard]] rank_t max_ranks_per_node() const noexcept { return max_size_; }
  /// True when every node has the same number of ranks. Complexity: O(1).
  [[nodiscard]] bool is_uniform() const noexcept {
    return static_cast<std::size_t>(max_size_) * (first_.size() - 1) == node_of_.size();
  }

  /// Same node for every rank. Complexity: O(ranks).
  friend bool operator==(const topology& a, const topology& b) noexcept {
    return a.node_of_ == b.node_of_;
  }

private:
  explicit topology(std::vector<rank_t> node_of) : node_of_(std::move(node_of)) {
    rank_t nodes = 0;
    for (const rank_t n : node_of_) {
      nodes = n + 1 > nodes ? n + 1 : nodes;
    }
    // Counting sort of ranks by node: stable, so local indices follow rank order.
    first_.assign(static_cast<std::size_t>(nodes) + 1, 0);
    for (const rank_t n : node_of_) {
      ++first_[static_cast<std::size_t>(n) + 1];
    }
    for (std::size_t n = 0; n < static_cast<std::size_t>(nodes); ++n) {
      max_size_ = first_[n + 1] > max_size_ ? first_[n + 1] : max_size_;
      first_[n + 1] += first_[n];
    }
    by_node_.resize(node_of_.size());
    local_.resize(node_of_.size());
    std::vector<rank_t> next(first_.begin(), first_.end() - 1);
    for (std::size_t r = 0; r < node_of_.size(); ++r) {
      const auto n = static_cast<std::size_t>(node_of_[r]);
      local_[r] = next[n] - first_[n];
      by_node_[static_cast<std::size_t>(next[n]++)] = static_cast<rank_t>(r);
    }
  }

  void check_rank(rank_t rank, const char* where) const {
    if (rank < 0 || rank >= ranks()) {
      throw_invalid_argument(where, ": rank ", rank, " is outside the topology's [0, ", ranks(),
                             ")");
    }
  }
  void check_node(rank_t node, const char* where) const {
    if (node < 0 || node >= nodes()) {
      throw_invalid_argument(where, ": node ", node, " is outside [0, ", nodes(), ")");
    }
  }

  std::vector<rank_t> node_of_; // per rank
  std::vector<rank_t> local_;   // per rank
  std::vector<rank_t> first_;   // per node + 1: offsets into by_node_
  std::vector<rank_t> by_node_; // ranks grouped by node, local-index order
  rank_t max_size_ = 0;
};

} // namespace orch
