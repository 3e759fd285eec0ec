// SPDX-License-Identifier: Apache-2.0
/// All peer balancers, and a lookup by name so tools can run them like orch's algorithms.
#pragma once

#include "greedy.hpp"
#include "llava.hpp"
#include "peer_input.hpp"
#include "simple.hpp"
#include "verl_kk.hpp"

#include <orch/config.hpp>
#include <orch/partition/result.hpp>
#include <orch/types.hpp>

#include <array>
#include <span>
#include <string_view>

namespace orch_bench::peers {

/// A peer balancer as tools list it.
struct peer_info {
  std::string_view name;    ///< what `orch-bench partition --algo` accepts
  std::string_view summary; ///< one line: whose code it reproduces
  bool equal_counts;        ///< true when it gives every bin n/k items (±1)
};

/// Every peer, in the order tables list them.
[[nodiscard]] inline std::span<const peer_info> peer_list() noexcept {
  static constexpr std::array<peer_info, 8> list{{
      {"verl_kk", "verl karmarkar_karp(equal_size=False): k-way LDM", false},
      {"verl_kk_equal", "verl karmarkar_karp(equal_size=True): balanced LDM, n/k items per bin",
       true},
      {"veomni_greedy", "VeOmni greedy: cost descending to the least-loaded rank (LPT)", false},
      {"veomni_greedy_unsorted", "VeOmni greedy loop in sampled order (list scheduling)", false},
      {"mindspeed_greedy", "MindSpeed-MM greedy with capacity ceil(n/k) per rank", true},
      {"llava_grouped", "LLaVA length grouping: sort, split_to_even_chunks", true},
      {"sorted_round_robin", "sort descending, deal round-robin (Bagua, DeepSpeed seqlen)", true},
      {"no_balancing", "ranks keep what they sampled (contiguous blocks)", true},
  }};
  return list;
}

/// True when `name` is a peer of peer_list().
[[nodiscard]] inline bool is_peer(std::string_view name) noexcept {
  for (const auto& p : peer_list()) {
    if (p.name == name) {
      return true;
    }
  }
  return false;
}

/// Runs the peer called `name` on `costs` and k = `bins` (mindspeed_greedy with capacity
/// ceil(n/k), the per-rank batch size it is used with).
/// Complexity: that of the peer. Throws: orch::invalid_argument (unknown name) and whatever
/// the peer throws.
[[nodiscard]] inline orch::partition_result
run_peer(std::string_view name, std::span<const orch::cost_t> costs, orch::rank_t bins) {
  if (name == "verl_kk") {
    return verl_kk(costs, bins, false);
  }
  if (name == "verl_kk_equal") {
    return verl_kk(costs, bins, true);
  }
  if (name == "veomni_greedy") {
    return veomni_greedy(costs, bins, greedy_order::sorted);
  }
  if (name == "veomni_greedy_unsorted") {
    return veomni_greedy(costs, bins, greedy_order::given);
  }
  if (name == "mindspeed_greedy") {
    if (bins <= 0) {
      orch::throw_invalid_argument("mindspeed_greedy: number of bins must be positive, got ", bins);
    }
    const auto n = static_cast<orch::index_t>(costs.size());
    return mindspeed_greedy(costs, bins, n == 0 ? 1 : ceil_div(n, bins));
  }
  if (name == "llava_grouped") {
    return llava_grouped(costs, bins);
  }
  if (name == "sorted_round_robin") {
    return sorted_round_robin(costs, bins);
  }
  if (name == "no_balancing") {
    return no_balancing(costs, bins);
  }
  orch::throw_invalid_argument("run_peer: unknown peer '", name, "'");
}

} // namespace orch_bench::peers
