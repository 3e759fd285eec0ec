// SPDX-License-Identifier: Apache-2.0
// Seeded, platform-independent generators of workload-shaped lengths and costs for tests and
// benchmarks. std::*_distribution differ between standard libraries, so only the engine
// (std::mt19937_64, fully specified) comes from <random>.
#pragma once

#include <orch/types.hpp>

#include <cmath>
#include <cstdint>
#include <random>
#include <vector>

namespace orch::test {

/// Uniform double in [0, 1) from the top 53 bits of the engine.
inline double uniform01(std::mt19937_64& rng) {
  return static_cast<double>(rng() >> 11) * 0x1.0p-53;
}

/// Uniform integer in [lo, hi] (lo <= hi), unbiased by rejection.
inline std::int64_t uniform_int(std::mt19937_64& rng, std::int64_t lo, std::int64_t hi) {
  const auto span = static_cast<std::uint64_t>(hi - lo) + 1;
  if (span == 0) {
    return static_cast<std::int64_t>(rng());
  }
  const std::uint64_t limit = ~std::uint64_t{0} - (~std::uint64_t{0} % span);
  std::uint64_t x = rng();
  while (x >= limit) {
    x = rng();
  }
  return lo + static_cast<std::int64_t>(x % span);
}

/// Standard normal by Box–Muller.
inline double normal(std::mt19937_64& rng) {
  const double u1 = 1.0 - uniform01(rng); // (0, 1]
  const double u2 = uniform01(rng);
  return std::sqrt(-2.0 * std::log(u1)) * std::cos(6.283185307179586 * u2);
}

/// n lognormal lengths exp(mu + sigma·N(0,1)), rounded, clamped to [1, max_length].
inline std::vector<length_t> lognormal_lengths(std::uint64_t seed, std::size_t n, double mu,
                                               double sigma, length_t max_length) {
  std::mt19937_64 rng(seed);
  std::vector<length_t> out(n);
  for (auto& l : out) {
    const double x = std::exp(mu + sigma * normal(rng));
    l = std::max<length_t>(1, std::min<length_t>(max_length, std::llround(x)));
  }
  return out;
}

/// n costs uniform in [lo, hi].
inline std::vector<cost_t> uniform_costs(std::uint64_t seed, std::size_t n, cost_t lo, cost_t hi) {
  std::mt19937_64 rng(seed);
  std::vector<cost_t> out(n);
  for (auto& c : out) {
    c = uniform_int(rng, lo, hi);
  }
  return out;
}

/// n costs from two modes: short (uniform [lo1, hi1]) with probability p, else long.
inline std::vector<cost_t> bimodal_costs(std::uint64_t seed, std::size_t n, double p, cost_t lo1,
                                         cost_t hi1, cost_t lo2, cost_t hi2) {
  std::mt19937_64 rng(seed);
  std::vector<cost_t> out(n);
  for (auto& c : out) {
    c = uniform01(rng) < p ? uniform_int(rng, lo1, hi1) : uniform_int(rng, lo2, hi2);
  }
  return out;
}

} // namespace orch::test
