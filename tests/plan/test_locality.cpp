// SPDX-License-Identifier: Apache-2.0
// Locality: traffic classes, the exact node-wise rearrangement (against brute force and a dense
// Hungarian reference), the inter-node lower bound and locality-aware balancing.
#include "plan_support.hpp"

#include <orch/cost.hpp>
#include <orch/detail/placement/cascade.hpp>
#include <orch/detail/placement/node_first.hpp>
#include <orch/detail/placement/repartition.hpp>
#include <orch/detail/placement/settle.hpp>
#include <orch/detail/placement/shed_fill.hpp>
#include <orch/detail/primitives/checked.hpp>
#include <orch/exchange/plan.hpp>
#include <orch/locality.hpp>
#include <orch/partition/lpt.hpp>
#include <orch/partition/partition.hpp>
#include <orch/quality.hpp>
#include <orch/topology.hpp>

#include <support/generators.hpp>

#include <doctest/doctest.h>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <limits>
#include <numeric>
#include <random>
#include <string>
#include <vector>

using orch::bytes_t;
using orch::cost_t;
using orch::index_t;
using orch::rank_t;

namespace {

struct instance {
  orch::topology topo;
  std::vector<rank_t> bin_of;
  std::vector<rank_t> current;
  std::vector<bytes_t> bytes;
};

instance random_instance(std::uint64_t seed, rank_t max_ranks, std::size_t max_items) {
  std::mt19937_64 rng(seed);
  instance in;
  const auto ranks = static_cast<rank_t>(orch::test::uniform_int(rng, 1, max_ranks));
  const auto size = static_cast<rank_t>(orch::test::uniform_int(rng, 1, std::min(ranks, 4)));
  in.topo = orch::test::make_topology(rng, ranks, size, orch::test::uniform_int(rng, 0, 2) == 0);
  const auto n = static_cast<std::size_t>(
      orch::test::uniform_int(rng, 0, static_cast<std::int64_t>(max_items)));
  // Skewed sources: sometimes everything comes from one or two ranks.
  const auto active = static_cast<rank_t>(orch::test::uniform_int(rng, 1, ranks));
  in.current = orch::test::random_ranks(rng, n, ranks, active);
  in.bin_of = orch::test::random_ranks(rng, n, ranks, ranks);
  in.bytes.resize(n);
  const bytes_t hi = seed % 3 == 0 ? 3 : 1000; // small values force ties
  for (auto& b : in.bytes) {
    b = orch::test::uniform_int(rng, 0, hi);
  }
  return in;
}

struct kept {
  bytes_t node = 0;
  bytes_t rank = 0;
};

kept kept_by(const instance& in, const std::vector<rank_t>& rank_of_bin) {
  kept k;
  for (std::size_t i = 0; i < in.bytes.size(); ++i) {
    const rank_t to = rank_of_bin[static_cast<std::size_t>(in.bin_of[i])];
    if (in.topo.node_of(to) == in.topo.node_of(in.current[i])) {
      k.node += in.bytes[i];
      k.rank += to == in.current[i] ? in.bytes[i] : 0;
    }
  }
  return k;
}

bool is_bijection(const std::vector<rank_t>& rank_of_bin) {
  std::vector<rank_t> sorted = rank_of_bin;
  std::sort(sorted.begin(), sorted.end());
  for (std::size_t i = 0; i < sorted.size(); ++i) {
    if (sorted[i] != static_cast<rank_t>(i)) {
      return false;
    }
  }
  return true;
}

/// Dense O(n^3) Hungarian method (minimum cost, square matrix): an independent reference.
std::int64_t dense_min_cost(const std::vector<std::vector<std::int64_t>>& a) {
  const std::size_t n = a.size();
  constexpr std::int64_t inf = std::numeric_limits<std::int64_t>::max() / 4;
  std::vector<std::int64_t> u(n + 1, 0);
  std::vector<std::int64_t> v(n + 1, 0);
  std::vector<std::size_t> p(n + 1, 0);
  std::vector<std::size_t> way(n + 1, 0);
  for (std::size_t i = 1; i <= n; ++i) {
    p[0] = i;
    std::size_t j0 = 0;
    std::vector<std::int64_t> minv(n + 1, inf);
    std::vector<char> used(n + 1, 0);
    do {
      used[j0] = 1;
      const std::size_t i0 = p[j0];
      std::int64_t delta = inf;
      std::size_t j1 = 0;
      for (std::size_t j = 1; j <= n; ++j) {
        if (used[j] == 0) {
          const std::int64_t cur = a[i0 - 1][j - 1] - u[i0] - v[j];
          if (cur < minv[j]) {
            minv[j] = cur;
            way[j] = j0;
          }
          if (minv[j] < delta) {
            delta = minv[j];
            j1 = j;
          }
        }
      }
      for (std::size_t j = 0; j <= n; ++j) {
        if (used[j] != 0) {
          u[p[j]] += delta;
          v[j] -= delta;
        } else {
          minv[j] -= delta;
        }
      }
      j0 = j1;
    } while (p[j0] != 0);
    do {
      const std::size_t j1 = way[j0];
      p[j0] = p[j1];
      j0 = j1;
    } while (j0 != 0);
  }
  std::int64_t total = 0;
  for (std::size_t j = 1; j <= n; ++j) {
    total += a[p[j] - 1][j - 1];
  }
  return total;
}

/// The inter-node bound computed the plain way: per node over its capacity, all its items of
/// positive cost sorted cheapest bytes per cost first (ties: larger cost, then lower index),
/// taken whole while they fit the excess, the last one fractionally (rounded up).
bytes_t shed_bound_by_sort(const std::vector<cost_t>& costs, const std::vector<rank_t>& current,
                           const std::vector<bytes_t>& bytes, const orch::topology& topo,
                           cost_t target) {
  using wide = orch::detail::int128;
  bytes_t total = 0;
  for (rank_t nd = 0; nd < topo.nodes(); ++nd) {
    std::vector<std::size_t> items;
    wide need = -wide{topo.ranks_per_node(nd)} * target;
    for (std::size_t i = 0; i < costs.size(); ++i) {
      if (topo.node_of(current[i]) == nd) {
        need += costs[i];
        if (costs[i] > 0) {
          items.push_back(i);
        }
      }
    }
    std::sort(items.begin(), items.end(), [&](std::size_t a, std::size_t b) {
      const wide lhs = wide{bytes[a]} * costs[b];
      const wide rhs = wide{bytes[b]} * costs[a];
      if (lhs != rhs) {
        return lhs < rhs;
      }
      return costs[a] != costs[b] ? costs[a] > costs[b] : a < b;
    });
    for (const std::size_t i : items) {
      if (need <= 0) {
        break;
      }
      if (costs[i] <= need) {
        total += bytes[i];
        need -= costs[i];
      } else {
        total += static_cast<bytes_t>((wide{bytes[i]} * need + costs[i] - 1) / costs[i]);
        need = 0;
      }
    }
  }
  return total;
}

} // namespace

TEST_CASE("locality: traffic classes from a plan and from item moves agree") {
  for (std::uint64_t seed = 1; seed <= 40; ++seed) {
    const auto in = random_instance(seed, 16, 60);
    CAPTURE(seed);
    const rank_t k = in.topo.ranks();
    const auto plan = orch::make_plan(orch::layout::from_assignment(in.current, k),
                                      orch::layout::from_assignment(in.bin_of, k), in.bytes);
    const auto a = orch::measure_traffic(plan, in.topo);
    const auto b = orch::measure_traffic(in.current, in.bin_of, in.bytes, in.topo);
    CHECK(a == b);
    CHECK(a.total() == plan.total_bytes());
  }
}

TEST_CASE("locality: rearrange_bins is exact against brute force") {
  int checked = 0;
  for (std::uint64_t seed = 1; seed <= 150; ++seed) {
    const auto in = random_instance(seed, 7, 24);
    CAPTURE(seed);
    const rank_t k = in.topo.ranks();
    const auto r = orch::rearrange_bins(in.bin_of, in.current, in.bytes, in.topo);
    REQUIRE(r.rank_of_bin.size() == static_cast<std::size_t>(k));
    CHECK(is_bijection(r.rank_of_bin));
    const auto ours = kept_by(in, r.rank_of_bin);
    CHECK(ours.node == r.kept_on_node);
    CHECK(ours.rank == r.kept_on_rank);
    CHECK(r.total_bytes == std::accumulate(in.bytes.begin(), in.bytes.end(), bytes_t{0}));
    const auto moved =
        orch::measure_traffic(in.current, r.rank_of_items(in.bin_of), in.bytes, in.topo);
    CHECK(moved == r.moves());

    std::vector<rank_t> perm(static_cast<std::size_t>(k));
    std::iota(perm.begin(), perm.end(), 0);
    bytes_t best_node = -1;
    bytes_t best_rank_same_nodes = -1;
    do {
      const auto x = kept_by(in, perm);
      best_node = std::max(best_node, x.node);
      bool same_nodes = true;
      for (std::size_t b = 0; b < perm.size(); ++b) {
        same_nodes = same_nodes && in.topo.node_of(perm[b]) == in.topo.node_of(r.rank_of_bin[b]);
      }
      if (same_nodes) {
        best_rank_same_nodes = std::max(best_rank_same_nodes, x.rank);
      }
    } while (std::next_permutation(perm.begin(), perm.end()));
    CHECK(ours.node == best_node);
    CHECK(ours.rank == best_rank_same_nodes);
    ++checked;
  }
  CHECK(checked == 150);
}

TEST_CASE("locality: rearrange_bins matches a dense Hungarian reference at medium size") {
  for (std::uint64_t seed = 500; seed < 530; ++seed) {
    std::mt19937_64 rng(seed);
    CAPTURE(seed);
    const rank_t size = static_cast<rank_t>(orch::test::uniform_int(rng, 1, 8));
    const rank_t nodes = static_cast<rank_t>(orch::test::uniform_int(rng, 1, 96 / size));
    const rank_t k = size * nodes;
    instance in;
    in.topo = orch::topology::uniform(k, size);
    const auto n = static_cast<std::size_t>(k) * 6;
    // Half the seeds: every source on few nodes (heavy contention for the same node).
    const rank_t active = seed % 2 == 0 ? k : std::max<rank_t>(1, size);
    in.current = orch::test::random_ranks(rng, n, k, active);
    in.bin_of = orch::test::random_ranks(rng, n, k, k);
    in.bytes.resize(n);
    for (auto& b : in.bytes) {
      b = orch::test::uniform_int(rng, 0, seed % 3 == 0 ? 4 : 100000);
    }
    const auto r = orch::rearrange_bins(in.bin_of, in.current, in.bytes, in.topo);
    CHECK(is_bijection(r.rank_of_bin));
    // Reference: bins × rank slots, cost = −(bytes of the bin on the slot's node).
    std::vector<std::vector<std::int64_t>> cost(
        static_cast<std::size_t>(k), std::vector<std::int64_t>(static_cast<std::size_t>(k), 0));
    for (std::size_t i = 0; i < n; ++i) {
      for (rank_t slot = 0; slot < k; ++slot) {
        if (in.topo.node_of(slot) == in.topo.node_of(in.current[i])) {
          cost[static_cast<std::size_t>(in.bin_of[i])][static_cast<std::size_t>(slot)] -=
              in.bytes[i];
        }
      }
    }
    CHECK(r.kept_on_node == -dense_min_cost(cost));
  }
}

TEST_CASE("locality: the inter-node lower bound holds against brute force") {
  int checked = 0;
  for (std::uint64_t seed = 1; seed <= 120; ++seed) {
    std::mt19937_64 rng(seed);
    CAPTURE(seed);
    const auto k = static_cast<rank_t>(orch::test::uniform_int(rng, 1, 4));
    const auto topo = orch::test::make_topology(
        rng, k, static_cast<rank_t>(orch::test::uniform_int(rng, 1, k)), false);
    const auto n = static_cast<std::size_t>(orch::test::uniform_int(rng, 0, 7));
    std::vector<cost_t> costs(n);
    std::vector<bytes_t> bytes(n);
    for (std::size_t i = 0; i < n; ++i) {
      costs[i] = orch::test::uniform_int(rng, 0, 20);
      bytes[i] = orch::test::uniform_int(rng, 0, 50);
    }
    const auto current = orch::test::random_ranks(rng, n, k, k);
    const cost_t target = orch::lower_bound(costs, k) + orch::test::uniform_int(rng, 0, 6);
    const bytes_t bound = orch::inter_node_lower_bound(costs, current, bytes, topo, target);
    // Every assignment with max load ≤ target crosses nodes with at least `bound` bytes.
    std::vector<rank_t> assign(n, 0);
    bytes_t best = std::numeric_limits<bytes_t>::max();
    for (;;) {
      std::vector<cost_t> load(static_cast<std::size_t>(k), 0);
      bytes_t inter = 0;
      for (std::size_t i = 0; i < n; ++i) {
        load[static_cast<std::size_t>(assign[i])] += costs[i];
        inter += topo.node_of(assign[i]) != topo.node_of(current[i]) ? bytes[i] : 0;
      }
      if (*std::max_element(load.begin(), load.end()) <= target) {
        best = std::min(best, inter);
      }
      std::size_t d = 0;
      while (d < n && ++assign[d] == k) {
        assign[d++] = 0;
      }
      if (d == n) {
        break;
      }
    }
    if (best != std::numeric_limits<bytes_t>::max()) {
      CHECK(bound <= best);
    }
    const auto res = orch::locality_balance(costs, current, bytes, topo);
    CHECK(res.max_load <= res.target);
    CHECK(res.moved.inter_node >= res.inter_node_lower_bound);
    if (best != std::numeric_limits<bytes_t>::max() && res.target == target) {
      CHECK(res.moved.inter_node >= best);
    }
    ++checked;
  }
  CHECK(checked == 120);
}

TEST_CASE("locality: the bound for items following their parent holds against brute force") {
  // Items (an encoder's features) sit where the encoder ran; each must reach the rank of its
  // parent (its example in the LLM phase), placed anywhere with largest load ≤ target.
  int checked = 0;
  int positive = 0;
  int tight = 0;
  for (std::uint64_t seed = 1; seed <= 300; ++seed) {
    std::mt19937_64 rng(seed);
    CAPTURE(seed);
    const auto k = static_cast<rank_t>(orch::test::uniform_int(rng, 1, 4));
    const auto topo = orch::test::make_topology(
        rng, k, static_cast<rank_t>(orch::test::uniform_int(rng, 1, k)), seed % 4 == 0);
    const auto parents = static_cast<std::size_t>(orch::test::uniform_int(rng, 1, 5));
    const auto n = static_cast<std::size_t>(orch::test::uniform_int(rng, 0, 8));
    std::vector<cost_t> parent_costs(parents);
    for (auto& c : parent_costs) {
      c = orch::test::uniform_int(rng, 0, 20);
    }
    std::vector<index_t> parent_of(n);
    std::vector<bytes_t> bytes(n);
    for (std::size_t i = 0; i < n; ++i) {
      parent_of[i] = orch::test::uniform_int(rng, 0, static_cast<std::int64_t>(parents) - 1);
      bytes[i] = orch::test::uniform_int(rng, 0, seed % 3 == 0 ? 3 : 50);
    }
    // Items mostly on a rank of one node (skewed, so nodes overflow), sometimes anywhere.
    const auto active = static_cast<rank_t>(orch::test::uniform_int(rng, 1, k));
    const auto current = orch::test::random_ranks(rng, n, k, active);
    const cost_t target = orch::lower_bound(parent_costs, k) + orch::test::uniform_int(rng, 0, 6);
    const bytes_t bound = orch::follow_parent_inter_node_lower_bound(parent_costs, parent_of,
                                                                     current, bytes, topo, target);
    std::vector<rank_t> assign(parents, 0);
    bytes_t best = std::numeric_limits<bytes_t>::max();
    for (;;) {
      std::vector<cost_t> load(static_cast<std::size_t>(k), 0);
      for (std::size_t x = 0; x < parents; ++x) {
        load[static_cast<std::size_t>(assign[x])] += parent_costs[x];
      }
      if (*std::max_element(load.begin(), load.end()) <= target) {
        bytes_t inter = 0;
        for (std::size_t i = 0; i < n; ++i) {
          const rank_t to = assign[static_cast<std::size_t>(parent_of[i])];
          inter += topo.node_of(to) != topo.node_of(current[i]) ? bytes[i] : 0;
        }
        best = std::min(best, inter);
      }
      std::size_t d = 0;
      while (d < parents && ++assign[d] == k) {
        assign[d++] = 0;
      }
      if (d == parents) {
        break;
      }
    }
    if (best == std::numeric_limits<bytes_t>::max()) {
      continue; // no placement of the parents meets the target: nothing to bound
    }
    CHECK(bound <= best);
    positive += bound > 0 ? 1 : 0;
    tight += bound == best && best > 0 ? 1 : 0;
    ++checked;
  }
  CHECK(checked >= 250);
  // Not a bound that is always 0: it is positive, and exact, on a good share of cases.
  CHECK(positive >= 50);
  CHECK(tight >= 30);
  MESSAGE("positive bounds: ", positive, ", exact and positive: ", tight, " of ", checked);
}

TEST_CASE("locality: the bound for items following their parent, by hand") {
  const auto topo = orch::topology::uniform(4, 2); // nodes {0, 1} and {2, 3}
  // Parents 0..3 cost 10 each; target 10: one parent per rank, two per node. All items sit on
  // node 0, so two parents go to node 1 and the cheapest two parents' bytes cross: 1 + 2.
  const std::vector<cost_t> parent_costs{10, 10, 10, 10};
  const std::vector<index_t> parent_of{0, 1, 2, 3};
  const std::vector<rank_t> current{0, 0, 1, 1};
  const std::vector<bytes_t> bytes{1, 2, 30, 40};
  CHECK(orch::follow_parent_inter_node_lower_bound(parent_costs, parent_of, current, bytes, topo,
                                                   10) == 3);
  // A parent with items on both nodes sends at least its smaller share across.
  CHECK(orch::follow_parent_inter_node_lower_bound(
            std::vector<cost_t>{1}, std::vector<index_t>{0, 0}, std::vector<rank_t>{0, 2},
            std::vector<bytes_t>{5, 7}, topo, 10) == 5);
  CHECK_THROWS_AS(static_cast<void>(orch::follow_parent_inter_node_lower_bound(
                      parent_costs, std::vector<index_t>{0, 1, 2, 4}, current, bytes, topo, 10)),
                  orch::invalid_argument);
  CHECK_THROWS_AS(static_cast<void>(orch::follow_parent_inter_node_lower_bound(
                      parent_costs, parent_of, current, bytes, topo, -1)),
                  orch::invalid_argument);
}

TEST_CASE("locality: the inter-node lower bound equals the knapsack over fully sorted items") {
  // The bound selects only the cheapest items of each node (a histogram of bytes per cost,
  // then a heap); this checks it against a full sort on ties, wide ratio ranges and values
  // beyond 2^53, where doubles no longer order ratios exactly.
  for (std::uint64_t seed = 1; seed <= 300; ++seed) {
    std::mt19937_64 rng(seed);
    CAPTURE(seed);
    const auto size = static_cast<rank_t>(orch::test::uniform_int(rng, 1, 12));
    const auto nodes = static_cast<rank_t>(orch::test::uniform_int(rng, 1, 10));
    const auto topo = orch::test::make_topology(rng, size * nodes, size, seed % 4 == 0);
    const rank_t k = topo.ranks();
    const auto n = static_cast<std::size_t>(orch::test::uniform_int(rng, 0, 30 * k));
    const int kind = static_cast<int>(seed % 5);
    // Large values keep Σ below 2^62 so that every sum fits.
    const std::int64_t big = (std::int64_t{1} << 62) / static_cast<std::int64_t>(n + 1);
    std::vector<cost_t> costs(n);
    std::vector<bytes_t> bytes(n);
    for (std::size_t i = 0; i < n; ++i) {
      switch (kind) {
      case 0: // many ties, zero costs and bytes
        costs[i] = orch::test::uniform_int(rng, 0, 4);
        bytes[i] = orch::test::uniform_int(rng, 0, 4);
        break;
      case 1: // ratios over many octaves
        costs[i] = orch::test::uniform_int(rng, 1, 1'000'000);
        bytes[i] = orch::test::uniform_int(rng, 0, 1) == 0
                       ? orch::test::uniform_int(rng, 0, 3)
                       : orch::test::uniform_int(rng, 1, 1 << 30);
        break;
      case 2: // values beyond 2^53
        costs[i] = orch::test::uniform_int(rng, big / 2, big);
        bytes[i] = orch::test::uniform_int(rng, big / 2, big);
        break;
      case 3: // equal ratios with different costs
        costs[i] = orch::test::uniform_int(rng, 1, 50);
        bytes[i] = 3 * costs[i];
        break;
      default:
        costs[i] = orch::test::uniform_int(rng, 1, 5000);
        bytes[i] = orch::test::uniform_int(rng, 0, 100'000);
        break;
      }
    }
    const auto current = orch::test::random_ranks(
        rng, n, k, static_cast<rank_t>(orch::test::uniform_int(rng, 1, k)));
    const cost_t lb = orch::lower_bound(costs, k);
    for (const cost_t target : {lb, lb + lb / 100, lb / 2, cost_t{0}}) {
      CAPTURE(target);
      CHECK(orch::inter_node_lower_bound(costs, current, bytes, topo, target) ==
            shed_bound_by_sort(costs, current, bytes, topo, target));
    }
  }
}

TEST_CASE("locality: wide nodes (best fit over many ranks) keep balance and items") {
  // Nodes of more than 32 ranks place their leftovers through the ordered best-fit set
  // instead of a scan; the guarantees are the same.
  for (std::uint64_t seed = 1; seed <= 8; ++seed) {
    std::mt19937_64 rng(seed);
    CAPTURE(seed);
    const auto size = static_cast<rank_t>(orch::test::uniform_int(rng, 33, 48));
    const auto nodes = static_cast<rank_t>(orch::test::uniform_int(rng, 1, 3));
    const auto topo = orch::test::make_topology(rng, size * nodes, size, seed % 2 == 0);
    const rank_t k = topo.ranks();
    const std::size_t per = 8;
    const auto n = per * static_cast<std::size_t>(k);
    const auto lengths = orch::test::lognormal_lengths(seed, n, 6.0, 1.0, 20000);
    std::vector<cost_t> costs(lengths.begin(), lengths.end());
    std::vector<bytes_t> bytes(n);
    std::vector<rank_t> current(n);
    for (std::size_t i = 0; i < n; ++i) {
      bytes[i] = 1 + lengths[i] % 89;
      current[i] = static_cast<rank_t>(i / per);
    }
    const auto ref = orch::lpt(costs, k);
    const auto res = orch::locality_balance(costs, current, bytes, topo, ref.bin_of);
    orch::test::check_placement_against_reference(res, costs, current, bytes, topo, ref.bin_of);
    if (res.method == orch::placement_method::keep_local ||
        res.method == orch::placement_method::node_first) {
      const auto before = orch::bin_loads(costs, current, k);
      for (std::size_t i = 0; i < n; ++i) {
        bool over = false;
        for (const rank_t r : topo.ranks_on(topo.node_of(current[i]))) {
          over = over || before[static_cast<std::size_t>(r)] > res.target;
        }
        if (!over) {
          CHECK(topo.node_of(res.rank_of[i]) == topo.node_of(current[i]));
        }
      }
    }
  }
}

TEST_CASE("locality: locality_balance keeps balance, keeps items, beats rearrangement") {
  int keep_local_wins = 0;
  for (std::uint64_t seed = 1; seed <= 40; ++seed) {
    std::mt19937_64 rng(seed);
    CAPTURE(seed);
    const rank_t size = static_cast<rank_t>(1) << orch::test::uniform_int(rng, 0, 3);
    const rank_t k = size * static_cast<rank_t>(orch::test::uniform_int(rng, 1, 8));
    const auto topo = orch::topology::uniform(k, size);
    const auto per_rank = static_cast<std::size_t>(orch::test::uniform_int(rng, 1, 16));
    const auto n = per_rank * static_cast<std::size_t>(k);
    const auto lengths = orch::test::lognormal_lengths(seed, n, 6.0, 1.0, 20000);
    std::vector<cost_t> costs(lengths.begin(), lengths.end());
    std::vector<bytes_t> bytes(n);
    for (std::size_t i = 0; i < n; ++i) {
      bytes[i] = seed % 2 == 0 ? 2 * lengths[i] : 1 + lengths[i] % 97; // ∝ length, or not
    }
    std::vector<rank_t> current(n);
    for (std::size_t i = 0; i < n; ++i) {
      current[i] = static_cast<rank_t>(i / per_rank);
    }
    const auto ref = orch::lpt(costs, k);
    const auto res = orch::locality_balance(costs, current, bytes, topo, ref.bin_of);
    CHECK(res.reference_max_load == ref.max_load);
    CHECK(res.target == ref.max_load + res.lower_bound / 1000);
    CHECK(res.max_load <= res.target);
    CHECK(res.loads == orch::bin_loads(costs, res.rank_of, k));
    CHECK(res.moved == orch::measure_traffic(current, res.rank_of, bytes, topo));
    CHECK(res.moved.inter_node >= res.inter_node_lower_bound);
    const auto mapped = orch::rearrange_bins(ref.bin_of, current, bytes, topo);
    CHECK(res.moved.inter_node <= mapped.moves().inter_node);
    if (res.method != orch::placement_method::rearranged_reference) {
      ++keep_local_wins;
    }
    if (res.method == orch::placement_method::keep_local ||
        res.method == orch::placement_method::node_first) {
      // A node whose ranks are all at or under the target keeps all its items on the node.
      const auto before = orch::bin_loads(costs, current, k);
      std::vector<char> node_over(static_cast<std::size_t>(topo.nodes()), 0);
      for (rank_t r = 0; r < k; ++r) {
        if (before[static_cast<std::size_t>(r)] > res.target) {
          node_over[static_cast<std::size_t>(topo.node_of(r))] = 1;
        }
      }
      for (std::size_t i = 0; i < n; ++i) {
        if (node_over[static_cast<std::size_t>(topo.node_of(current[i]))] == 0) {
          CHECK(topo.node_of(res.rank_of[i]) == topo.node_of(current[i]));
        }
      }
    } else {
      CHECK((res.method == orch::placement_method::rearranged_reference ||
             res.method == orch::placement_method::keep_local_settle ||
             res.method == orch::placement_method::node_first_settle ||
             res.method == orch::placement_method::node_first_repartition ||
             res.method == orch::placement_method::shed_fill));
    }
    // Same input, same answer.
    const auto again = orch::locality_balance(costs, current, bytes, topo, ref.bin_of);
    CHECK(again.rank_of == res.rank_of);
    // Zero slack: never above the reference.
    const auto tight = orch::locality_balance(costs, current, bytes, topo, ref.bin_of, {0});
    CHECK(tight.max_load <= ref.max_load);
  }
  // A heuristic wins on most instances (39 of 40 when written: 23 keep_local, 9 node_first, 7
  // with settle); the fallback covers the rest.
  CHECK(keep_local_wins >= 24);
}

TEST_CASE("locality: tight targets from orch::partition (node_first, settle)") {
  // Attention costs of narrow lognormal lengths: orch::partition reaches the lower bound, so
  // the target leaves 0.1 % of room and keep_local alone cannot meet it.
  std::vector<orch::placement_method> methods;
  std::vector<orch::placement_method> heuristic_methods;
  for (std::uint64_t seed = 1; seed <= 6; ++seed) {
    CAPTURE(seed);
    const rank_t k = 64;
    const std::size_t per = 16;
    const std::size_t n = per * static_cast<std::size_t>(k);
    const auto topo = orch::topology::uniform(k, 8);
    const auto len = orch::test::lognormal_lengths(seed, n, 7.0, seed % 2 == 1 ? 0.3 : 0.5, 32768);
    const auto costs = orch::compute_costs(orch::attention_cost{4096, 1, 0}, len);
    std::vector<bytes_t> bytes(n);
    std::vector<rank_t> current(n);
    for (std::size_t i = 0; i < n; ++i) {
      bytes[i] = 2 * len[i];
      current[i] = static_cast<rank_t>(i / per);
    }
    const auto ref = orch::partition(costs, k);
    const auto res = orch::locality_balance(costs, current, bytes, topo, ref.bin_of);
    CHECK(res.max_load <= res.target);
    CHECK(res.target <= ref.max_load + res.lower_bound / 1000);
    CHECK(res.loads == orch::bin_loads(costs, res.rank_of, k));
    CHECK(res.moved.inter_node >= res.inter_node_lower_bound);
    const auto mapped = orch::rearrange_bins(ref.bin_of, current, bytes, topo);
    CHECK(res.moved.inter_node <= mapped.moves().inter_node);
    methods.push_back(res.method);
    // The heuristics alone at the same target: the engine never sends more across nodes.
    const auto heuristics =
        orch::detail::run_heuristics(costs, current, bytes, topo, res.target, 1);
    REQUIRE(heuristics.found);
    CHECK(res.moved.inter_node <= heuristics.moved.inter_node);
    heuristic_methods.push_back(heuristics.method);
  }
  // Both node_first outcomes occur on these seeds among the heuristics (when written: 1
  // without, 5 with settle); against the reference, shed+fill then sends fewer bytes across
  // nodes on all six (when written), and the rearranged reference never wins.
  CHECK(std::count(heuristic_methods.begin(), heuristic_methods.end(),
                   orch::placement_method::node_first_settle) >= 1);
  MESSAGE("shed+fill wins on ",
          std::count(methods.begin(), methods.end(), orch::placement_method::shed_fill),
          " of 6 seeds");
  CHECK(std::count(methods.begin(), methods.end(), orch::placement_method::rearranged_reference) ==
        0);
}

TEST_CASE("locality: coarse items at a tight target: every finish keeps the guarantees") {
  // About 5 items per rank, most of them one of two sizes (like images at two resolutions),
  // the largest about 0.4 of the mean load, sampled on ranks with very unequal rates (some
  // ranks draw image-heavy examples): orch::partition packs them to within about 3 % of the
  // mean, and whole nodes cannot be packed from their own content at that target.
  std::vector<orch::placement_method> methods;
  for (std::uint64_t seed = 1; seed <= 12; ++seed) {
    CAPTURE(seed);
    const rank_t k = 128;
    const auto topo = orch::topology::uniform(k, 8);
    std::mt19937_64 rng(seed);
    std::vector<double> rate(static_cast<std::size_t>(k));
    double total_rate = 0;
    for (auto& x : rate) {
      x = std::exp(1.5 * orch::test::normal(rng));
      total_rate += x;
    }
    const std::size_t n = 5 * static_cast<std::size_t>(k);
    std::vector<cost_t> costs(n);
    std::vector<bytes_t> bytes(n);
    std::vector<rank_t> current(n);
    for (std::size_t i = 0; i < n; ++i) {
      const auto u = orch::test::uniform_int(rng, 0, 99);
      costs[i] = u < 35 ? 1'000 : u < 70 ? 2'300 : orch::test::uniform_int(rng, 200, 3'500);
      bytes[i] = 3 * costs[i] + orch::test::uniform_int(rng, 0, 500);
      double x = orch::test::uniform01(rng) * total_rate; // a rank by its rate
      rank_t r = 0;
      while (r + 1 < k && x >= rate[static_cast<std::size_t>(r)]) {
        x -= rate[static_cast<std::size_t>(r)];
        ++r;
      }
      current[i] = r;
    }
    const auto ref = orch::partition(costs, k);
    const auto res = orch::locality_balance(costs, current, bytes, topo, ref.bin_of);
    orch::test::check_placement_against_reference(res, costs, current, bytes, topo, ref.bin_of);
    // Deterministic, for any thread count.
    orch::place_options two;
    two.threads = 2;
    two.reference_bin_of = ref.bin_of;
    CHECK(orch::place(costs, current, bytes, topo, two).rank_of == res.rank_of);
    if (res.method == orch::placement_method::node_first_repartition) {
      // Never more bytes across nodes than node_first finished by settle, when that works.
      const auto unbalanced = orch::detail::node_first(costs, current, bytes, topo, res.target);
      REQUIRE(unbalanced.short_of_target);
      const auto settled = orch::detail::settle(costs, k, unbalanced.rank_of, res.target);
      if (!settled.empty()) {
        CHECK(res.moved.inter_node <=
              orch::measure_traffic(current, settled, bytes, topo).inter_node);
      }
    }
    methods.push_back(res.method);
  }
  const auto count = [&](orch::placement_method m) {
    return std::count(methods.begin(), methods.end(), m);
  };
  MESSAGE("shed+fill ", count(orch::placement_method::shed_fill), ", node_first+repartition ",
          count(orch::placement_method::node_first_repartition), ", rearranged_reference ",
          count(orch::placement_method::rearranged_reference), ", node_first+settle ",
          count(orch::placement_method::node_first_settle), ", keep_local+settle ",
          count(orch::placement_method::keep_local_settle));
  // These synthetic instances rarely need it (the heuristics are close enough to the bound
  // here); the bundled trace's vision phase does: tests/bench_tool/test_placement_trace.cpp.
}

TEST_CASE("locality: repartition_nodes meets the target and moves only what it must") {
  // Three nodes of two ranks. Node 0 holds three items of 3 and cannot bring both its ranks
  // to 5 (6 + 3); node 1 has the most room, node 2 less. Nodes 0 and 1 are repartitioned
  // together, node 2 is left as it is.
  const auto topo = orch::topology::uniform(6, 2);
  const std::vector<cost_t> costs{3, 3, 3, 1, 4};
  const std::vector<bytes_t> bytes{30, 20, 10, 5, 7};
  const std::vector<rank_t> current{0, 0, 0, 2, 4};
  const std::vector<rank_t> start{0, 0, 1, 2, 4}; // rank 0 at 6 > 5
  const auto r =
      orch::detail::repartition_nodes(costs, current, bytes, topo, 5, std::vector<rank_t>(start));
  REQUIRE(r.size() == costs.size());
  const auto loads = orch::bin_loads(costs, r, 6);
  CHECK(*std::max_element(loads.begin(), loads.end()) <= 5);
  // Node 0's two ranks hold two items of 3 at most: one leaves, the one with fewest bytes.
  CHECK(orch::measure_traffic(current, r, bytes, topo).inter_node == 10);
  CHECK(topo.node_of(r[2]) == 1);
  CHECK(r[4] == 4); // node 2 is not in the set
  // Already balanced: returned as it is.
  const std::vector<rank_t> fine{0, 1, 2, 2, 4};
  CHECK(orch::detail::repartition_nodes(costs, current, bytes, topo, 5,
                                        std::vector<rank_t>(fine)) == fine);
  // A target no subset leaving a node out can meet: nothing is returned.
  CHECK(orch::detail::repartition_nodes(costs, current, bytes, topo, 2, std::vector<rank_t>(start))
            .empty());
}

TEST_CASE("locality: shed_and_fill sheds the fewest bytes per cost and packs them elsewhere") {
  // Three nodes of two ranks, target 5. Node 0's items of 3, 3, 3 fit its capacity (10) but
  // not its two ranks: it sheds the one with the fewest bytes per unit of cost (item 2), which
  // goes to the roomiest other node (node 1, empty). Node 2 keeps its item on its rank.
  const auto topo = orch::topology::uniform(6, 2);
  const std::vector<cost_t> costs{3, 3, 3, 4};
  const std::vector<bytes_t> bytes{30, 20, 10, 7};
  const std::vector<rank_t> current{0, 0, 0, 5};
  const auto r = orch::detail::shed_and_fill(costs, current, bytes, topo, 5);
  REQUIRE(r.size() == costs.size());
  CHECK(topo.node_of(r[0]) == 0);
  CHECK(topo.node_of(r[1]) == 0);
  CHECK(r[0] != r[1]);
  CHECK(topo.node_of(r[2]) == 1);
  CHECK(r[3] == 5); // kept on its rank
  CHECK(orch::measure_traffic(current, r, bytes, topo).inter_node == 10);
}

TEST_CASE("locality: shed_and_fill trades a shed item for a kept one with fewer bytes") {
  // One rank per node, target 10. Node 0 holds A (cost 6, 6 bytes), B (3, 9) and C (4, 5):
  // 13, so it must shed at least 3. Fewest bytes per cost first sheds A (6 bytes) and keeps
  // 7. Node 1's item packs to `other`, the largest load after shedding: when that is 9, A
  // comes back in place of C (load 9, 5 bytes shed instead of 6), and C goes to the empty
  // node 2. When it is 8, the trade would raise the largest load: A leaves.
  const auto topo = orch::topology::uniform(3, 1);
  const std::vector<bytes_t> bytes{6, 9, 5, 1};
  const std::vector<rank_t> current{0, 0, 0, 1};
  for (const cost_t other : {cost_t{9}, cost_t{8}}) {
    CAPTURE(other);
    const std::vector<cost_t> costs{6, 3, 4, other};
    const auto r = orch::detail::shed_and_fill(costs, current, bytes, topo, 10);
    const auto loads = orch::bin_loads(costs, r, 3);
    CHECK(*std::max_element(loads.begin(), loads.end()) == other); // no higher than without trades
    if (other == 9) {
      CHECK(r == std::vector<rank_t>{0, 0, 2, 1});
      CHECK(orch::measure_traffic(current, r, bytes, topo).inter_node == 5);
    } else {
      CHECK(r == std::vector<rank_t>{2, 0, 0, 1});
      CHECK(orch::measure_traffic(current, r, bytes, topo).inter_node == 6);
    }
  }
}

TEST_CASE("locality: shed_and_fill evicts the item whose leaving adds the fewest bytes") {
  // One rank per node, target 10. Node 0 holds 6 + 6 and sheds item 0 (1 byte for 6 of cost).
  // No node has room for 6: node 2 (room 5) could take it by evicting its own item 5 (3 bytes
  // across nodes), node 1 (room 2) by evicting its own item 2 (2 bytes): node 1's wins, and
  // item 2 then fits node 2. Across nodes: items 0 and 2, 3 bytes.
  const auto topo = orch::topology::uniform(3, 1);
  const std::vector<cost_t> costs{6, 6, 5, 3, 4, 1};
  const std::vector<bytes_t> bytes{1, 100, 2, 50, 50, 3};
  const std::vector<rank_t> current{0, 0, 1, 1, 2, 2};
  const auto r = orch::detail::shed_and_fill(costs, current, bytes, topo, 10);
  CHECK(r == std::vector<rank_t>{1, 0, 2, 1, 2, 2});
  const auto loads = orch::bin_loads(costs, r, 3);
  CHECK(*std::max_element(loads.begin(), loads.end()) <= 10);
  CHECK(orch::measure_traffic(current, r, bytes, topo).inter_node == 3);
}

TEST_CASE("locality: shed_and_fill leaves an item no node can take at home") {
  // Target 5 on two one-rank nodes: node 0 (3 + 3) sheds one, node 1 (3) has room 2 and
  // nothing smaller to evict, so the item stays home and node 0 stays above the target (the
  // engine finishes such nodes with repartition_nodes).
  const auto topo = orch::topology::uniform(2, 1);
  const std::vector<cost_t> costs{3, 3, 3};
  const std::vector<bytes_t> bytes{1, 2, 3};
  const std::vector<rank_t> current{0, 0, 1};
  CHECK(orch::detail::shed_and_fill(costs, current, bytes, topo, 5) ==
        std::vector<rank_t>{0, 0, 1});
  // Nothing at all: nothing to place.
  CHECK(orch::detail::shed_and_fill({}, {}, {}, topo, 5).empty());
}

TEST_CASE("locality: placement methods print the names the tools report") {
  using orch::placement_method;
  CHECK(orch::to_string(placement_method::keep_local) == "keep_local");
  CHECK(orch::to_string(placement_method::keep_local_settle) == "keep_local+settle");
  CHECK(orch::to_string(placement_method::node_first) == "node_first");
  CHECK(orch::to_string(placement_method::node_first_settle) == "node_first+settle");
  CHECK(orch::to_string(placement_method::rearranged_reference) == "rearranged_reference");
  CHECK(orch::to_string(placement_method::node_first_repartition) == "node_first+repartition");
  CHECK(orch::to_string(placement_method::shed_fill) == "shed+fill");
}

TEST_CASE("locality: bad input names the item or rank") {
  const auto topo = orch::topology::uniform(4, 2);
  const std::vector<rank_t> bins{0, 1, 4};
  const std::vector<rank_t> cur{0, 1, 2};
  const std::vector<bytes_t> bytes{1, 2, 3};
  CHECK_THROWS_WITH_AS(static_cast<void>(orch::rearrange_bins(bins, cur, bytes, topo)),
                       doctest::Contains("item 2 is in bin 4"), orch::invalid_argument);
  CHECK_THROWS_WITH_AS(
      static_cast<void>(orch::rearrange_bins(cur, std::vector<rank_t>{0, 9, 1}, bytes, topo)),
      doctest::Contains("item 1 is on rank 9"), orch::invalid_argument);
  CHECK_THROWS_WITH_AS(
      static_cast<void>(orch::rearrange_bins(cur, cur, std::vector<bytes_t>{1, -2, 3}, topo)),
      doctest::Contains("item 1 has negative size"), orch::invalid_argument);
  CHECK_THROWS_AS(static_cast<void>(orch::rearrange_bins(cur, cur, std::vector<bytes_t>{1}, topo)),
                  orch::invalid_argument);
  const bytes_t big = std::numeric_limits<bytes_t>::max() / 2 + 1;
  CHECK_THROWS_AS(
      static_cast<void>(orch::rearrange_bins(cur, cur, std::vector<bytes_t>{big, big, 0}, topo)),
      orch::overflow);
  const std::vector<cost_t> costs{1, 2, 3};
  CHECK_THROWS_WITH_AS(
      static_cast<void>(orch::locality_balance(std::vector<cost_t>{1, -2, 3}, cur, bytes, topo)),
      doctest::Contains("item 1 has negative cost"), orch::invalid_argument);
  CHECK_THROWS_AS(
      static_cast<void>(orch::locality_balance(costs, cur, bytes, topo, std::vector<rank_t>{0, 1})),
      orch::invalid_argument);
  CHECK_THROWS_AS(static_cast<void>(orch::locality_balance(costs, cur, bytes, topo,
                                                           std::vector<rank_t>{0, 1, 7})),
                  orch::invalid_argument);
  CHECK_THROWS_AS(static_cast<void>(orch::locality_balance(costs, cur, bytes, topo, {-1})),
                  orch::invalid_argument);
  CHECK_THROWS_AS(static_cast<void>(orch::inter_node_lower_bound(costs, cur, bytes, topo, -1)),
                  orch::invalid_argument);
  // Item arrays are checked before costs: item 2's size is named, not item 0's cost.
  CHECK_THROWS_WITH_AS(
      static_cast<void>(orch::inter_node_lower_bound(std::vector<cost_t>{-1, 2, 3}, cur,
                                                     std::vector<bytes_t>{1, 2, -3}, topo, 5)),
      doctest::Contains("item 2 has negative size"), orch::invalid_argument);
  CHECK_THROWS_WITH_AS(
      static_cast<void>(orch::inter_node_lower_bound(std::vector<cost_t>{1, 2, 3},
                                                     std::vector<rank_t>{0, 4, 1}, bytes, topo, 5)),
      doctest::Contains("item 1 is on rank 4"), orch::invalid_argument);
  const cost_t huge = std::numeric_limits<cost_t>::max() / 2 + 1;
  CHECK_THROWS_AS(static_cast<void>(orch::inter_node_lower_bound(std::vector<cost_t>{huge, huge, 0},
                                                                 cur, bytes, topo, 5)),
                  orch::overflow);
  CHECK_THROWS_AS(
      static_cast<void>(orch::locality_balance(costs, cur, std::vector<bytes_t>{huge, huge, 0},
                                               topo, std::vector<rank_t>{0, 1, 2})),
      orch::overflow);
  CHECK_THROWS_AS(
      static_cast<void>(orch::measure_traffic(cur, std::vector<rank_t>{0, 1, 5}, bytes, topo)),
      orch::invalid_argument);
}

TEST_CASE("locality: worked example of docs/plans.md") {
  // 4 ranks on 2 nodes; 8 items, 2 per rank; bins from some balancer.
  const auto topo = orch::topology::uniform(4, 2);
  const std::vector<rank_t> current{0, 0, 1, 1, 2, 2, 3, 3};
  const std::vector<rank_t> bin_of{0, 1, 2, 3, 0, 1, 2, 3};
  const std::vector<bytes_t> bytes{10, 40, 30, 5, 50, 20, 25, 35};
  const auto r = orch::rearrange_bins(bin_of, current, bytes, topo);
  // Bin 0 = {10 on node 0, 50 on node 1}, bin 1 = {40 n0, 20 n1}, bin 2 = {30 n0, 25 n1},
  // bin 3 = {5 n0, 35 n1}: node 0 takes bins 1 and 2 (70 kept), node 1 bins 0 and 3 (85).
  CHECK(r.kept_on_node == 155);
  CHECK(r.rank_of_bin == std::vector<rank_t>{2, 0, 1, 3});
  CHECK(r.kept_on_rank == 40 + 30 + 50 + 35);
  CHECK(r.moves() == orch::traffic{155, 0, 60});
  // Bin k on rank k instead keeps 45 bytes on their rank and sends 105 across nodes.
  const auto identity = orch::measure_traffic(current, bin_of, bytes, topo);
  CHECK(identity == orch::traffic{45, 65, 105});
}
