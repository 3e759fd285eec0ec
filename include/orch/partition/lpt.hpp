// SPDX-License-Identifier: Apache-2.0
/// Longest-processing-time-first (LPT) greedy partitioning of item costs into k bins.
#pragma once

#include <orch/config.hpp>
#include <orch/partition/order.hpp>
#include <orch/partition/result.hpp>
#include <orch/types.hpp>

#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <span>
#include <string>
#include <utility>
#include <vector>

namespace orch {

namespace detail {

/// A tournament (loser) tree over k bins keyed by (load, bin index): the least-loaded bin,
/// lowest index first, is the winner. LPT only ever raises the winner's load, and replaying
/// that one leaf-to-root path costs ⌈log2 k⌉ steps. Each node stores the losing *key*
/// (load << shift | bin) itself, so a step is one load, one compare and two conditional moves
/// with no data-dependent branch or pointer chase; a binary heap's sift-down instead
/// mispredicts about once per level, which was most of LPT's time at thousands of bins.
/// `Key` is std::uint64_t when Σ costs fits beside the bin bits, else unsigned __int128.
template <class Key>
class bin_tree {
public:
  explicit bin_tree(rank_t bins) {
    while ((std::size_t{1} << shift_) < static_cast<std::size_t>(bins)) {
      ++shift_;
    }
    const std::size_t leaves = std::size_t{1} << shift_;
    const Key bin_mask = (Key{1} << shift_) - 1;
    // Padding leaves carry an all-ones load, so they never win against a real bin.
    std::vector<Key> winner(2 * leaves);
    for (std::size_t b = 0; b < leaves; ++b) {
      winner[leaves + b] = b < static_cast<std::size_t>(bins) ? Key{b} : (~bin_mask | Key{b});
    }
    loser_.assign(leaves, Key{0});
    for (std::size_t node = leaves - 1; node >= 1; --node) {
      const Key l = winner[2 * node];
      const Key r = winner[2 * node + 1];
      winner[node] = std::min(l, r);
      loser_[node] = std::max(l, r);
    }
    winner_ = winner[leaves > 1 ? 1 : leaves];
  }

  /// Whether Σ costs leaves room for the bin bits in `Key` (so no key can overflow).
  [[nodiscard]] static bool fits(cost_t total, rank_t bins) noexcept {
    int shift = 0;
    while ((std::size_t{1} << shift) < static_cast<std::size_t>(bins)) {
      ++shift;
    }
    // Loads stay ≤ total; the all-ones load is reserved for padding leaves.
    return static_cast<int>(sizeof(Key)) * 8 - shift > 63 ||
           (static_cast<std::uint64_t>(total) >> (static_cast<int>(sizeof(Key)) * 8 - shift - 1)) ==
               0;
  }

  [[nodiscard]] rank_t top_bin() const noexcept {
    return static_cast<rank_t>(winner_ & ((Key{1} << shift_) - 1));
  }

  /// Adds `cost` to the winner's load and replays its path to the root.
  void add_to_top(cost_t cost) noexcept {
    const Key mask = (Key{1} << shift_) - 1;
    Key cand = winner_ + (static_cast<Key>(cost) << shift_);
    for (std::size_t node =
             ((std::size_t{1} << shift_) + static_cast<std::size_t>(cand & mask)) >> 1;
         node >= 1; node >>= 1) {
      const Key other = loser_[node];
      // Which side wins a level is a coin flip, so a branch would mispredict half the time.
      // Two selects on one comparison and an unconditional store compile to conditional
      // moves (g++ and clang): the chain from one level to the next is a compare and a
      // cmov. With std::min / std::max, GCC skips the store when `other` stays and branches.
      const bool other_wins = other < cand;
      const Key winner = other_wins ? other : cand;
      loser_[node] = other_wins ? cand : other;
      cand = winner;
    }
    winner_ = cand;
  }

  /// Load of every real bin, decoded from the keys held by the tree.
  [[nodiscard]] std::vector<cost_t> loads(rank_t bins) const {
    std::vector<cost_t> out(static_cast<std::size_t>(bins), 0);
    const Key mask = (Key{1} << shift_) - 1;
    auto put = [&](Key k) {
      const auto b = static_cast<std::size_t>(k & mask);
      if (b < out.size()) {
        out[b] = static_cast<cost_t>(k >> shift_);
      }
    };
    put(winner_);
    for (std::size_t node = 1; node < loser_.size(); ++node) {
      put(loser_[node]);
    }
    return out;
  }

private:
  int shift_ = 0;
  Key winner_{};
  std::vector<Key> loser_; // per internal node 1..leaves-1 (index 0 unused)
};

/// LPT's visit, recorded for the stages after it: position p holds the p-th item by cost
/// descending, index ascending, its cost and the bin LPT gave it. Reading these in order is
/// sequential, where looking items up by index jumps around the cost and bin arrays.
struct lpt_trace {
  std::vector<std::uint32_t> order;
  std::vector<cost_t> cost;
  std::vector<rank_t> bin;
};

/// LPT over validated input (costs non-negative, Σ fits), with the total already known.
/// When `trace` is given it receives LPT's visit (see lpt_trace).
template <class Key>
[[nodiscard]] partition_result lpt_with(std::span<const cost_t> costs, rank_t bins, cost_t total,
                                        lpt_trace* trace) {
  std::vector<rank_t> bin_of(costs.size(), 0);
  bin_tree<Key> tree(bins);
  cost_t largest = -1;
  std::uint32_t* order_at = nullptr;
  cost_t* cost_at = nullptr;
  rank_t* bin_at = nullptr;
  if (trace != nullptr) {
    trace->order.resize(costs.size());
    trace->cost.resize(costs.size());
    trace->bin.resize(costs.size());
    order_at = trace->order.data();
    cost_at = trace->cost.data();
    bin_at = trace->bin.data();
  }
  visit_desc(costs, [&](std::uint32_t item, cost_t cost) {
    largest = largest < 0 ? cost : largest;
    const rank_t b = tree.top_bin();
    bin_of[item] = b;
    tree.add_to_top(cost);
    if (order_at != nullptr) {
      *order_at++ = item;
      *cost_at++ = cost;
      *bin_at++ = b;
    }
  });
  const cost_t bound = std::max(ceil_div(total, bins), std::max<cost_t>(largest, 0));
  return make_result_with_loads(std::move(bin_of), tree.loads(bins), bound, "lpt");
}

/// LPT over validated input: 64-bit keys when Σ costs leaves room for the bin bits.
[[nodiscard]] inline partition_result lpt_unchecked(std::span<const cost_t> costs, rank_t bins,
                                                    cost_t total, lpt_trace* trace = nullptr) {
  if (bin_tree<std::uint64_t>::fits(total, bins)) {
    return lpt_with<std::uint64_t>(costs, bins, total, trace);
  }
  __extension__ typedef unsigned __int128 wide_key;
  return lpt_with<wide_key>(costs, bins, total, trace);
}

} // namespace detail

/// LPT: items in order of cost descending (ties: lower index first), each to the currently
/// least-loaded bin (ties: lower bin index).
///
/// Complexity: O(n · b + n log k + k), b the significant bytes of the largest cost (radix
/// sort), log k from the tournament tree.
/// Guarantee: max load ≤ (4/3 − 1/(3k)) · optimum (Graham 1969); optimal when n ≤ k.
/// Determinism: the result depends only on the costs and k (total tie-breaks above).
/// Throws: orch::invalid_argument (k ≤ 0, a negative cost), orch::overflow (Σ costs).
[[nodiscard]] inline partition_result lpt(std::span<const cost_t> costs, rank_t bins) {
  detail::check_bins(bins, "lpt");
  const cost_t total = detail::total_cost(costs, "lpt");
  return detail::lpt_unchecked(costs, bins, total);
}

} // namespace orch
