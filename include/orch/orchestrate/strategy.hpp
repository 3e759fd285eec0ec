// SPDX-License-Identifier: Apache-2.0
/// The orchestration strategies, by the names the tools use.
#pragma once

#include <orch/config.hpp>

#include <array>
#include <cstdint>
#include <string_view>

namespace orch {

/// How a step is balanced.
enum class strategy : std::uint8_t {
  none,      ///< as sampled: every phase runs where the example was sampled; nothing moves
  llm_only,  ///< balance the LLM phase; encoders run on the LLM rank (today's pre-balancing)
  per_phase, ///< every phase balanced, bins mapped to ranks in order (locality-oblivious)
  orch,      ///< every phase balanced, node-wise rearrangement, locality-aware LLM placement
};

/// Every strategy, in the order the tools report them.
inline constexpr std::array<strategy, 4> all_strategies{strategy::none, strategy::llm_only,
                                                        strategy::per_phase, strategy::orch};

/// The tool name of `s`: "none", "llm_only", "per_phase" or "orch".
[[nodiscard]] constexpr std::string_view to_string(strategy s) noexcept {
  switch (s) {
  case strategy::none:
    return "none";
  case strategy::llm_only:
    return "llm_only";
  case strategy::per_phase:
    return "per_phase";
  case strategy::orch:
    return "orch";
  }
  return "?";
}

/// The strategy named `name`. Throws: orch::invalid_argument listing the valid names.
[[nodiscard]] inline strategy parse_strategy(std::string_view name) {
  for (const auto s : all_strategies) {
    if (to_string(s) == name) {
      return s;
    }
  }
  throw_invalid_argument("unknown strategy '", name,
                         "' (expected none, llm_only, per_phase or orch)");
}

} // namespace orch
