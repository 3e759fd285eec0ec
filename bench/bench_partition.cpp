// SPDX-License-Identifier: Apache-2.0
// Partitioner speed and quality at the paper's scale (2,560 ranks), lognormal lengths,
// attention cost. Reference point in the same run: std::sort of as many 64-bit keys.
#include <orch/cost.hpp>
#include <orch/partition/lpt.hpp>

#include <support/generators.hpp>

#include <benchmark/benchmark.h>

#include <algorithm>
#include <cstdint>
#include <stdexcept>
#include <vector>

namespace {

constexpr orch::rank_t paper_ranks = 2560;

/// Item costs for `n` lognormal lengths (median ~1100 tokens, heavy tail, cap 32k) under a
/// transformer attention cost; fixed seed so every run balances the same instance.
std::vector<orch::cost_t> workload(std::size_t n) {
  const auto lengths = orch::test::lognormal_lengths(20261129, n, 7.0, 1.0, 32768);
  return orch::compute_costs(orch::attention_cost{4096, 1, 0}, lengths);
}

void bench_lpt(benchmark::State& state) {
  const auto per_rank = static_cast<std::size_t>(state.range(0));
  const auto costs = workload(per_rank * paper_ranks);
  const auto check = orch::lpt(costs, paper_ranks); // validated once, outside the timing
  if (check.bin_of.size() != costs.size()) {
    throw std::logic_error("lpt returned a wrong-sized assignment");
  }
  for (auto _ : state) {
    auto r = orch::lpt(costs, paper_ranks);
    benchmark::DoNotOptimize(r.bin_of.data());
  }
  state.counters["items"] = static_cast<double>(costs.size());
  state.counters["ratio_to_lower_bound"] = check.ratio_to_lower_bound();
  state.counters["max_over_mean"] = orch::measure_loads(check.loads).max_over_mean;
}
BENCHMARK(bench_lpt)->Arg(8)->Arg(32)->Arg(128)->Unit(benchmark::kMillisecond);

/// The yardstick of the foundation issue: std::sort of n random 64-bit keys.
void bench_std_sort_keys(benchmark::State& state) {
  const auto n = static_cast<std::size_t>(state.range(0)) * paper_ranks;
  std::mt19937_64 rng(7);
  std::vector<std::uint64_t> keys(n);
  for (auto& k : keys)
    k = rng();
  std::vector<std::uint64_t> work(n);
  for (auto _ : state) {
    state.PauseTiming();
    work = keys;
    state.ResumeTiming();
    std::sort(work.begin(), work.end());
    benchmark::DoNotOptimize(work.data());
  }
  state.counters["items"] = static_cast<double>(n);
}
BENCHMARK(bench_std_sort_keys)->Arg(8)->Arg(32)->Arg(128)->Unit(benchmark::kMillisecond);

} // namespace

BENCHMARK_MAIN();
