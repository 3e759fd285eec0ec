// SPDX-License-Identifier: Apache-2.0
/// Micro-batches: one rank's items split into m balanced micro-batches under a token cap.
#pragma once

#include <orch/config.hpp>
#include <orch/partition/bounds.hpp>
#include <orch/partition/multifit.hpp>
#include <orch/partition/order.hpp>
#include <orch/partition/partition.hpp>
#include <orch/partition/result.hpp>
#include <orch/quality.hpp>
#include <orch/types.hpp>

#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <span>
#include <string>
#include <vector>

namespace orch {

/// Options of the micro-batch functions.
struct microbatch_options {
  /// Work units per partition attempt (see partition_options::work_budget).
  std::int64_t work_budget = 200'000;
};

namespace detail {

inline void check_tokens(std::span<const cost_t> tokens, cost_t cap, const char* where) {
  if (cap <= 0) {
    throw_invalid_argument(where, ": token cap must be positive, got ", cap);
  }
  for (std::size_t i = 0; i < tokens.size(); ++i) {
    if (tokens[i] < 0) {
      throw_invalid_argument(where, ": item ", i, " has negative token count ", tokens[i]);
    }
    if (tokens[i] > cap) {
      throw_infeasible(where, ": item ", i, " has ", tokens[i], " tokens, above the token cap of ",
                       cap, " per micro-batch");
    }
  }
}

} // namespace detail

/// The smallest number of micro-batches m whose token totals can each stay within `cap`,
/// as far as orch can show: m starts at max(⌈Σ tokens / cap⌉, the L2 bin-packing bound) and
/// grows until orch::partition of the tokens into m parts keeps every part ≤ cap; the
/// first-fit-decreasing count, which always fits, caps the search. 0 for no items.
///
/// Complexity: at most (m_FFD − m_LB) partition calls, usually one or two.
/// Guarantee: m ≤ the FFD count ≤ 11/9 · OPT + 6/9 (Dósa 2007), and m ≥ OPT.
/// Determinism: work-counted budgets only.
/// Throws: orch::invalid_argument (cap ≤ 0, negative tokens), orch::infeasible (an item alone
/// above the cap, naming it), orch::overflow (Σ tokens).
[[nodiscard]] inline index_t min_microbatches(std::span<const cost_t> tokens, cost_t cap,
                                              const microbatch_options& options = {}) {
  detail::check_tokens(tokens, cap, "min_microbatches");
  const cost_t total = detail::total_cost(tokens, "min_microbatches");
  if (tokens.empty()) {
    return 0;
  }
  const auto sorted = detail::sorted_desc(tokens);
  const index_t lower =
      std::max<index_t>(detail::ceil_div(total, cap), bin_packing_l2(sorted, cap));
  // FFD with as many bins as items always fits (each item alone fits the cap); its count of
  // non-empty bins is the upper end.
  const auto order = detail::order_desc(tokens);
  std::vector<rank_t> bin_of;
  const auto n = static_cast<rank_t>(std::min<std::size_t>(tokens.size(), INT32_MAX));
  const bool ok = detail::ffd(tokens, order, n, cap, bin_of);
  ORCH_ASSERT(ok);
  static_cast<void>(ok);
  const index_t upper = *std::max_element(bin_of.begin(), bin_of.end()) + 1;
  partition_options po;
  po.work_budget = options.work_budget;
  for (index_t m = std::max<index_t>(lower, 1); m < upper; ++m) {
    if (partition(tokens, static_cast<rank_t>(m), po).max_load <= cap) {
      return m;
    }
  }
  return upper;
}

/// The cross-rank rule: every rank must run the same number of micro-batches (their
/// collectives pair up one by one), so all use the largest of the ranks' minima — the
/// smallest m that fits the worst rank. An all-reduce (max) of min_microbatches.
/// Complexity: O(ranks). Throws: orch::invalid_argument (no ranks, a negative count).
[[nodiscard]] inline index_t common_microbatches(std::span<const index_t> per_rank) {
  if (per_rank.empty()) {
    throw_invalid_argument("common_microbatches: no ranks");
  }
  for (std::size_t r = 0; r < per_rank.size(); ++r) {
    if (per_rank[r] < 0) {
      throw_invalid_argument("common_microbatches: rank ", r, " reports ", per_rank[r],
                             " micro-batches");
    }
  }
  return *std::max_element(per_rank.begin(), per_rank.end());
}

/// Splits one rank's items into exactly m micro-batches, balancing `costs` (e.g. attention
/// FLOPs) while every micro-batch keeps its `tokens` within `cap`: orch::partition with the
/// tokens as second resource. Pass the same span twice to balance tokens themselves.
/// Complexity: as orch::partition. Guarantee: every micro-batch's tokens ≤ cap.
/// Throws: orch::invalid_argument (sizes differ, m ≤ 0, cap ≤ 0, negative values),
/// orch::infeasible (an item above the cap, Σ tokens above m · cap, or no split found —
/// the message names the cap and m).
[[nodiscard]] inline partition_result split_microbatches(std::span<const cost_t> costs,
                                                         std::span<const cost_t> tokens, cost_t cap,
                                                         index_t m,
                                                         const microbatch_options& options = {}) {
  if (costs.size() != tokens.size()) {
    throw_invalid_argument("split_microbatches: ", costs.size(), " costs but ", tokens.size(),
                           " token counts");
  }
  if (m <= 0 || m > INT32_MAX) {
    throw_invalid_argument("split_microbatches: micro-batch count must be in [1, 2^31), got ", m);
  }
  detail::check_tokens(tokens, cap, "split_microbatches");
  partition_options po;
  po.work_budget = options.work_budget;
  po.second_resource = tokens;
  po.second_capacity = cap;
  try {
    return partition(costs, static_cast<rank_t>(m), po);
  } catch (const infeasible& e) {
    // The inner message without its "partition: " prefix: the caller called split_microbatches.
    std::string why = e.what();
    why.erase(0, why.rfind("partition: ", 0) == 0 ? 11 : 0);
    throw_infeasible("split_microbatches: ", m, " micro-batches of at most ", cap,
                     " tokens: ", why);
  }
}

} // namespace orch
