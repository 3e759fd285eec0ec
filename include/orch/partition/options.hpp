// SPDX-License-Identifier: Apache-2.0
/// orch::partition_options, the options of orch::partition, on their own (so that
/// orch/orchestrate/step_plan.hpp can hold them without the partitioners;
/// orch/partition/partition.hpp includes this header).
#pragma once

#include <orch/config.hpp>
#include <orch/partition/algorithm.hpp>
#include <orch/types.hpp>

#include <cstdint>
#include <span>

namespace orch {

/// Options of orch::partition. Every field has a safe default; see docs/partition.md.
struct partition_options {
  /// automatic (chain by regime, below), lpt, lpt_ls (LPT then local search), kk, multifit,
  /// subset_sum (the paper's reduction), exact (heuristic starts, local search, then branch
  /// and bound with the whole budget). Constraints and speeds are honoured by automatic, lpt
  /// and lpt_ls; the others reject them. Tools parse names with parse_partition_algorithm.
  partition_algorithm algorithm = partition_algorithm::automatic;
  /// Work units for the searches (local-search candidates, search nodes, differencing and
  /// subset-sum steps). Decides where a search stops, so every rank stops at the same point.
  /// The default keeps a few-items-per-bin instance within about 15 ms on a slow core.
  std::int64_t work_budget = 500'000;
  /// Opt-in wall-clock limit for OFFLINE use only (0: none): results then depend on the
  /// machine, so never use it where ranks must agree.
  double time_limit_ms = 0;
  index_t max_items_per_bin = 0; ///< 0: unlimited
  bool equal_counts = false;     ///< item counts per bin differ by at most one
  /// Per-item second resource (e.g. activation bytes or tokens); items are never split.
  std::span<const cost_t> second_resource = {};
  cost_t second_capacity = 0;          ///< per-bin capacity of the second resource (iff given)
  std::span<const cost_t> speeds = {}; ///< per-bin integer speeds (empty: all equal)
  /// Many items per bin (n ≥ 8k) only: local search stops once the largest bin is within
  /// this many millionths of the lower bound (default 10, i.e. 0.001 %: far below the noise
  /// of step times, and it keeps 300k items within tens of milliseconds). 0: search on to
  /// the bound. Integer, so every rank stops at the same point.
  std::int64_t tolerance_ppm = 10;
  /// Keep-together groups (empty: none): one group id per item, items sharing an id ≥ 0 land
  /// in one bin (e.g. a prompt's sampled responses); no_group (−1) leaves an item alone. The
  /// groups are partitioned as super-items (cost Σ, second resource Σ, first appearance
  /// order); max_items_per_bin still counts items, lower_bound is the grouped instance's.
  std::span<const index_t> groups = {};
};

} // namespace orch
