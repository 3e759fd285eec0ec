// SPDX-License-Identifier: Apache-2.0
/// Internals of the placement engine (orch/placement/engine.hpp): shed and fill, a candidate
/// against a reference's target that decides, node by node, which items leave (the fewest
/// bytes per unit of cost that let the rest pack into the node's ranks) and packs them into
/// the other nodes together with those nodes' own items.
#pragma once

#include <orch/detail/placement/locality_input.hpp>
#include <orch/detail/placement/packing.hpp>
#include <orch/detail/primitives/checked.hpp>
#include <orch/detail/tuning.hpp>
#include <orch/partition/partition.hpp>
#include <orch/placement/rearrange.hpp>
#include <orch/topology.hpp>
#include <orch/types.hpp>

#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <limits>
#include <queue>
#include <span>
#include <utility>
#include <vector>

namespace orch::detail {

/// Shed and fill. On targets about 1 % above the mean load with a handful of coarse items per
/// rank (the vision inputs of the bundled trace) a node's own items rarely pack into its ranks
/// by filling rank after rank, but orch::partition packs them, or all but a few; and the items
/// that must leave a node cross nodes whatever other node takes them, so they may move between
/// receivers for free. Hence:
///  1. every node keeps its items if LPT + local search (orch::partition, lpt+ls) packs them
///     into its ranks under the target; otherwise it sheds them one at a time in the reverse
///     of the keep order (fewest bytes per unit of cost first, then the smaller cost, then
///     the higher index), until the rest packs. Shedding whole items in that order overshoots
///     what the node must shed (on the bundled trace's vision inputs at 512 ranks, 0.053 of
///     the 0.126 GB above the bound), so each shedding node then trades: a shed item, most bytes
///     first, comes back if the node still packs with it, or comes back in place of a kept
///     item with fewer bytes, as long as the node packs under the largest load any node
///     packed to in this step (so the trade spends none of the phase's balance);
///  2. the shed items, largest first (then lower index), go to the roomiest nodes (room:
///     ranks · target − load, most first, then lower node) other than their home, the first
///     of shed_fill_tries whose items packed with it still meet the target taking it;
///  3. an item no node takes evicts, on one of the shed_fill_tries roomiest nodes, a smaller
///     item whose leaving adds the fewest bytes across nodes (a received one adds none, an own
///     one its bytes; then the roomier node, then lower index), checking at most
///     shed_fill_evictions candidates per node; the evicted item goes back into step 2;
///  4. each node's final items are packed by lpt+ls and its bins mapped to its ranks by
///     rearrange_bins (the most bytes kept on their rank).
/// In steps 2 and 3 a node that refused an item (or an item in place of a given y) since its
/// items last changed counts as refusing any item at least as large (in place of that y)
/// without a check.
/// An item that finds no place (or once the evictions exceed shed_fill_eviction_factor · the
/// items shed) stays at home, so that its node is above the target; the caller finishes such
/// nodes (repartition_nodes). Returns the new rank of every item.
/// Complexity: one lpt+ls partition of a node's m items per check (O(m log m) plus its local
/// search): one per node, one per item shed while its node still cannot pack, up to
/// shed_trade_checks per shedding node, up to
/// shed_fill_tries per waiting item and shed_fill_tries · shed_fill_evictions per eviction,
/// less the remembered refusals; plus O(nodes) per item moved to keep the nodes by room.
/// Deterministic: integer costs and total orders only. Inputs validated by the caller (Σ costs fits
/// in cost_t).
[[nodiscard]] inline std::vector<rank_t> shed_and_fill(std::span<const cost_t> costs,
                                                       std::span<const rank_t> current_rank,
                                                       std::span<const bytes_t> item_bytes,
                                                       const topology& topo, cost_t target) {
  const auto node_of_rank = topo.node_of_ranks();
  const auto nodes = static_cast<std::size_t>(topo.nodes());
  const std::size_t n = costs.size();
  const auto home_of = [&](std::size_t i) {
    return static_cast<std::size_t>(node_of_rank[static_cast<std::size_t>(current_rank[i])]);
  };
  std::vector<std::vector<std::uint32_t>> held(nodes); // the items each node holds now
  std::vector<cost_t> load(nodes, 0);                  // Σ costs ≤ the checked total
  std::vector<int128> capacity(nodes, 0);              // ranks · target may pass 2^63
  for (std::size_t nd = 0; nd < nodes; ++nd) {
    capacity[nd] =
        static_cast<int128>(topo.ranks_on(static_cast<rank_t>(nd)).size()) * int128{target};
  }
  for (std::size_t i = 0; i < n; ++i) {
    held[home_of(i)].push_back(static_cast<std::uint32_t>(i));
    load[home_of(i)] += costs[i];
  }

  partition_options lpt_ls;
  lpt_ls.algorithm = partition_algorithm::lpt_ls;
  std::vector<cost_t> scratch;
  constexpr std::size_t none = ~std::size_t{0};
  constexpr cost_t unpackable = std::numeric_limits<cost_t>::max();
  // The largest load of lpt+ls packing node nd's items, plus `extra` and less `skip` (none:
  // no such item), into its ranks; `unpackable` when they cannot meet the target.
  const auto packed_max = [&](std::size_t nd, std::size_t extra, std::size_t skip) {
    int128 sum = load[nd];
    sum += extra == none ? 0 : costs[extra];
    sum -= skip == none ? 0 : costs[skip];
    if (sum > capacity[nd]) {
      return unpackable;
    }
    scratch.clear();
    for (const std::uint32_t i : held[nd]) {
      if (i != skip) {
        scratch.push_back(costs[i]);
      }
    }
    if (extra != none) {
      scratch.push_back(costs[extra]);
    }
    if (scratch.empty()) {
      return cost_t{0};
    }
    if (*std::max_element(scratch.begin(), scratch.end()) > target) {
      return unpackable;
    }
    const auto ranks = static_cast<rank_t>(topo.ranks_on(static_cast<rank_t>(nd)).size());
    const cost_t got = partition(scratch, ranks, lpt_ls).max_load;
    return got <= target ? got : unpackable;
  };
  // Whether they pack under the target.
  const auto packs = [&](std::size_t nd, std::size_t extra, std::size_t skip) {
    return packed_max(nd, extra, skip) != unpackable;
  };
  // What each node refused since its items last changed: a node that could not take an item
  // (or take it in place of item y) is not asked again for one at least as large (in place
  // of the same y) until it changes. The answer would be the same but for lpt+ls being a
  // heuristic, and on the bundled trace it always was; 80–99 % of the checks repeat a
  // refusal (docs/benchmarks.md, "Remembered refusals").
  struct refusals {
    cost_t take = std::numeric_limits<cost_t>::max();   // least cost refused
    std::vector<std::pair<std::uint32_t, cost_t>> swap; // (y, least cost refused for y)
  };
  std::vector<refusals> refused(nodes);
  const auto swap_refused = [&](std::size_t nd, std::uint32_t y) -> cost_t& {
    auto& list = refused[nd].swap;
    for (auto& [item, cost] : list) {
      if (item == y) {
        return cost;
      }
    }
    return list.emplace_back(y, std::numeric_limits<cost_t>::max()).second;
  };
  // Nodes by room (ranks · target − load), most first, then lower node: a total order,
  // sorted once and kept as loads change.
  const auto roomier = [&](std::size_t a, std::size_t b) {
    const int128 ra = capacity[a] - load[a];
    const int128 rb = capacity[b] - load[b];
    return ra != rb ? ra > rb : a < b;
  };
  std::vector<std::size_t> by_room(nodes);
  for (std::size_t nd = 0; nd < nodes; ++nd) {
    by_room[nd] = nd;
  }
  std::sort(by_room.begin(), by_room.end(), roomier);
  // nd's items changed: forget its refusals and move it to its place by room.
  const auto changed = [&](std::size_t nd) {
    refused[nd].take = std::numeric_limits<cost_t>::max();
    refused[nd].swap.clear();
    by_room.erase(std::find(by_room.begin(), by_room.end(), nd));
    by_room.insert(std::lower_bound(by_room.begin(), by_room.end(), nd, roomier), nd);
  };
  const auto take_out = [&](std::size_t nd, std::uint32_t i) {
    auto& h = held[nd];
    h.erase(std::find(h.begin(), h.end(), i));
    load[nd] -= costs[i];
    changed(nd);
  };
  const auto put_in = [&](std::size_t nd, std::uint32_t i) {
    held[nd].push_back(i);
    load[nd] += costs[i];
    changed(nd);
  };

  // 1. Shed: the reverse of the keep order (fewest bytes per unit of cost first, then the
  // smaller cost, then the higher index), zero-cost items never (they relieve nothing).
  const auto cheaper_to_shed = [&](std::uint32_t a, std::uint32_t b) {
    return keep_before(b, a, costs, item_bytes);
  };
  // Largest first, then lower index: the order items wait in (a max-heap on this).
  const auto later = [&](std::uint32_t a, std::uint32_t b) {
    return costs[a] != costs[b] ? costs[a] < costs[b] : a > b;
  };
  std::vector<std::uint32_t> candidates;
  std::vector<std::vector<std::uint32_t>> shed(nodes); // what each node sheds
  cost_t packed_to = 0; // the largest load any node packs to after shedding
  for (std::size_t nd = 0; nd < nodes; ++nd) {
    cost_t got = packed_max(nd, none, none);
    if (got != unpackable) {
      packed_to = std::max(packed_to, got);
      continue;
    }
    candidates.clear();
    for (const std::uint32_t i : held[nd]) {
      if (costs[i] > 0) {
        candidates.push_back(i);
      }
    }
    std::sort(candidates.begin(), candidates.end(), cheaper_to_shed);
    for (const std::uint32_t i : candidates) {
      take_out(nd, i);
      shed[nd].push_back(i);
      // Only once the rest fits the node's capacity can it pack: no partition before.
      if (static_cast<int128>(load[nd]) <= capacity[nd] &&
          (got = packed_max(nd, none, none)) != unpackable) {
        packed_to = std::max(packed_to, got);
        break;
      }
    }
  }

  // 1b. Trade what each node sheds for fewer bytes. Every accepted change lowers the bytes
  // node nd sheds, so the loop ends; the checks are capped per node anyway.
  const auto more_bytes = [&](std::uint32_t a, std::uint32_t b) {
    return item_bytes[a] != item_bytes[b] ? item_bytes[a] > item_bytes[b] : a < b;
  };
  std::vector<std::uint32_t> partners;
  const auto trade_shed = [&](std::size_t nd, std::vector<std::uint32_t>& out) {
    std::size_t checks = 0;
    bool traded = true;
    while (traded && checks < shed_trade_checks) {
      traded = false;
      std::sort(out.begin(), out.end(), more_bytes);
      for (std::size_t k = 0; k < out.size() && !traded && checks < shed_trade_checks; ++k) {
        const std::uint32_t a = out[k];
        ++checks;
        if (packed_max(nd, a, none) <= packed_to) {
          put_in(nd, a);
          out.erase(out.begin() + static_cast<std::ptrdiff_t>(k));
          traded = true;
          break;
        }
        partners.clear();
        for (const std::uint32_t b : held[nd]) {
          if (costs[b] > 0 && item_bytes[b] < item_bytes[a] &&
              static_cast<int128>(load[nd]) + costs[a] - costs[b] <= capacity[nd]) {
            partners.push_back(b);
          }
        }
        std::sort(partners.begin(), partners.end(), [&](std::uint32_t x, std::uint32_t y) {
          return item_bytes[x] != item_bytes[y] ? item_bytes[x] < item_bytes[y] : x < y;
        });
        const std::size_t tries = std::min(partners.size(), shed_trade_partners);
        for (std::size_t t = 0; t < tries && checks < shed_trade_checks; ++t) {
          const std::uint32_t b = partners[t];
          ++checks;
          if (packed_max(nd, a, b) <= packed_to) {
            take_out(nd, b);
            put_in(nd, a);
            out[k] = b;
            traded = true;
            break;
          }
        }
      }
    }
  };
  std::priority_queue<std::uint32_t, std::vector<std::uint32_t>, decltype(later)> waiting(later);
  std::size_t shed_count = 0;
  for (std::size_t nd = 0; nd < nodes; ++nd) {
    if (shed[nd].empty()) {
      continue;
    }
    trade_shed(nd, shed[nd]);
    for (const std::uint32_t i : shed[nd]) {
      waiting.push(i);
      ++shed_count;
    }
  }

  // 2 and 3. Fill, evicting where no node takes an item.
  const std::size_t max_evictions = shed_fill_eviction_factor * shed_count;
  std::size_t evictions = 0;
  std::vector<std::uint32_t> stranded;
  while (!waiting.empty()) {
    const std::uint32_t x = waiting.top();
    waiting.pop();
    const std::size_t home = home_of(x);
    bool placed = false;
    std::size_t tried = 0;
    for (const std::size_t nd : by_room) {
      if (nd == home) {
        continue;
      }
      if (capacity[nd] - load[nd] < costs[x] || tried == shed_fill_tries) {
        break; // the rest have less room still
      }
      ++tried;
      if (costs[x] >= refused[nd].take) {
        continue;
      }
      if (packs(nd, x, none)) {
        put_in(nd, x); // moves nd within by_room: the loop ends here
        placed = true;
        break;
      }
      refused[nd].take = costs[x];
    }
    if (placed) {
      continue;
    }
    // Evict: the candidate adding the fewest bytes across nodes over the roomiest nodes.
    std::size_t best_node = none;
    std::uint32_t best_item = 0;
    bytes_t best_bytes = 0;
    if (evictions < max_evictions) {
      tried = 0;
      for (const std::size_t nd : by_room) {
        if (nd == home) {
          continue;
        }
        if (tried == shed_fill_tries) {
          break;
        }
        ++tried;
        candidates.clear();
        for (const std::uint32_t y : held[nd]) {
          if (costs[y] < costs[x] && capacity[nd] - load[nd] + costs[y] >= costs[x]) {
            candidates.push_back(y);
          }
        }
        const auto adds = [&](std::uint32_t y) { return home_of(y) == nd ? item_bytes[y] : 0; };
        std::sort(candidates.begin(), candidates.end(), [&](std::uint32_t a, std::uint32_t b) {
          return adds(a) != adds(b) ? adds(a) < adds(b) : a < b;
        });
        std::size_t checked = 0;
        for (const std::uint32_t y : candidates) {
          if (checked == shed_fill_evictions || (best_node != none && adds(y) >= best_bytes)) {
            break;
          }
          ++checked;
          cost_t& least = swap_refused(nd, y);
          if (costs[x] >= least) {
            continue;
          }
          if (packs(nd, x, y)) {
            best_node = nd;
            best_item = y;
            best_bytes = adds(y);
            break;
          }
          least = costs[x];
        }
        if (best_node != none && best_bytes == 0) {
          break;
        }
      }
    }
    if (best_node == none) {
      stranded.push_back(x);
      continue;
    }
    ++evictions;
    take_out(best_node, best_item);
    put_in(best_node, x);
    waiting.push(best_item);
  }
  for (const std::uint32_t x : stranded) {
    put_in(home_of(x), x); // its node misses the target: the caller's finish
  }

  // 4. Each node's items into its ranks: lpt+ls bins, mapped to keep bytes on their rank.
  std::vector<rank_t> rank_of(n);
  std::vector<rank_t> home_slot;
  std::vector<bytes_t> counted;
  for (std::size_t nd = 0; nd < nodes; ++nd) {
    const auto ranks = topo.ranks_on(static_cast<rank_t>(nd));
    const auto& h = held[nd];
    if (h.empty()) {
      continue;
    }
    scratch.clear();
    home_slot.assign(h.size(), 0);
    counted.assign(h.size(), 0);
    for (std::size_t x = 0; x < h.size(); ++x) {
      scratch.push_back(costs[h[x]]);
      const auto at = std::find(ranks.begin(), ranks.end(), current_rank[h[x]]);
      if (at != ranks.end()) {
        home_slot[x] = static_cast<rank_t>(at - ranks.begin());
        counted[x] = item_bytes[h[x]];
      }
    }
    const auto bins = static_cast<rank_t>(ranks.size());
    const auto p = partition(scratch, bins, lpt_ls);
    const auto one_node = topology::from_node_of_rank(std::vector<rank_t>(ranks.size(), 0));
    const auto slot =
        rearrange_bins(p.bin_of, home_slot, counted, one_node).rank_of_items(p.bin_of);
    for (std::size_t x = 0; x < h.size(); ++x) {
      rank_of[h[x]] = ranks[static_cast<std::size_t>(slot[x])];
    }
  }
  return rank_of;
}

} // namespace orch::detail
