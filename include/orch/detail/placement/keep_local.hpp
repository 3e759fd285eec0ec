// SPDX-License-Identifier: Apache-2.0
/// Internals of orch/locality.hpp: the locality-first balancing heuristic behind
/// orch::locality_balance (per-node placement, repair, crossing nodes).
#pragma once

#include <orch/config.hpp>
#include <orch/detail/placement/best_fit.hpp>
#include <orch/detail/placement/locality_input.hpp>
#include <orch/detail/placement/node_placer.hpp>
#include <orch/detail/placement/packing.hpp>
#include <orch/detail/primitives/checked.hpp>
#include <orch/detail/primitives/parallel.hpp>
#include <orch/topology.hpp>
#include <orch/types.hpp>

#include <algorithm>
#include <bit>
#include <cstddef>
#include <cstdint>
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
    // Items grouped by current rank (increasing index within a rank) and each rank's own load.
    const auto by_rank = group_by_key(current_rank, ranks);
    std::vector<cost_t> rank_load(ranks, 0);
    for (std::size_t i = 0; i < n; ++i) {
      rank_load[static_cast<std::size_t>(current_rank[i])] += costs[i]; // ≤ Σ costs, checked
    }
    const std::span<const index_t> first = by_rank.first;
    const std::span<const index_t> order(by_rank.order.data(), by_rank.order.size());
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
  /// Complexity: O(L log L + L log ranks + ranks log ranks) for L leaving items.
  [[nodiscard]] keep_local_result finish(keep_mode mode) {
    auto& m = mode == keep_mode::most_bytes ? most_bytes_ : largest_first_;
    keep_local_result out;
    out.rank_of = std::move(m.rank_of);
    out.loads = std::move(m.loads);
    if (!m.leaving.empty()) {
      const std::vector<std::size_t> leaving = pack_sorted(m.leaving);
      best_fit fit;
      for (std::size_t r = 0; r < out.loads.size(); ++r) {
        fit.add(static_cast<rank_t>(r), target_ - out.loads[r]);
      }
      fit.sort_from(costs_[leaving.back()]); // the least cost: the last in pack order
      for (const std::size_t i : leaving) {
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
  // The items in pack_before order. When a cost and the bytes fit in 64 bits together, one
  // packed key (larger cost, then more bytes) with the index beside it has exactly that order
  // and sorts much faster than comparisons that look the items up.
  [[nodiscard]] std::vector<std::size_t> pack_sorted(std::span<const std::size_t> items) const {
    cost_t max_cost = 0;
    bytes_t max_bytes = 0;
    for (const std::size_t i : items) {
      max_cost = std::max(max_cost, costs_[i]);
      max_bytes = std::max(max_bytes, bytes_[i]);
    }
    const auto bytes_bits = std::bit_width(static_cast<std::uint64_t>(max_bytes));
    std::vector<std::size_t> out;
    if (std::bit_width(static_cast<std::uint64_t>(max_cost)) + bytes_bits > 64) {
      out.assign(items.begin(), items.end());
      std::sort(out.begin(), out.end(),
                [&](std::size_t a, std::size_t b) { return pack_before(a, b, costs_, bytes_); });
      return out;
    }
    std::vector<std::pair<std::uint64_t, std::size_t>> keyed(items.size());
    for (std::size_t x = 0; x < items.size(); ++x) {
      const std::size_t i = items[x];
      keyed[x] = {pack_order_key(costs_[i], bytes_[i], max_cost, max_bytes,
                                 static_cast<std::size_t>(bytes_bits)),
                  i};
    }
    std::sort(keyed.begin(), keyed.end());
    out.resize(items.size());
    for (std::size_t x = 0; x < items.size(); ++x) {
      out[x] = keyed[x].second;
    }
    return out;
  }

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
    std::vector<std::size_t> kept_changed;
    for (std::size_t nd = range.begin; nd < range.end; ++nd) {
      const auto on = topo.ranks_on(static_cast<rank_t>(nd));
      if (std::none_of(on.begin(), on.end(), [&](rank_t r) {
            return rank_load[static_cast<std::size_t>(r)] > target_;
          })) {
        continue;
      }
      placer.start(on, first, order, rank_load);
      const node_placement node{placer.items(), on, current_rank, rank_load};
      // Per-rank "most bytes" choices are myopic (a rank may keep many small items and shed
      // one huge item that then has to leave the node), so the node also tries "largest
      // first" everywhere and keeps whichever sends fewer bytes off the node, then moves
      // fewer. Without any rank choosing differently both placements are the same.
      const auto placed = placer.place(false);
      if (!placer.differs()) {
        record(node, placer.changed(), placer.rank(), most_bytes_, range.leaving_most);
        record(node, placer.changed(), placer.rank(), largest_first_, range.leaving_largest);
        continue;
      }
      kept_rank.assign(placer.rank().begin(), placer.rank().end());
      kept_changed.assign(placer.changed().begin(), placer.changed().end());
      const auto other = placer.place(true);
      record(node, placer.changed(), placer.rank(), largest_first_, range.leaving_largest);
      const bool other_wins = placed.leaving + placed.moving > 0 &&
                              (other.leaving < placed.leaving ||
                               (other.leaving == placed.leaving && other.moving < placed.moving));
      if (other_wins) {
        record(node, placer.changed(), placer.rank(), most_bytes_, range.leaving_most);
      } else {
        record(node, kept_changed, kept_rank, most_bytes_, range.leaving_most);
      }
    }
  }

  struct mode_state {
    std::vector<rank_t> rank_of;
    std::vector<cost_t> loads;
    std::vector<std::size_t> leaving;
  };

  // A node being placed: its items by slot, its ranks, and everyone's current rank and load.
  struct node_placement {
    std::span<const std::size_t> items;
    std::span<const rank_t> on;
    std::span<const rank_t> current_rank;
    std::span<const cost_t> rank_load;
  };

  // Writes a node's placement into a mode: ranks, loads of its ranks, items leaving it. Only
  // the `changed` slots can be off their own rank (see node_placer::changed()), so only they
  // are written; every other item already has its current rank there.
  void record(const node_placement& node, std::span<const std::size_t> changed,
              std::span<const rank_t> rank, mode_state& m, std::vector<std::size_t>& leaving) {
    for (const rank_t r : node.on) {
      m.loads[static_cast<std::size_t>(r)] = node.rank_load[static_cast<std::size_t>(r)];
    }
    for (const std::size_t s : changed) {
      const std::size_t i = node.items[s];
      m.rank_of[i] = rank[s];
      m.loads[static_cast<std::size_t>(node.current_rank[i])] -= costs_[i];
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
