// SPDX-License-Identifier: Apache-2.0
#include "partition_runner.hpp"

#include "peer_algorithms.hpp"

#include <orch/partition/partition.hpp>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <vector>

namespace orch_bench {

bool is_peer_name(std::string_view name) {
  return peers::is_peer(name);
}

std::string peer_names_joined() {
  std::string out;
  for (const auto& p : peers::peer_list()) {
    if (!out.empty()) {
      out += ", ";
    }
    out += p.name;
  }
  return out;
}

run_outcome run_algorithm(const run_request& request, std::span<const orch::cost_t> costs,
                          orch::rank_t bins, int repeat) {
  const bool peer = peers::is_peer(request.algorithm);
  orch::partition_options options;
  if (!peer) {
    options.algorithm = orch::parse_partition_algorithm(request.algorithm);
  }
  if (request.budget_given) {
    options.work_budget = request.work_budget;
  }
  options.equal_counts = request.equal_counts;
  options.max_items_per_bin = request.max_items_per_bin;
  std::vector<double> times;
  run_outcome outcome;
  for (int i = 0; i < std::max(repeat, 1); ++i) {
    const auto start = std::chrono::steady_clock::now();
    outcome.result = peer ? peers::run_peer(request.algorithm, costs, bins)
                          : orch::partition(costs, bins, options);
    const auto stop = std::chrono::steady_clock::now();
    times.push_back(std::chrono::duration<double, std::milli>(stop - start).count());
  }
  std::sort(times.begin(), times.end());
  const std::size_t m = times.size();
  outcome.median_ms = m % 2 == 1 ? times[m / 2] : 0.5 * (times[m / 2 - 1] + times[m / 2]);
  outcome.max_ms = times.back();
  return outcome;
}

std::string json_escape(std::string_view text) {
  std::string out;
  for (const char c : text) {
    if (c == '"' || c == '\\') {
      out += '\\';
      out += c;
    } else if (static_cast<unsigned char>(c) < 0x20) {
      char buf[8];
      std::snprintf(buf, sizeof buf, "\\u%04x", static_cast<unsigned>(c));
      out += buf;
    } else {
      out += c;
    }
  }
  return out;
}

} // namespace orch_bench
