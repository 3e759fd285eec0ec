// SPDX-License-Identifier: Apache-2.0
/// The algorithms orch::partition can run, by the names the tools use.
#pragma once

#include <orch/config.hpp>

#include <array>
#include <cstdint>
#include <string_view>

namespace orch {

/// Which partitioner orch::partition runs (partition_options::algorithm).
enum class partition_algorithm : std::uint8_t {
  automatic,  ///< "auto": chain by regime (see orch::partition)
  lpt,        ///< "lpt": longest processing time first
  lpt_ls,     ///< "lpt+ls": LPT, then local search
  kk,         ///< "kk": Karmarkar–Karp largest differencing
  multifit,   ///< "multifit": bisection over first-fit-decreasing capacities
  subset_sum, ///< "subset_sum": the paper's reduction
  exact,      ///< "exact": heuristic starts, local search, then branch and bound
};

/// Every algorithm, in the order the tools list them.
inline constexpr std::array<partition_algorithm, 7> all_partition_algorithms{
    partition_algorithm::automatic, partition_algorithm::lpt,      partition_algorithm::lpt_ls,
    partition_algorithm::kk,        partition_algorithm::multifit, partition_algorithm::subset_sum,
    partition_algorithm::exact};

/// The tool name of `a`: "auto", "lpt", "lpt+ls", "kk", "multifit", "subset_sum" or "exact".
[[nodiscard]] constexpr std::string_view to_string(partition_algorithm a) noexcept {
  switch (a) {
  case partition_algorithm::automatic:
    return "auto";
  case partition_algorithm::lpt:
    return "lpt";
  case partition_algorithm::lpt_ls:
    return "lpt+ls";
  case partition_algorithm::kk:
    return "kk";
  case partition_algorithm::multifit:
    return "multifit";
  case partition_algorithm::subset_sum:
    return "subset_sum";
  case partition_algorithm::exact:
    return "exact";
  }
  return "?";
}

/// The algorithm whose tool name is `name` (exact match, see to_string).
/// Complexity: O(1). Throws: orch::invalid_argument listing the valid names.
[[nodiscard]] inline partition_algorithm parse_partition_algorithm(std::string_view name) {
  for (const auto a : all_partition_algorithms) {
    if (to_string(a) == name) {
      return a;
    }
  }
  throw_invalid_argument("unknown partition algorithm '", name,
                         "' (expected auto, lpt, lpt+ls, kk, multifit, subset_sum or exact)");
}

} // namespace orch
