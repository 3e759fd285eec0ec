// SPDX-License-Identifier: Apache-2.0
// Runs orch's partitioners or a peer by name, timed: shared by `orch-bench partition` and
// `orch-bench pcmax-study`.
#pragma once

#include <orch/partition/result.hpp>
#include <orch/types.hpp>

#include <cstdint>
#include <span>
#include <string>
#include <string_view>

namespace orch_bench {

/// What to run: an orch algorithm name (orch::parse_partition_algorithm, then orch::partition)
/// or a peer's name.
struct run_request {
  std::string algorithm = "auto";
  std::int64_t work_budget = 0;
  bool budget_given = false; ///< false: orch's default budget
  bool equal_counts = false;
  std::int64_t max_items_per_bin = 0; ///< 0: no limit
};

/// The result of the last run and the median / largest wall time over all runs.
struct run_outcome {
  orch::partition_result result;
  double median_ms = 0;
  double max_ms = 0;
};

/// True when `name` is one of the peers (bench/peers/).
[[nodiscard]] bool is_peer_name(std::string_view name);

/// The peers' names, comma-separated, for help texts.
[[nodiscard]] std::string peer_names_joined();

/// Runs the request `repeat` times (≥ 1) on the same input. Throws what orch::partition or the
/// peer throws (orch::invalid_argument for an unknown algorithm name).
[[nodiscard]] run_outcome run_algorithm(const run_request& request,
                                        std::span<const orch::cost_t> costs, orch::rank_t bins,
                                        int repeat = 1);

/// `text` with the characters JSON strings must escape escaped.
[[nodiscard]] std::string json_escape(std::string_view text);

} // namespace orch_bench
