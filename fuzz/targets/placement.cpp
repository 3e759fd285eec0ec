// SPDX-License-Identifier: Apache-2.0
// Fuzz target: the placement engine (orch::place, both locality_balance overloads) with its
// bounds and the node-wise rearrangement. From fuzzed costs and bytes (four magnitudes, some
// negative or near 2^62), current ranks (sometimes outside the topology, often crowded onto a
// few ranks so that nodes must shed), uniform or scattered nodes of different sizes, slack,
// threads, measure, and reference bins (orch::partition's, random, or invalid): either an
// orch::error — never for clean input (valid and small) — or a result where every item has a
// rank of the topology, the loads are the recomputed ones, max_load ≤ target and ≥ the lower
// bound ≥ max(⌈Σc/k⌉, max c), the target is the documented one, `moved` is the recomputed
// traffic, inter_node_lower_bound equals orch::inter_node_lower_bound at the target and is at
// most the inter-node bytes of every assignment within the target (brute force on small
// cases), which the result never beats; against reference bins the result sends no more
// bytes across nodes than rearrange_bins' mapping of them, that mapping is a bijection whose
// traffic is what it reports and is optimal across nodes (brute force over bijections);
// follow_parent_inter_node_lower_bound, for fuzzed children of the items, is never above the
// bytes they cross following any placement of the items within the target (brute force) or
// the engine's; the other thread count and a second call give the same result.
#define ORCH_FUZZ_NAME "placement"
#include "../fuzz_input.hpp"

#include <orch/partition/partition.hpp>
#include <orch/placement/bounds.hpp>
#include <orch/placement/engine.hpp>
#include <orch/placement/rearrange.hpp>
#include <orch/placement/traffic.hpp>
#include <orch/topology.hpp>

#include <algorithm>
#include <cstdint>
#include <limits>
#include <numeric>
#include <optional>
#include <vector>

namespace {

using orch::bytes_t;
using orch::cost_t;
using orch::rank_t;

/// The fuzzed case, with whether it is valid (no negative value, every rank and bin inside
/// the topology, slack ≥ 0: else the engine must throw) and clean (valid, and small enough
/// that no sum can overflow: then it must not).
struct placement_case {
  std::vector<cost_t> costs;
  std::vector<bytes_t> bytes;
  std::vector<rank_t> current;
  std::vector<rank_t> node_of_rank;
  std::vector<rank_t> reference; // empty: none
  orch::place_options options;
  int entry = 0; // 0 place, 1 locality_balance with bins, 2 locality_balance without
  bool valid = true;
  bool clean = true;
};

/// Items' new traffic by an independent classification (the same definition as traffic_of).
orch::traffic traffic_of(const placement_case& c, const std::vector<rank_t>& to) {
  orch::traffic t;
  for (std::size_t i = 0; i < to.size(); ++i) {
    const auto s = static_cast<std::size_t>(c.current[i]);
    const auto d = static_cast<std::size_t>(to[i]);
    (s == d                                   ? t.self
     : c.node_of_rank[s] == c.node_of_rank[d] ? t.intra_node
                                              : t.inter_node) += c.bytes[i];
  }
  return t;
}

std::vector<cost_t> loads_of(const std::vector<cost_t>& costs, const std::vector<rank_t>& rank_of,
                             std::size_t k) {
  std::vector<cost_t> loads(k, 0);
  for (std::size_t i = 0; i < costs.size(); ++i) {
    loads[static_cast<std::size_t>(rank_of[i])] += costs[i];
  }
  return loads;
}

/// The largest of `loads` (0 for none).
cost_t largest_of(const std::vector<cost_t>& loads) {
  cost_t out = 0;
  for (const cost_t l : loads) {
    out = std::max(out, l);
  }
  return out;
}

/// base^exp, or some value above 1,000,000 when it is larger.
std::size_t power(std::size_t base, std::size_t exp) {
  std::size_t p = 1;
  for (std::size_t i = 0; i < exp && p <= 1'000'000; ++i) {
    p *= base;
  }
  return p;
}

/// Calls f(to) for every assignment `to` of the case's items to its ranks (k^n of them).
template <class F>
void for_each_assignment(const placement_case& c, F&& f) {
  const std::size_t k = c.node_of_rank.size();
  const std::size_t n = c.costs.size();
  const std::size_t combos = power(k, n);
  std::vector<rank_t> to(n);
  for (std::size_t code = 0; code < combos; ++code) {
    std::size_t rest = code;
    for (auto& r : to) {
      r = static_cast<rank_t>(rest % k);
      rest /= k;
    }
    f(to);
  }
}

/// The fewest inter-node bytes of any assignment whose largest load is ≤ target, or nothing
/// when none is.
std::optional<bytes_t> fewest_inter_node(const placement_case& c, cost_t target) {
  std::optional<bytes_t> best;
  for_each_assignment(c, [&](const std::vector<rank_t>& to) {
    if (largest_of(loads_of(c.costs, to, c.node_of_rank.size())) <= target) {
      const bytes_t inter = traffic_of(c, to).inter_node;
      best = best ? std::min(*best, inter) : inter;
    }
  });
  return best;
}

/// Items that follow a parent (an encoder's media following their example to its LLM rank):
/// each on a rank, with bytes, and the index of its parent among the case's items.
struct children {
  std::vector<orch::index_t> parent_of;
  std::vector<rank_t> rank;
  std::vector<bytes_t> bytes;

  /// Bytes crossing nodes when every child goes to the rank of its parent in `parent_rank`.
  [[nodiscard]] bytes_t inter_node(const placement_case& c,
                                   const std::vector<rank_t>& parent_rank) const {
    bytes_t out = 0;
    for (std::size_t j = 0; j < rank.size(); ++j) {
      const auto to = parent_rank[static_cast<std::size_t>(parent_of[j])];
      out += c.node_of_rank[static_cast<std::size_t>(rank[j])] ==
                     c.node_of_rank[static_cast<std::size_t>(to)]
                 ? 0
                 : bytes[j];
    }
    return out;
  }
};

placement_case fuzzed_case(orch::fuzz::input& in) {
  placement_case c;
  const auto k = static_cast<rank_t>(in.uniform(1, 12));
  c.node_of_rank.resize(static_cast<std::size_t>(k));
  if (in.boolean()) {
    // Uniform: a divisor of k ranks per node, nodes consecutive.
    std::vector<rank_t> divisors;
    for (rank_t d = 1; d <= k; ++d) {
      if (k % d == 0) {
        divisors.push_back(d);
      }
    }
    const rank_t per = divisors[static_cast<std::size_t>(
        in.uniform(0, static_cast<std::int64_t>(divisors.size()) - 1))];
    for (rank_t r = 0; r < k; ++r) {
      c.node_of_rank[static_cast<std::size_t>(r)] = r / per;
    }
  } else {
    // Scattered nodes of different sizes: node r for the first m ranks, then any, shuffled.
    const auto m = static_cast<rank_t>(in.uniform(1, k));
    for (rank_t r = 0; r < k; ++r) {
      c.node_of_rank[static_cast<std::size_t>(r)] =
          r < m ? r : static_cast<rank_t>(in.uniform(0, m - 1));
    }
    for (std::size_t r = c.node_of_rank.size(); r > 1; --r) {
      std::swap(c.node_of_rank[r - 1], c.node_of_rank[static_cast<std::size_t>(
                                           in.uniform(0, static_cast<std::int64_t>(r) - 1))]);
    }
  }
  const auto n = static_cast<std::size_t>(in.uniform(0, 40));
  const int cost_magnitude = static_cast<int>(in.uniform(0, 3));
  const int byte_magnitude = static_cast<int>(in.uniform(0, 2));
  // Half the cases crowd every item onto ranks 0..hot, so that ranks and nodes must shed.
  const rank_t hot = in.boolean() ? static_cast<rank_t>(in.uniform(0, k - 1)) : k - 1;
  constexpr std::int64_t small = std::int64_t{1} << 40;
  for (std::size_t i = 0; i < n; ++i) {
    const cost_t cost = cost_magnitude == 0   ? in.uniform(0, 20)
                        : cost_magnitude == 1 ? in.uniform(0, 100'000)
                        : cost_magnitude == 2
                            ? in.length(1'000'000)
                            : in.uniform(0, std::numeric_limits<cost_t>::max() / 4);
    const bytes_t b = byte_magnitude == 0   ? in.uniform(0, 20)
                      : byte_magnitude == 1 ? in.uniform(0, 1 << 20)
                                            : in.length(1'000'000);
    const auto r =
        static_cast<rank_t>(in.uniform(0, 63) == 0 ? in.uniform(-1, k) : in.uniform(0, hot));
    c.valid = c.valid && cost >= 0 && b >= 0 && r >= 0 && r < k;
    c.clean = c.clean && c.valid && cost < small && b < small;
    c.costs.push_back(cost);
    c.bytes.push_back(b);
    c.current.push_back(r);
  }
  switch (in.uniform(0, 7)) {
  case 0:
    c.options.slack_ppm = 0;
    break;
  case 1:
    c.options.slack_ppm = in.uniform(0, 300'000);
    break;
  case 2:
    c.options.slack_ppm = in.boolean() ? -1 : std::numeric_limits<std::int64_t>::max();
    c.valid = c.valid && c.options.slack_ppm >= 0;
    c.clean = false;
    break;
  default:
    c.options.slack_ppm = 1000;
  }
  c.options.threads = in.boolean() ? 2 : 1;
  c.options.measure = in.uniform(0, 3) != 0;
  c.entry = static_cast<int>(in.uniform(0, 2));
  const int bins = static_cast<int>(in.uniform(0, 3));
  if (c.entry == 1 || (c.entry == 0 && bins != 0)) {
    if (bins == 2) {
      // Any bins: valid, sometimes one outside the topology or one too few.
      for (std::size_t i = 0; i < n; ++i) {
        c.reference.push_back(static_cast<rank_t>(in.uniform(0, k - 1)));
      }
      if (in.uniform(0, 15) == 0) {
        if (n > 0 && in.boolean()) {
          c.reference[static_cast<std::size_t>(in.uniform(0, static_cast<std::int64_t>(n) - 1))] =
              in.boolean() ? -1 : k;
        } else {
          c.reference.push_back(0);
        }
        c.valid = false;
        c.clean = false;
      }
    } else if (c.clean) {
      c.reference = orch::partition(c.costs, k).bin_of;
    } else {
      c.reference.assign(n, 0);
    }
  }
  return c;
}

orch::locality_result run(const placement_case& c, const orch::topology& topo, int threads) {
  orch::place_options o = c.options;
  o.threads = threads;
  o.reference_bin_of = c.reference;
  if (c.entry == 1) {
    return orch::locality_balance(c.costs, c.current, c.bytes, topo, c.reference,
                                  {.slack_ppm = o.slack_ppm});
  }
  if (c.entry == 2) {
    return orch::locality_balance(c.costs, c.current, c.bytes, topo, {.slack_ppm = o.slack_ppm});
  }
  return orch::place(c.costs, c.current, c.bytes, topo, o);
}

bool same(const orch::locality_result& a, const orch::locality_result& b) {
  return a.rank_of == b.rank_of && a.loads == b.loads && a.max_load == b.max_load &&
         a.lower_bound == b.lower_bound && a.reference_max_load == b.reference_max_load &&
         a.target == b.target && a.moved == b.moved &&
         a.inter_node_lower_bound == b.inter_node_lower_bound && a.method == b.method &&
         a.proven_optimal == b.proven_optimal;
}

/// rearrange_bins of `bins`: a bijection whose reported traffic is the traffic of its
/// mapping, and no bijection sends fewer bytes across nodes (all of them, k ≤ 7).
std::vector<rank_t> check_rearrangement(const placement_case& c, const orch::topology& topo,
                                        const std::vector<rank_t>& bins) {
  const auto m = orch::rearrange_bins(bins, c.current, c.bytes, topo);
  const std::size_t k = c.node_of_rank.size();
  ORCH_FUZZ_CHECK(m.rank_of_bin.size() == k);
  std::vector<rank_t> sorted = m.rank_of_bin;
  std::sort(sorted.begin(), sorted.end());
  for (std::size_t r = 0; r < k; ++r) {
    ORCH_FUZZ_CHECK(sorted[r] == static_cast<rank_t>(r));
  }
  const auto mapped = m.rank_of_items(bins);
  ORCH_FUZZ_CHECK(m.moves() == traffic_of(c, mapped));
  if (k <= 7) {
    std::vector<rank_t> perm(k);
    std::iota(perm.begin(), perm.end(), 0);
    std::vector<rank_t> to(bins.size());
    do {
      for (std::size_t i = 0; i < bins.size(); ++i) {
        to[i] = perm[static_cast<std::size_t>(bins[i])];
      }
      ORCH_FUZZ_CHECK(traffic_of(c, to).inter_node >= m.moves().inter_node);
    } while (std::next_permutation(perm.begin(), perm.end()));
  }
  return mapped;
}

} // namespace

int orch_fuzz_placement(const std::uint8_t* data, std::size_t size) {
  orch::fuzz::input in(data, size);
  const placement_case c = fuzzed_case(in);
  const auto topo = orch::topology::from_node_of_rank(c.node_of_rank);
  const auto k = static_cast<std::size_t>(topo.ranks());
  orch::locality_result r;
  try {
    r = run(c, topo, c.options.threads);
  } catch (const orch::error&) {
    ORCH_FUZZ_CHECK(!c.clean); // a clean case always has a placement within its target
    return 0;
  }
  ORCH_FUZZ_CHECK(c.valid); // invalid input is an error, never a placement
  const std::size_t n = c.costs.size();
  // Every item on a rank of the topology; the loads are the recomputed ones.
  ORCH_FUZZ_CHECK(r.rank_of.size() == n);
  for (const rank_t x : r.rank_of) {
    ORCH_FUZZ_CHECK(x >= 0 && static_cast<std::size_t>(x) < k);
  }
  ORCH_FUZZ_CHECK(r.loads == loads_of(c.costs, r.rank_of, k));
  ORCH_FUZZ_CHECK(r.max_load == largest_of(r.loads));
  ORCH_FUZZ_CHECK(r.max_load <= r.target);
  // The cost bound max(⌈Σc / k⌉, max c) (Σc fits: the engine checked it).
  cost_t total = 0;
  cost_t largest = 0;
  for (const cost_t x : c.costs) {
    total += x;
    largest = std::max(largest, x);
  }
  const auto bound = std::max<cost_t>(
      largest, static_cast<cost_t>((orch::detail::int128{total} + static_cast<cost_t>(k) - 1) /
                                   static_cast<cost_t>(k)));
  ORCH_FUZZ_CHECK(r.lower_bound >= bound);
  ORCH_FUZZ_CHECK(r.max_load >= r.lower_bound);
  ORCH_FUZZ_CHECK(!r.proven_optimal || r.max_load == r.lower_bound ||
                  r.max_load == r.reference_max_load);
  ORCH_FUZZ_CHECK(r.max_load != bound || r.proven_optimal);
  // The target: the reference's largest load (or the bound) plus slack_ppm of the bound.
  const auto slack =
      static_cast<cost_t>(orch::detail::int128{bound} * c.options.slack_ppm / 1'000'000);
  if (!c.reference.empty()) {
    const auto ref = loads_of(c.costs, c.reference, k);
    ORCH_FUZZ_CHECK(r.reference_max_load == largest_of(ref));
  }
  if (c.reference.empty() && r.target == bound + slack) {
    ORCH_FUZZ_CHECK(r.reference_max_load == 0 || r.reference_max_load >= bound);
  } else {
    ORCH_FUZZ_CHECK(r.target == r.reference_max_load + slack);
    ORCH_FUZZ_CHECK(r.reference_max_load >= bound);
  }
  // Traffic and the inter-node bound at the target.
  const orch::traffic moved = traffic_of(c, r.rank_of);
  const bool measured = c.entry != 0 || c.options.measure;
  if (measured) {
    ORCH_FUZZ_CHECK(r.moved == moved);
    ORCH_FUZZ_CHECK(r.inter_node_lower_bound ==
                    orch::inter_node_lower_bound(c.costs, c.current, c.bytes, topo, r.target));
  } else {
    ORCH_FUZZ_CHECK(r.moved == orch::traffic{} || r.moved == moved);
    ORCH_FUZZ_CHECK(r.inter_node_lower_bound == 0);
  }
  const bytes_t lb = orch::inter_node_lower_bound(c.costs, c.current, c.bytes, topo, r.target);
  ORCH_FUZZ_CHECK(lb <= moved.inter_node);
  // Brute force where k^n ≤ 20,000 assignments.
  const bool enumerable = power(k, n) <= 20'000;
  if (enumerable) {
    const auto best = fewest_inter_node(c, r.target);
    ORCH_FUZZ_CHECK(best.has_value()); // the result itself is one
    ORCH_FUZZ_CHECK(lb <= *best && *best <= moved.inter_node);
  }
  // Against reference bins: never more across nodes than their node-wise rearrangement.
  if (!c.reference.empty() || c.entry == 2) {
    const std::vector<rank_t> bins =
        c.reference.empty() ? orch::partition(c.costs, topo.ranks()).bin_of : c.reference;
    const auto mapped = check_rearrangement(c, topo, bins);
    ORCH_FUZZ_CHECK(moved.inter_node <= traffic_of(c, mapped).inter_node);
  }
  // The bound on bytes that follow the items (features following their example): never
  // above what the engine's placement makes them cross, nor above the fewest of any
  // placement of the items within the target.
  if (c.clean && n > 0) {
    children ch;
    const auto m = static_cast<std::size_t>(in.uniform(0, 24));
    for (std::size_t j = 0; j < m; ++j) {
      ch.parent_of.push_back(
          static_cast<orch::index_t>(in.uniform(0, static_cast<std::int64_t>(n) - 1)));
      ch.rank.push_back(static_cast<rank_t>(in.uniform(0, static_cast<std::int64_t>(k) - 1)));
      ch.bytes.push_back(in.boolean() ? in.uniform(0, 20) : in.uniform(0, 1 << 20));
    }
    const bytes_t follow = orch::follow_parent_inter_node_lower_bound(
        c.costs, ch.parent_of, ch.rank, ch.bytes, topo, r.target);
    ORCH_FUZZ_CHECK(follow <= ch.inter_node(c, r.rank_of));
    if (enumerable) {
      for_each_assignment(c, [&](const std::vector<rank_t>& to) {
        if (largest_of(loads_of(c.costs, to, k)) <= r.target) {
          ORCH_FUZZ_CHECK(follow <= ch.inter_node(c, to));
        }
      });
    }
  }
  // Deterministic: the other thread count, and the same call again.
  ORCH_FUZZ_CHECK(same(r, run(c, topo, 3 - c.options.threads)));
  ORCH_FUZZ_CHECK(same(r, run(c, topo, c.options.threads)));
  return 0;
}
