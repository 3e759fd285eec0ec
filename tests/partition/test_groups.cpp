// SPDX-License-Identifier: Apache-2.0
#include <orch/partition/groups.hpp>
#include <orch/partition/partition.hpp>

#include <support/brute_force.hpp>
#include <support/generators.hpp>
#include <support/partition_checks.hpp>

#include <doctest/doctest.h>

#include <algorithm>
#include <cstdint>
#include <string>
#include <vector>

using orch::cost_t;
using orch::index_t;
using orch::rank_t;

namespace {

/// Random group ids for n items: groups of 1..max_size items, ids shuffled over the items, a
/// share of lone items (-1) when `lone`.
std::vector<index_t> random_groups(std::mt19937_64& rng, std::size_t n, index_t max_size,
                                   bool lone) {
  std::vector<index_t> ids;
  index_t next = 0;
  while (ids.size() < n) {
    const auto size = orch::test::uniform_int(rng, 1, max_size);
    const bool alone = lone && orch::test::uniform_int(rng, 0, 3) == 0;
    for (index_t t = 0; t < size && ids.size() < n; ++t) {
      ids.push_back(alone ? orch::no_group : next);
    }
    ++next;
  }
  std::shuffle(ids.begin(), ids.end(), rng);
  return ids;
}

/// Items sharing an id ≥ 0 share a bin.
void check_groups_kept(std::span<const index_t> groups, const orch::partition_result& r) {
  REQUIRE(r.bin_of.size() == groups.size());
  for (std::size_t i = 0; i < groups.size(); ++i) {
    for (std::size_t j = i + 1; j < groups.size(); ++j) {
      if (groups[i] != orch::no_group && groups[i] == groups[j]) {
        REQUIRE(r.bin_of[i] == r.bin_of[j]);
      }
    }
  }
}

std::vector<index_t> item_counts(const std::vector<rank_t>& bin_of, rank_t bins) {
  std::vector<index_t> n(static_cast<std::size_t>(bins), 0);
  for (const auto b : bin_of) {
    ++n[static_cast<std::size_t>(b)];
  }
  return n;
}

/// Smallest max load over all assignments of the super-items whose bins hold at most
/// `max_items` items (0: any) and `cap` of the resource (0: any); -1 when none exists.
cost_t brute_force_grouped(const orch::item_groups& g, rank_t bins, index_t max_items, cost_t cap) {
  const std::size_t m = g.count();
  const auto k = static_cast<std::size_t>(bins);
  std::vector<cost_t> load(k, 0);
  std::vector<cost_t> res(k, 0);
  std::vector<index_t> cnt(k, 0);
  cost_t best = -1;
  auto rec = [&](auto&& self, std::size_t j) -> void {
    const cost_t now = *std::max_element(load.begin(), load.end());
    if (best >= 0 && now >= best) {
      return;
    }
    if (j == m) {
      best = now;
      return;
    }
    for (std::size_t b = 0; b < k; ++b) {
      if ((max_items > 0 && cnt[b] + g.size[j] > max_items) ||
          (cap > 0 && res[b] + g.resource[j] > cap)) {
        continue;
      }
      load[b] += g.cost[j];
      res[b] += g.resource.empty() ? 0 : g.resource[j];
      cnt[b] += g.size[j];
      self(self, j + 1);
      load[b] -= g.cost[j];
      res[b] -= g.resource.empty() ? 0 : g.resource[j];
      cnt[b] -= g.size[j];
    }
  };
  rec(rec, 0);
  return best;
}

void check_same(const orch::partition_result& a, const orch::partition_result& b) {
  CHECK(a.bin_of == b.bin_of);
  CHECK(a.loads == b.loads);
  CHECK(a.max_load == b.max_load);
  CHECK(a.lower_bound == b.lower_bound);
  CHECK(a.proven_optimal == b.proven_optimal);
  CHECK(a.algorithm == b.algorithm);
  CHECK(a.work == b.work);
  CHECK(a.max_time == b.max_time);
  CHECK(a.time_lower_bound == b.time_lower_bound);
}

} // namespace

TEST_CASE("groups: contraction by first appearance, sums, sizes, lone items") {
  const std::vector<cost_t> c{5, 1, 7, 2, 9, 4};
  const std::vector<index_t> ids{42, 3, 42, orch::no_group, 3, 8};
  const std::vector<cost_t> mem{1, 2, 3, 4, 5, 6};
  const auto g = orch::contract_groups(c, ids, mem);
  REQUIRE(g.count() == 4);
  CHECK(g.super_of == std::vector<std::uint32_t>{0, 1, 0, 2, 1, 3});
  CHECK(g.cost == std::vector<cost_t>{12, 10, 2, 4});
  CHECK(g.size == std::vector<index_t>{2, 2, 1, 1});
  CHECK(g.id == std::vector<index_t>{42, 3, orch::no_group, 8});
  CHECK(g.first_item == std::vector<std::uint32_t>{0, 1, 3, 5});
  CHECK(g.resource == std::vector<cost_t>{4, 7, 4, 6});
  CHECK(g.name(0) == "group 42");
  CHECK(g.name(2) == "item 3");
  CHECK_FALSE(g.equal_sizes());
  CHECK(g.expand(std::vector<rank_t>{1, 0, 2, 1}) == std::vector<rank_t>{1, 0, 1, 2, 0, 1});
  CHECK_THROWS_AS((void)g.expand(std::vector<rank_t>{0, 1}), orch::invalid_argument);
  // Sparse ids (sorted path) contract exactly like dense ones (table path).
  for (std::uint64_t seed = 1; seed <= 20; ++seed) {
    CAPTURE(seed);
    std::mt19937_64 rng(seed);
    const auto n = static_cast<std::size_t>(orch::test::uniform_int(rng, 1, 300));
    const auto dense = random_groups(rng, n, 6, true);
    std::vector<index_t> sparse(dense);
    for (auto& id : sparse) {
      id = id == orch::no_group ? id : id * 1'000'003 + 1'000'000'000'000;
    }
    const auto costs = orch::test::uniform_costs(seed, n, 0, 1000);
    const auto a = orch::contract_groups(costs, dense);
    const auto b = orch::contract_groups(costs, sparse);
    CHECK(a.super_of == b.super_of);
    CHECK(a.cost == b.cost);
    CHECK(a.size == b.size);
    CHECK(a.first_item == b.first_item);
    // First appearance: super-items are numbered in the order of their first items.
    CHECK(std::is_sorted(a.first_item.begin(), a.first_item.end()));
    for (std::size_t j = 0; j < a.count(); ++j) {
      CHECK(a.super_of[a.first_item[j]] == j);
    }
  }
}

TEST_CASE("groups: every algorithm keeps groups together, places every item once") {
  for (std::uint64_t seed = 1; seed <= 30; ++seed) {
    std::mt19937_64 rng(seed);
    const auto n = static_cast<std::size_t>(orch::test::uniform_int(rng, 1, 80));
    const auto k = static_cast<rank_t>(orch::test::uniform_int(rng, 1, 12));
    const auto c = orch::test::uniform_costs(seed * 3, n, 0, 10000);
    const auto ids = random_groups(rng, n, 8, seed % 3 == 0);
    const auto g = orch::contract_groups(c, ids);
    for (const auto a : orch::all_partition_algorithms) {
      const std::string name(orch::to_string(a));
      CAPTURE(seed);
      CAPTURE(name);
      orch::partition_options o;
      o.algorithm = a;
      o.groups = ids;
      o.work_budget = 30000;
      const auto r = orch::partition(c, k, o);
      orch::test::check_partition_invariants(c, k, r); // loads sum to the total, max ≥ bound
      check_groups_kept(ids, r);
      // The bound is the grouped instance's: max(⌈Σ/k⌉, largest group) or stronger.
      CHECK(r.lower_bound >= orch::lower_bound(g.cost, k));
      CHECK(r.max_load >= orch::pcmax_lower_bound(g.cost, k));
    }
  }
}

TEST_CASE("groups: auto reaches the grouped optimum on small instances (brute force)") {
  int above_ungrouped = 0; // instances where keeping groups together costs balance
  for (std::uint64_t seed = 1; seed <= 200; ++seed) {
    std::mt19937_64 rng(seed);
    const auto n = static_cast<std::size_t>(orch::test::uniform_int(rng, 1, 24));
    const auto k = static_cast<rank_t>(orch::test::uniform_int(rng, 1, 5));
    const auto c = orch::test::uniform_costs(seed * 11, n, 1, seed % 2 == 0 ? 100 : 100000);
    auto ids = random_groups(rng, n, 4, seed % 4 == 0);
    auto g = orch::contract_groups(c, ids);
    while (g.count() > 11) { // the brute force enumerates k^groups assignments
      for (auto& id : ids) {
        id = id == orch::no_group ? 0 : id / 2;
      }
      g = orch::contract_groups(c, ids);
    }
    CAPTURE(seed);
    orch::partition_options o;
    o.groups = ids;
    const auto r = orch::partition(c, k, o);
    orch::test::check_partition_invariants(c, k, r);
    check_groups_kept(ids, r);
    const cost_t opt = orch::test::brute_force_optimum(g.cost, k);
    CHECK(r.max_load == opt);
    CHECK(r.proven_optimal);
    CHECK(r.lower_bound <= opt);
    above_ungrouped += opt > orch::lower_bound(c, k) ? 1 : 0;
  }
  // Groups matter here: often the grouped optimum is above the ungrouped bound.
  CHECK(above_ungrouped > 0);
}

TEST_CASE("groups: groups of one item give exactly the ungrouped result") {
  for (std::uint64_t seed = 1; seed <= 12; ++seed) {
    std::mt19937_64 rng(seed);
    const auto n = static_cast<std::size_t>(orch::test::uniform_int(rng, 1, 400));
    const auto k = static_cast<rank_t>(orch::test::uniform_int(rng, 1, 40));
    const auto c = orch::test::uniform_costs(seed * 5, n, 1, 10000);
    // Distinct ids in a random order, or all alone: super-items are the items, in order.
    std::vector<index_t> ids(n);
    for (std::size_t i = 0; i < n; ++i) {
      ids[i] = seed % 2 == 0 ? static_cast<index_t>(i) : orch::no_group;
    }
    if (seed % 4 == 0) {
      std::shuffle(ids.begin(), ids.end(), rng);
    }
    const auto mem = orch::test::uniform_costs(seed * 7, n, 0, 100);
    std::vector<cost_t> speeds(static_cast<std::size_t>(k), 4);
    speeds.front() = 3;
    for (int variant = 0; variant < 5; ++variant) {
      CAPTURE(seed);
      CAPTURE(variant);
      orch::partition_options o;
      o.work_budget = 50000;
      if (variant == 1) {
        o.max_items_per_bin = static_cast<index_t>((n + static_cast<std::size_t>(k) - 1) /
                                                   static_cast<std::size_t>(k)) +
                              1;
      } else if (variant == 2) {
        o.equal_counts = true;
      } else if (variant == 3) {
        o.second_resource = mem;
        o.second_capacity = std::max<cost_t>(100, 60 * static_cast<cost_t>(n) / k);
      } else if (variant == 4) {
        o.speeds = speeds;
      }
      const auto plain = orch::partition(c, k, o);
      o.groups = ids;
      check_same(orch::partition(c, k, o), plain);
    }
  }
}

TEST_CASE("groups: max_items_per_bin counts items (equal and unequal group sizes)") {
  int solved = 0;
  int feasible = 0;
  for (std::uint64_t seed = 1; seed <= 150; ++seed) {
    std::mt19937_64 rng(seed);
    const auto k = static_cast<rank_t>(orch::test::uniform_int(rng, 2, 4));
    const bool equal = seed % 2 == 0;
    std::vector<index_t> ids;
    const auto groups = orch::test::uniform_int(rng, 1, 8);
    const auto s = orch::test::uniform_int(rng, 1, 4);
    for (index_t id = 0; id < groups; ++id) {
      const auto size = equal ? s : orch::test::uniform_int(rng, 1, 4);
      ids.insert(ids.end(), static_cast<std::size_t>(size), id);
    }
    std::shuffle(ids.begin(), ids.end(), rng);
    const auto n = ids.size();
    const auto c = orch::test::uniform_costs(seed * 13, n, 1, 1000);
    const auto g = orch::contract_groups(c, ids);
    const auto largest = *std::max_element(g.size.begin(), g.size.end());
    const auto least =
        static_cast<index_t>((n + static_cast<std::size_t>(k) - 1) / static_cast<std::size_t>(k));
    const index_t max_items = std::max(largest, least) + orch::test::uniform_int(rng, 0, 2);
    CAPTURE(seed);
    CAPTURE(max_items);
    const cost_t opt = brute_force_grouped(g, k, max_items, 0);
    orch::partition_options o;
    o.groups = ids;
    o.max_items_per_bin = max_items;
    if (opt < 0) {
      CHECK_THROWS_AS((void)orch::partition(c, k, o), orch::infeasible);
      continue;
    }
    ++feasible;
    try {
      const auto r = orch::partition(c, k, o);
      ++solved;
      orch::test::check_partition_invariants(c, k, r);
      check_groups_kept(ids, r);
      for (const auto count : item_counts(r.bin_of, k)) {
        CHECK(count <= max_items);
      }
      CHECK(r.max_load >= opt);
      CHECK(r.lower_bound <= opt); // a valid bound of the constrained grouped instance
    } catch (const orch::infeasible& e) {
      CAPTURE(e.what()); // greedy found no packing; allowed (no proof), counted below
    }
  }
  CHECK(feasible > 100);
  CHECK(solved == feasible); // on these small instances the greedy always finds a packing
}

TEST_CASE("groups: second resource sums over a group; speeds; lone items") {
  for (std::uint64_t seed = 1; seed <= 20; ++seed) {
    std::mt19937_64 rng(seed);
    const std::size_t n = 600;
    const rank_t k = 24;
    const auto c = orch::test::uniform_costs(seed, n, 1, 5000);
    const auto mem = orch::test::uniform_costs(seed + 100, n, 1, 100);
    const auto ids = random_groups(rng, n, 6, true);
    const auto g = orch::contract_groups(c, ids, mem);
    cost_t total_mem = 0;
    for (const auto m : mem) {
      total_mem += m;
    }
    CAPTURE(seed);
    orch::partition_options o;
    o.groups = ids;
    o.second_resource = mem;
    o.second_capacity =
        std::max(*std::max_element(g.resource.begin(), g.resource.end()), total_mem * 5 / 4 / k);
    const auto r = orch::partition(c, k, o);
    orch::test::check_partition_invariants(c, k, r);
    check_groups_kept(ids, r);
    std::vector<cost_t> used(static_cast<std::size_t>(k), 0);
    for (std::size_t i = 0; i < n; ++i) {
      used[static_cast<std::size_t>(r.bin_of[i])] += mem[i];
    }
    for (const auto u : used) {
      CHECK(u <= o.second_capacity);
    }
    orch::partition_options fast;
    fast.groups = ids;
    std::vector<cost_t> speeds(static_cast<std::size_t>(k), 2);
    speeds[3] = 1;
    fast.speeds = speeds;
    const auto s = orch::partition(c, k, fast);
    orch::test::check_partition_invariants(c, k, s);
    check_groups_kept(ids, s);
    CHECK(s.max_time >= s.time_lower_bound - 1e-9);
    CHECK(s.loads[3] < s.loads[4]);
  }
}

TEST_CASE("groups: equal_counts with groups of equal size, rejected otherwise") {
  const auto c = orch::test::uniform_costs(77, 48, 1, 1000);
  std::vector<index_t> ids(48);
  for (std::size_t i = 0; i < ids.size(); ++i) {
    ids[i] = static_cast<index_t>((i * 7) % 48 / 4); // 12 groups of 4, interleaved
  }
  orch::partition_options o;
  o.groups = ids;
  o.equal_counts = true;
  const auto r = orch::partition(c, 6, o); // 2 groups, 8 items per bin
  orch::test::check_partition_invariants(c, 6, r);
  check_groups_kept(ids, r);
  CHECK(item_counts(r.bin_of, 6) == std::vector<index_t>(6, 8));
  CHECK_THROWS_WITH_AS((void)orch::partition(c, 5, o),
                       "partition: equal_counts with groups of 4 items needs the number of groups "
                       "(12) to be a multiple of the bins (5)",
                       orch::infeasible);
  std::vector<index_t> uneven(ids);
  uneven[0] = 100; // group 0 loses an item to a new group of one
  o.groups = uneven;
  CHECK_THROWS_WITH_AS((void)orch::partition(c, 6, o),
                       "partition: equal_counts needs groups of equal sizes (group 100 has 1 "
                       "item, group 1 has 4 items)",
                       orch::invalid_argument);
}

TEST_CASE("groups: bad input and infeasible groups are named") {
  const std::vector<cost_t> c{4, 3, 2, 1, 6};
  orch::partition_options o;
  const std::vector<index_t> short_ids{0, 0, 1};
  o.groups = short_ids;
  CHECK_THROWS_WITH_AS((void)orch::partition(c, 2, o),
                       "partition: groups has 3 entries for 5 items", orch::invalid_argument);
  const std::vector<index_t> bad{0, 0, -2, 1, 1};
  o.groups = bad;
  CHECK_THROWS_WITH_AS((void)orch::partition(c, 2, o),
                       "partition: item 2 has group id -2 (must be ≥ 0, or −1 for an item alone)",
                       orch::invalid_argument);
  const std::vector<index_t> ids{7, 7, 7, 9, orch::no_group};
  o.groups = ids;
  o.max_items_per_bin = 2;
  CHECK_THROWS_WITH_AS((void)orch::partition(c, 3, o),
                       "partition: group 7 has 3 items, above max_items_per_bin = 2",
                       orch::infeasible);
  o.max_items_per_bin = 3;
  CHECK_THROWS_WITH_AS((void)orch::partition(c, 1, o),
                       "partition: 5 items do not fit in 1 bins of at most max_items_per_bin = 3 "
                       "items",
                       orch::infeasible);
  o.max_items_per_bin = 0;
  const std::vector<cost_t> lone_heavy{1, 1, 1, 1, 9};
  o.second_resource = lone_heavy;
  o.second_capacity = 8;
  CHECK_THROWS_WITH_AS((void)orch::partition(c, 3, o),
                       "partition: item 4 needs 9 of the second resource, above second_capacity "
                       "= 8",
                       orch::infeasible);
  const std::vector<cost_t> mem{2, 2, 2, 1, 3}; // group 7 needs 6 in one bin
  o.second_resource = mem;
  o.second_capacity = 5;
  CHECK_THROWS_WITH_AS((void)orch::partition(c, 3, o),
                       "partition: group 7 needs 6 of the second resource, above second_capacity "
                       "= 5",
                       orch::infeasible);
  o.second_capacity = 9;
  o.max_items_per_bin = 3; // groups of 3, 1 and 1 items
  CHECK_THROWS_WITH_AS((void)orch::partition(c, 3, o),
                       "partition: max_items_per_bin with groups of unequal sizes cannot be "
                       "combined with second_resource (group 7 has 3 items, group 9 has 1 item)",
                       orch::invalid_argument);
  o.second_resource = {};
  o.max_items_per_bin = 0;
  CHECK_THROWS_WITH_AS((void)orch::partition(c, 3, o),
                       "partition: second_capacity = 9 given without second_resource",
                       orch::invalid_argument);
  o.second_capacity = 0;
  o.algorithm = orch::partition_algorithm::kk;
  o.max_items_per_bin = 3;
  CHECK_THROWS_AS((void)orch::partition(c, 3, o), orch::invalid_argument);
  o.max_items_per_bin = 0;
  const auto r = orch::partition(c, 3, o); // kk over the groups {7: 9}, {9: 1}, {item 4: 6}
  CHECK(r.max_load == 9);
  check_groups_kept(ids, r);
  const std::vector<cost_t> negative{1, -1, 1, 1, 1};
  CHECK_THROWS_WITH_AS((void)orch::partition(negative, 3, o), doctest::Contains("item 1"),
                       orch::invalid_argument);
  CHECK_THROWS_AS((void)orch::partition(c, 0, o), orch::invalid_argument);
}

TEST_CASE("groups: packings the greedy cannot find, and totals, are reported as infeasible") {
  // Four groups of 2 and one of 1 in 3 bins of 3 items: 9 ≤ 3 × 3, but no bin holds two
  // pairs. Unequal sizes: the item count is packed as a resource, and every pass fails.
  const std::vector<cost_t> c{5, 5, 4, 4, 3, 3, 2, 2, 1};
  const std::vector<index_t> ids{0, 0, 1, 1, 2, 2, 3, 3, 4};
  orch::partition_options o;
  o.groups = ids;
  o.max_items_per_bin = 3;
  CHECK_THROWS_WITH_AS((void)orch::partition(c, 3, o),
                       "partition: no assignment of 5 groups (9 items) to 3 bins found within "
                       "max_items_per_bin = 3 items (greedy by cost, by group size and first-fit "
                       "all failed; no proof that none exists)",
                       orch::infeasible);
  o.max_items_per_bin = 4; // 2 + 2 | 2 + 1 | 2
  const auto r = orch::partition(c, 3, o);
  check_groups_kept(ids, r);
  for (const auto count : item_counts(r.bin_of, 3)) {
    CHECK(count <= 4);
  }
  o.max_items_per_bin = 0;
  const std::vector<cost_t> mem(9, 2); // 18 in total, 3 bins of 5
  o.second_resource = mem;
  o.second_capacity = 5;
  CHECK_THROWS_WITH_AS((void)orch::partition(c, 3, o),
                       doctest::Contains("partition: with 5 groups (9 items), the items need 18 "
                                         "of the second resource in total"),
                       orch::infeasible);
}

TEST_CASE("groups: deterministic; RL-shaped groups at scale stay near the grouped bound") {
  // A prompt's 8 sampled responses stay together: 512 prompts, 64 ranks (8 prompts per rank).
  const std::size_t prompts = 512;
  const std::size_t per = 8;
  const auto len = orch::test::lognormal_lengths(99, prompts * per, 6.5, 0.8, 16384);
  const std::vector<cost_t> c(len.begin(), len.end());
  std::vector<index_t> ids(c.size());
  for (std::size_t i = 0; i < ids.size(); ++i) {
    ids[i] = static_cast<index_t>(i / per);
  }
  orch::partition_options o;
  o.groups = ids;
  const auto a = orch::partition(c, 64, o);
  const auto b = orch::partition(c, 64, o);
  check_same(a, b);
  orch::test::check_partition_invariants(c, 64, a);
  check_groups_kept(ids, a);
  const auto g = orch::contract_groups(c, ids);
  CHECK(a.lower_bound >= orch::lower_bound(g.cost, 64));
  CHECK(a.ratio_to_lower_bound() <= 1.001);
  o.max_items_per_bin = 64; // 8 prompts per rank, exactly
  const auto capped = orch::partition(c, 64, o);
  check_groups_kept(ids, capped);
  CHECK(item_counts(capped.bin_of, 64) == std::vector<index_t>(64, 64));
}
