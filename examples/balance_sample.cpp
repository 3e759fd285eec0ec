// SPDX-License-Identifier: Apache-2.0
// Balances a bundled real length sample (512 hh-rlhf dialogues) over 16 data-parallel ranks:
// first as sampled (32 consecutive examples per rank), then with orch::lpt, and prints the
// balance of both under a transformer attention cost.
//
// Usage: example_balance_sample [lengths-file]   (default: data/hh_rlhf_tokens_512.txt,
// relative to the working directory: run it from the repository root, as ctest does)
#include <orch/orch.hpp>

#include <cstdio>
#include <fstream>
#include <iostream>
#include <string>
#include <vector>

namespace {

std::vector<orch::length_t> read_lengths(const std::string& path) {
  std::ifstream in(path);
  if (!in) {
    throw std::runtime_error("cannot open " + path);
  }
  std::vector<orch::length_t> lengths;
  std::string line;
  while (std::getline(in, line)) {
    if (!line.empty() && line[0] != '#') {
      lengths.push_back(std::stoll(line));
    }
  }
  return lengths;
}

void print_row(const char* name, const orch::balance_metrics& m) {
  std::printf("%-12s %14lld %14.0f %10.4f %12.4f %8.1f%%\n", name,
              static_cast<long long>(m.max_load), m.mean_load, m.max_over_mean,
              m.max_over_lower_bound, 100.0 * m.idle_fraction);
}

} // namespace

int main(int argc, char** argv) try {
  const std::string path = argc > 1 ? argv[1] : "data/hh_rlhf_tokens_512.txt";
  const auto lengths = read_lengths(path);
  constexpr orch::rank_t ranks = 16;

  // Cost of a sequence of l tokens: 4096·l (projections and MLP) + l² (attention scores),
  // the shape of a d_model = 4096 transformer layer in integer cost units.
  const auto costs = orch::compute_costs(orch::attention_cost{4096, 1, 0}, lengths);

  // As sampled: rank r holds examples [r·n/R, (r+1)·n/R).
  std::vector<orch::rank_t> sampled(costs.size());
  for (std::size_t i = 0; i < costs.size(); ++i) {
    sampled[i] = static_cast<orch::rank_t>(i * ranks / costs.size());
  }
  const auto balanced = orch::lpt(costs, ranks);

  std::printf("%zu examples from %s over %d ranks, attention cost 4096*l + l^2\n", lengths.size(),
              path.c_str(), ranks);
  std::printf("%-12s %14s %14s %10s %12s %9s\n", "assignment", "max load", "mean load", "max/mean",
              "max/bound", "idle");
  print_row("as sampled", orch::measure(costs, sampled, ranks));
  print_row("orch::lpt", orch::measure(costs, balanced.bin_of, ranks));
  std::printf("lower bound %lld, proven optimal: %s\n",
              static_cast<long long>(balanced.lower_bound), balanced.proven_optimal ? "yes" : "no");
  return 0;
} catch (const std::exception& e) {
  std::cerr << "error: " << e.what() << '\n';
  return 1;
}
