// SPDX-License-Identifier: Apache-2.0
// Seeded generators of P||Cmax instances with few items per bin (n/k from 2 to 5): the
// uniform and non-uniform families of the scheduling literature and constructed families
// whose optimum is known. Header-only, so Google Benchmarks can use it without orch-bench.
#pragma once

#include <orch/types.hpp>

#include <support/generators.hpp>

#include <algorithm>
#include <array>
#include <cstddef>
#include <cstdint>
#include <random>
#include <span>
#include <stdexcept>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

namespace orch_bench {

/// A family of P||Cmax instances.
struct pcmax_family {
  std::string_view name;
  std::string_view description;
  bool optimum_known; ///< the generator builds an assignment whose max load equals ⌈Σ/k⌉
};

/// The families, in table order.
[[nodiscard]] inline std::span<const pcmax_family> pcmax_families() noexcept {
  static constexpr std::array<pcmax_family, 9> list{{
      {"u100", "uniform [1, 100] (Franca et al. 1994; Dell'Amico-Martello class 1)", false},
      {"u1000", "uniform [1, 1000] (Franca et al. 1994)", false},
      {"u10000", "uniform [1, 10^4] (Franca et al. 1994)", false},
      {"u20_100", "uniform [20, 100] (Dell'Amico-Martello 1995 class 2)", false},
      {"u50_100", "uniform [50, 100] (Dell'Amico-Martello 1995 class 3): near-equal sizes", false},
      {"nonuniform",
       "98 % uniform [900, 1000], 2 % uniform [1, 200] (shaped after Frangioni, "
       "Necciari, Scutella 2004)",
       false},
      {"u100_800", "uniform [100, 800] (Gupta, Ruiz-Torres 2001, E families)", false},
      {"perfect",
       "k hidden bins of sum exactly 10^4, each cut at random points: optimum = "
       "lower bound, no slack",
       true},
      {"perfect_narrow",
       "as perfect, every item within (C/(r+1), C/(r-1)) for r items per bin "
       "(3-PARTITION-like)",
       true},
  }};
  return list;
}

namespace detail {

/// splitmix64: spreads structured seeds (family, k, n, replicate) over the engine's seed space.
[[nodiscard]] constexpr std::uint64_t mix_seed(std::uint64_t x) noexcept {
  x += 0x9e3779b97f4a7c15ULL;
  x = (x ^ (x >> 30)) * 0xbf58476d1ce4e5b9ULL;
  x = (x ^ (x >> 27)) * 0x94d049bb133111ebULL;
  return x ^ (x >> 31);
}

/// Items per hidden bin: ⌊n/k⌋ each, one more for the first n mod k bins.
[[nodiscard]] inline std::size_t hidden_bin_size(std::size_t n, std::size_t k, std::size_t b) {
  return n / k + (b < n % k ? 1 : 0);
}

/// r positive integers summing to `total` (r ≤ total): r − 1 distinct cut points in
/// [1, total − 1], drawn by rejection.
inline void random_composition(std::mt19937_64& rng, orch::cost_t total, std::size_t r,
                               std::vector<orch::cost_t>& out) {
  std::vector<orch::cost_t> cuts;
  while (cuts.size() + 1 < r) {
    const orch::cost_t c = orch::test::uniform_int(rng, 1, total - 1);
    bool fresh = true;
    for (const auto x : cuts) {
      fresh = fresh && x != c;
    }
    if (fresh) {
      cuts.push_back(c);
    }
  }
  cuts.push_back(0);
  cuts.push_back(total);
  std::sort(cuts.begin(), cuts.end());
  for (std::size_t i = 1; i < cuts.size(); ++i) {
    out.push_back(cuts[i] - cuts[i - 1]);
  }
}

/// r integers in (total/(r+1), total/(r−1)) summing to `total` (r ≥ 2): r − 1 drawn in a
/// narrower middle range, the last one completes the sum; redrawn until it is in range too.
inline void narrow_composition(std::mt19937_64& rng, orch::cost_t total, std::size_t r,
                               std::vector<orch::cost_t>& out) {
  const auto rr = static_cast<orch::cost_t>(r);
  const orch::cost_t lo = total / (rr + 1) + 1;            // > total/(r+1)
  const orch::cost_t hi = (total + rr - 2) / (rr - 1) - 1; // < total/(r−1)
  const orch::cost_t mean = total / rr;
  const orch::cost_t half_width = (hi - lo) / 4;
  for (;;) {
    orch::cost_t sum = 0;
    std::vector<orch::cost_t> part;
    for (std::size_t i = 0; i + 1 < r; ++i) {
      part.push_back(orch::test::uniform_int(rng, mean - half_width, mean + half_width));
      sum += part.back();
    }
    const orch::cost_t last = total - sum;
    if (last >= lo && last <= hi) {
      part.push_back(last);
      out.insert(out.end(), part.begin(), part.end());
      return;
    }
  }
}

} // namespace detail

/// n costs of the family named `family` for k bins, reproducible from `seed`. The order of the
/// items is shuffled for the constructed families (their hidden bins must not show).
/// Throws std::invalid_argument for an unknown family or k ≤ 0, or, for the constructed
/// families, n < k (a hidden bin would be empty) or n > 2k for perfect_narrow with r = 1.
[[nodiscard]] inline std::vector<orch::cost_t> pcmax_costs(std::string_view family, std::size_t n,
                                                           orch::rank_t bins, std::uint64_t seed) {
  if (bins <= 0) {
    throw std::invalid_argument("pcmax_costs: bins must be positive");
  }
  std::mt19937_64 rng(detail::mix_seed(seed));
  const auto k = static_cast<std::size_t>(bins);
  std::vector<orch::cost_t> out;
  out.reserve(n);
  const auto uniform = [&](orch::cost_t lo, orch::cost_t hi) {
    for (std::size_t i = 0; i < n; ++i) {
      out.push_back(orch::test::uniform_int(rng, lo, hi));
    }
  };
  if (family == "u100") {
    uniform(1, 100);
  } else if (family == "u1000") {
    uniform(1, 1000);
  } else if (family == "u10000") {
    uniform(1, 10000);
  } else if (family == "u20_100") {
    uniform(20, 100);
  } else if (family == "u50_100") {
    uniform(50, 100);
  } else if (family == "u100_800") {
    uniform(100, 800);
  } else if (family == "nonuniform") {
    for (std::size_t i = 0; i < n; ++i) {
      const bool big = orch::test::uniform_int(rng, 1, 100) <= 98;
      out.push_back(big ? orch::test::uniform_int(rng, 900, 1000)
                        : orch::test::uniform_int(rng, 1, 200));
    }
  } else if (family == "perfect" || family == "perfect_narrow") {
    if (n < k) {
      throw std::invalid_argument("pcmax_costs: constructed families need n >= k");
    }
    constexpr orch::cost_t target = 10000;
    for (std::size_t b = 0; b < k; ++b) {
      const std::size_t r = detail::hidden_bin_size(n, k, b);
      if (family == "perfect" || r == 1) {
        detail::random_composition(rng, target, r, out);
      } else {
        detail::narrow_composition(rng, target, r, out);
      }
    }
    // Fisher–Yates with our own unbiased draws (std::shuffle differs between libraries).
    for (std::size_t i = n; i > 1; --i) {
      const auto j = static_cast<std::size_t>(
          orch::test::uniform_int(rng, 0, static_cast<std::int64_t>(i) - 1));
      std::swap(out[i - 1], out[j]);
    }
  } else {
    throw std::invalid_argument("pcmax_costs: unknown family '" + std::string(family) + "'");
  }
  return out;
}

/// One instance of the study.
struct pcmax_instance {
  std::string family;
  orch::rank_t bins = 0;
  int items_per_bin_x2 = 0; ///< 2 · n/k (4 = two items per bin, 5 = two and a half, ...)
  int replicate = 0;
  std::uint64_t seed = 0;
  std::vector<orch::cost_t> costs;
  bool optimum_known = false; ///< max(⌈Σ/k⌉, max c) is the optimum by construction
};

/// The study's grid: every family × k in `bins` × n/k in `ratios_x2`/2 × `replicates` seeds.
/// Seeds derive from (base_seed, family, k, ratio, replicate), so a subset of the grid
/// reproduces the same instances as the full one.
[[nodiscard]] inline std::vector<pcmax_instance> pcmax_suite(std::uint64_t base_seed,
                                                             int replicates,
                                                             std::span<const orch::rank_t> bins,
                                                             std::span<const int> ratios_x2) {
  std::vector<pcmax_instance> out;
  const auto families = pcmax_families();
  for (std::size_t f = 0; f < families.size(); ++f) {
    for (const orch::rank_t k : bins) {
      for (const int r2 : ratios_x2) {
        for (int rep = 0; rep < replicates; ++rep) {
          pcmax_instance inst;
          inst.family = std::string(families[f].name);
          inst.bins = k;
          inst.items_per_bin_x2 = r2;
          inst.replicate = rep;
          inst.seed =
              detail::mix_seed(base_seed ^ detail::mix_seed((static_cast<std::uint64_t>(f) << 48) ^
                                                            (static_cast<std::uint64_t>(k) << 24) ^
                                                            (static_cast<std::uint64_t>(r2) << 12) ^
                                                            static_cast<std::uint64_t>(rep)));
          const auto n = static_cast<std::size_t>(r2) * static_cast<std::size_t>(k) / 2;
          inst.costs = pcmax_costs(families[f].name, n, k, inst.seed);
          inst.optimum_known = families[f].optimum_known;
          out.push_back(std::move(inst));
        }
      }
    }
  }
  return out;
}

} // namespace orch_bench
