// SPDX-License-Identifier: Apache-2.0
/// The many-items-per-bin workloads orch and the peers are compared on (seeded, portable).
#pragma once

#include <orch/types.hpp>

#include <support/generators.hpp>

#include <algorithm>
#include <cmath>
#include <cstddef>
#include <cstdint>
#include <random>
#include <string_view>
#include <vector>

namespace orch_bench::peers {

/// A workload family of per-item costs.
enum class workload {
  lognormal,     ///< tokens, lognormal(μ = 7, σ = 1) (median ≈ 1,100), capped at 32,768
  bimodal,       ///< tokens, 70 % text U[64, 1024], 30 % long video U[8192, 32768]
  heavy,         ///< tokens, Pareto(α = 1.2, x_min = 256), capped at 131,072
  verl_workload, ///< lognormal lengths L as above, cost 24576·L + L² (verl's FLOPs proxy)
};

/// The family's short name, as benchmark labels show it.
[[nodiscard]] inline std::string_view workload_name(workload w) noexcept {
  switch (w) {
  case workload::lognormal:
    return "lognormal";
  case workload::bimodal:
    return "bimodal";
  case workload::heavy:
    return "heavy";
  case workload::verl_workload:
    return "verl_workload";
  }
  return "?";
}

/// n costs of family `w`, reproducible from `seed` on any platform (only the mt19937_64
/// engine comes from the standard library).
[[nodiscard]] inline std::vector<orch::cost_t> workload_costs(workload w, std::size_t n,
                                                              std::uint64_t seed) {
  switch (w) {
  case workload::lognormal:
    return orch::test::lognormal_lengths(seed, n, 7.0, 1.0, 32768);
  case workload::bimodal:
    return orch::test::bimodal_costs(seed, n, 0.7, 64, 1024, 8192, 32768);
  case workload::heavy: {
    std::mt19937_64 rng(seed);
    std::vector<orch::cost_t> out(n);
    for (auto& c : out) {
      const double u = 1.0 - orch::test::uniform01(rng); // (0, 1]
      const double x = 256.0 / std::pow(u, 1.0 / 1.2);
      c = std::min<orch::cost_t>(131072, std::llround(std::min(x, 1e12)));
    }
    return out;
  }
  case workload::verl_workload: {
    auto out = orch::test::lognormal_lengths(seed, n, 7.0, 1.0, 32768);
    for (auto& c : out) {
      c = 24576 * c + c * c; // ≤ 24576·2^15 + 2^30: far inside int64
    }
    return out;
  }
  }
  return {};
}

} // namespace orch_bench::peers
