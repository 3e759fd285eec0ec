// SPDX-License-Identifier: Apache-2.0
/// Internals of orch/locality.hpp: the locality-first balancing heuristic behind
/// orch::locality_balance (per-node placement, repair, crossing nodes).
#pragma once

#include <orch/config.hpp>
#include <orch/detail/checked.hpp>
#include <orch/detail/locality_input.hpp>
#include <orch/detail/node_placer.hpp>
#include <orch/detail/packing.hpp>
#include <orch/topology.hpp>
#include <orch/types.hpp>

#include <algorithm>
#include <cstddef>
#include <span>
#include <utility>
#include <vector>

namespace orch::detail {

/// How a rank chooses what to keep of its own items.
enum class keep_mode {
  most_bytes,   ///< the better of "most bytes per cost first" and "largest first"
  largest_first ///< largest first only: sheds small items, which are easy to place elsewhere
};

/// What keep_local produced: the new rank of every item, the loads per rank, and the largest.
struct keep_local_result {
  std::vector<rank_t> rank_of;
  std::vector<cost_t> loads;
  cost_t max_load = 0;
};

/// The locality-first heuristic behind orch::locality_balance (see there), for both keep
/// modes. The per-node placements of both modes share their work (the fillings of the ranks
/// above the target, and most nodes' largest-first placement, which most_bytes also weighs),
/// so the constructor places every node once for both; finish() then crosses nodes for one
/// mode. A result's largest load may exceed the target when the items that must leave their
/// node do not fit the room left elsewhere (the caller checks, retries, settles or falls back).
class keep_local_planner {
public:
  /// Complexity: O(n + ranks) plus, per node with a rank above the target, sorting the
  /// items of those ranks and the node's best fit and repair.
  keep_local_planner(std::span<const cost_t> costs, std::span<const rank_t> current_rank,
                     std::span<const bytes_t> item_bytes, const topology& topo, cost_t target)
      : costs_(costs), bytes_(item_bytes), target_(target) {
    const std::size_t n = costs.size();
    const auto ranks = static_cast<std::size_t>(topo.ranks());
    // Items grouped by current rank (counting sort; increasing index within a rank) and each
    // rank's own load.
    std::vector<index_t> first(ranks + 1, 0);
    std::vector<cost_t> rank_load(ranks, 0);
    for (std::size_t i = 0; i < n; ++i) {
      const auto r = static_cast<std::size_t>(current_rank[i]);
      ++first[r + 1];
      rank_load[r] += costs[i]; // ≤ Σ costs, checked by the caller
    }
    for (std::size_t r = 0; r < ranks; ++r) {
      first[r + 1] += first[r];
    }
    std::vector<index_t> order(n);
    {
      std::vector<index_t> next(first.begin(), first.end() - 1);
      for (std::size_t i = 0; i < n; ++i) {
        order[static_cast<std::size_t>(next[static_cast<std::size_t>(current_rank[i])]++)] =
            static_cast<index_t>(i);
      }
    }
    // A node whose ranks are all at or under the target keeps everything where it is.
    most_bytes_.rank_of.assign(current_rank.begin(), current_rank.end());
    most_bytes_.loads = rank_load;
    largest_first_.rank_of = most_bytes_.rank_of;
    largest_first_.loads = rank_load;

    node_placer placer(costs, item_bytes, current_rank, topo.local_indices(), target);
    for (rank_t nd = 0; nd < topo.nodes(); ++nd) {
      const auto on = topo.ranks_on(nd);
      if (std::none_of(on.begin(), on.end(),
                       [&](rank_t r) { return rank_load[static_cast<std::size_t>(r)] > target; })) {
        continue;
      }
      placer.start(on, first, order, rank_load);
      // Per-rank "most bytes" choices are myopic (a rank may keep many small items and shed
      // one huge item that then has to leave the node), so the node also tries "largest
      // first" everywhere and keeps whichever sends fewer bytes off the node, then moves
      // fewer. Without any rank choosing differently both placements are the same.
      const auto placed = placer.place(false);
      if (!placer.differs()) {
        record(placer, on, most_bytes_);
        record(placer, on, largest_first_);
        continue;
      }
      kept_rank_.assign(placer.rank().begin(), placer.rank().end());
      const auto other = placer.place(true);
      record(placer, on, largest_first_);
      const bool other_wins = placed.leaving + placed.moving > 0 &&
                              (other.leaving < placed.leaving ||
                               (other.leaving == placed.leaving && other.moving < placed.moving));
      if (other_wins) {
        record(placer, on, most_bytes_);
      } else {
        record(placer.items(), kept_rank_, on, most_bytes_);
      }
    }
  }

  /// The items that leave their node cross, largest cost first, best fit over all ranks. An
  /// item that fits nowhere goes to the rank with the most room (above the target). Call at
  /// most once per mode: the result is moved out.
  /// Complexity: O(L log L + L log ranks + ranks) for L leaving items.
  [[nodiscard]] keep_local_result finish(keep_mode mode) {
    auto& m = mode == keep_mode::most_bytes ? most_bytes_ : largest_first_;
    keep_local_result out;
    out.rank_of = std::move(m.rank_of);
    out.loads = std::move(m.loads);
    if (!m.leaving.empty()) {
      std::sort(m.leaving.begin(), m.leaving.end(),
                [&](std::size_t a, std::size_t b) { return pack_before(a, b, costs_, bytes_); });
      best_fit fit;
      for (std::size_t r = 0; r < out.loads.size(); ++r) {
        fit.add(static_cast<rank_t>(r), target_ - out.loads[r]);
      }
      for (const std::size_t i : m.leaving) {
        rank_t r = fit.take(costs_[i]);
        if (r < 0) {
          r = fit.take_most_room(costs_[i]);
        }
        out.rank_of[i] = r;
        out.loads[static_cast<std::size_t>(r)] += costs_[i];
      }
    }
    out.max_load = out.loads.empty() ? 0 : *std::max_element(out.loads.begin(), out.loads.end());
    return out;
  }

private:
  struct mode_state {
    std::vector<rank_t> rank_of;
    std::vector<cost_t> loads;
    std::vector<std::size_t> leaving;
  };

  void record(const node_placer& placer, std::span<const rank_t> on, mode_state& m) {
    record(placer.items(), placer.rank(), on, m);
  }

  // Writes a node's placement into a mode: ranks, loads of its ranks, items leaving it.
  void record(std::span<const std::size_t> items, std::span<const rank_t> rank,
              std::span<const rank_t> on, mode_state& m) {
    for (const rank_t r : on) {
      m.loads[static_cast<std::size_t>(r)] = 0;
    }
    for (std::size_t s = 0; s < items.size(); ++s) {
      const std::size_t i = items[s];
      m.rank_of[i] = rank[s];
      if (rank[s] >= 0) {
        m.loads[static_cast<std::size_t>(rank[s])] += costs_[i];
      } else {
        m.leaving.push_back(i);
      }
    }
  }

  std::span<const cost_t> costs_;
  std::span<const bytes_t> bytes_;
  cost_t target_;
  mode_state most_bytes_;
  mode_state largest_first_;
  std::vector<rank_t> kept_rank_;
};

/// The heuristic for one mode alone (see keep_local_planner): the new rank of every item.
[[nodiscard]] inline std::vector<rank_t> keep_local(std::span<const cost_t> costs,
                                                    std::span<const rank_t> current_rank,
                                                    std::span<const bytes_t> item_bytes,
                                                    const topology& topo, cost_t target,
                                                    keep_mode mode) {
  keep_local_planner planner(costs, current_rank, item_bytes, topo, target);
  return planner.finish(mode).rank_of;
}

} // namespace orch::detail
