// SPDX-License-Identifier: Apache-2.0
/// Internals of orch/locality.hpp: the locality-first balancing heuristic behind
/// orch::locality_balance (per-node placement, repair, crossing nodes).
#pragma once

#include <orch/config.hpp>
#include <orch/detail/checked.hpp>
#include <orch/detail/locality_input.hpp>
#include <orch/detail/node_placer.hpp>
#include <orch/detail/packing.hpp>
#include <orch/detail/parallel.hpp>
#include <orch/topology.hpp>
#include <orch/types.hpp>

#include <algorithm>
#include <cstddef>
#include <functional>
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
  /// `threads` > 1 places ranges of nodes concurrently (same result).
  keep_local_planner(std::span<const cost_t> costs, std::span<const rank_t> current_rank,
                     std::span<const bytes_t> item_bytes, const topology& topo, cost_t target,
                     int threads = 1)
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

    // Nodes are independent: with several threads each takes a contiguous range of nodes,
    // with its own placer and leaving lists, appended in node order afterwards (finish()
    // orders them by a total order anyway), so the result does not depend on the threads.
    const auto nodes = static_cast<std::size_t>(topo.nodes());
    const std::size_t chunks = std::clamp<std::size_t>(
        static_cast<std::size_t>(std::max(threads, 1)), 1, std::max<std::size_t>(1, nodes / 16));
    std::vector<node_range> ranges(chunks);
    std::vector<std::function<void()>> tasks;
    for (std::size_t c = 0; c < chunks; ++c) {
      ranges[c].begin = nodes * c / chunks;
      ranges[c].end = nodes * (c + 1) / chunks;
      tasks.emplace_back(
          [&, c] { place_nodes(ranges[c], topo, current_rank, first, order, rank_load); });
    }
    run_tasks(tasks, static_cast<int>(chunks));
    for (auto& r : ranges) {
      most_bytes_.leaving.insert(most_bytes_.leaving.end(), r.leaving_most.begin(),
                                 r.leaving_most.end());
      largest_first_.leaving.insert(largest_first_.leaving.end(), r.leaving_largest.begin(),
                                    r.leaving_largest.end());
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
  // A contiguous range of nodes placed by one task, with the items leaving them per mode.
  struct node_range {
    std::size_t begin = 0;
    std::size_t end = 0;
    std::vector<std::size_t> leaving_most;
    std::vector<std::size_t> leaving_largest;
  };

  // Places the nodes of `range`: writes only their items' ranks, their ranks' loads and the
  // range's own leaving lists, so ranges can run concurrently.
  void place_nodes(node_range& range, const topology& topo, std::span<const rank_t> current_rank,
                   std::span<const index_t> first, std::span<const index_t> order,
                   std::span<const cost_t> rank_load) {
    node_placer placer(costs_, bytes_, current_rank, topo.local_indices(), target_);
    std::vector<rank_t> kept_rank;
    for (std::size_t nd = range.begin; nd < range.end; ++nd) {
      const auto on = topo.ranks_on(static_cast<rank_t>(nd));
      if (std::none_of(on.begin(), on.end(), [&](rank_t r) {
            return rank_load[static_cast<std::size_t>(r)] > target_;
          })) {
        continue;
      }
      placer.start(on, first, order, rank_load);
      // Per-rank "most bytes" choices are myopic (a rank may keep many small items and shed
      // one huge item that then has to leave the node), so the node also tries "largest
      // first" everywhere and keeps whichever sends fewer bytes off the node, then moves
      // fewer. Without any rank choosing differently both placements are the same.
      const auto placed = placer.place(false);
      if (!placer.differs()) {
        record(placer.items(), placer.rank(), on, most_bytes_, range.leaving_most);
        record(placer.items(), placer.rank(), on, largest_first_, range.leaving_largest);
        continue;
      }
      kept_rank.assign(placer.rank().begin(), placer.rank().end());
      const auto other = placer.place(true);
      record(placer.items(), placer.rank(), on, largest_first_, range.leaving_largest);
      const bool other_wins = placed.leaving + placed.moving > 0 &&
                              (other.leaving < placed.leaving ||
                               (other.leaving == placed.leaving && other.moving < placed.moving));
      if (other_wins) {
        record(placer.items(), placer.rank(), on, most_bytes_, range.leaving_most);
      } else {
        record(placer.items(), kept_rank, on, most_bytes_, range.leaving_most);
      }
    }
  }

  struct mode_state {
    std::vector<rank_t> rank_of;
    std::vector<cost_t> loads;
    std::vector<std::size_t> leaving;
  };

  // Writes a node's placement into a mode: ranks, loads of its ranks, items leaving it.
  void record(std::span<const std::size_t> items, std::span<const rank_t> rank,
              std::span<const rank_t> on, mode_state& m, std::vector<std::size_t>& leaving) {
    for (const rank_t r : on) {
      m.loads[static_cast<std::size_t>(r)] = 0;
    }
    for (std::size_t s = 0; s < items.size(); ++s) {
      const std::size_t i = items[s];
      m.rank_of[i] = rank[s];
      if (rank[s] >= 0) {
        m.loads[static_cast<std::size_t>(rank[s])] += costs_[i];
      } else {
        leaving.push_back(i);
      }
    }
  }

  std::span<const cost_t> costs_;
  std::span<const bytes_t> bytes_;
  cost_t target_;
  mode_state most_bytes_;
  mode_state largest_first_;
};

} // namespace orch::detail
