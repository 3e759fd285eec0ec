// SPDX-License-Identifier: Apache-2.0
// Partitioner speed and quality. Paper scale (2,560 ranks) with lognormal lengths under an
// attention cost, the same sizes for other length shapes, few items per bin, constraints,
// speeds, padded batches and micro-batches. Reference point in the same run: std::sort of as
// many 64-bit keys. Every benchmark validates its result once, outside the timed loop, and
// reports ratio_to_lower_bound (max / proven lower bound) beside the time.
#include <orch/cost.hpp>
#include <orch/partition/exact.hpp>
#include <orch/partition/groups.hpp>
#include <orch/partition/kk.hpp>
#include <orch/partition/local_search.hpp>
#include <orch/partition/lpt.hpp>
#include <orch/partition/lpt_speeds.hpp>
#include <orch/partition/microbatch.hpp>
#include <orch/partition/multifit.hpp>
#include <orch/partition/padded.hpp>
#include <orch/partition/partition.hpp>
#include <orch/partition/subset_sum.hpp>

#include <support/generators.hpp>

#include <benchmark/benchmark.h>

#include <algorithm>
#include <cstdint>
#include <stdexcept>
#include <string>
#include <vector>

namespace {

constexpr orch::rank_t paper_ranks = 2560;

/// Item costs for `n` lognormal lengths (median ~1100 tokens, heavy tail, cap 32k) under a
/// transformer attention cost; fixed seed so every run balances the same instance.
std::vector<orch::cost_t> workload(std::size_t n) {
  const auto lengths = orch::test::lognormal_lengths(20261129, n, 7.0, 1.0, 32768);
  return orch::compute_costs(orch::attention_cost{4096, 1, 0}, lengths);
}

/// Other length shapes for the quality table: 0 uniform costs [1, 1000], 1 bimodal (80 %
/// short), 2 lognormal token counts, 3 lognormal lengths under an attention cost.
std::vector<orch::cost_t> shaped(int shape, std::size_t n) {
  switch (shape) {
  case 0:
    return orch::test::uniform_costs(1, n, 1, 1000);
  case 1:
    return orch::test::bimodal_costs(2, n, 0.8, 100, 2000, 8000, 32000);
  case 2: {
    const auto l = orch::test::lognormal_lengths(3, n, 7.0, 1.0, 32768);
    return {l.begin(), l.end()};
  }
  default: {
    const auto l = orch::test::lognormal_lengths(4, n, 6.0, 0.7, 32768);
    return orch::compute_costs(orch::attention_cost{4096, 1, 0}, l);
  }
  }
}

const char* shape_name(int shape) {
  static const char* names[] = {"uniform", "bimodal", "lognormal_tokens", "lognormal_attention"};
  return names[shape];
}

void validate(const orch::partition_result& r, std::size_t n, const char* what) {
  if (r.bin_of.size() != n) {
    throw std::logic_error(std::string(what) + " returned a wrong-sized assignment");
  }
}

void report(benchmark::State& state, const orch::partition_result& r, std::size_t n) {
  state.counters["items"] = static_cast<double>(n);
  state.counters["ratio_to_lower_bound"] = r.ratio_to_lower_bound();
  state.counters["max_over_mean"] = orch::measure_loads(r.loads).max_over_mean;
  state.counters["work"] = static_cast<double>(r.work);
  state.counters["proven_optimal"] = r.proven_optimal ? 1 : 0;
}

void bench_lpt(benchmark::State& state) {
  const auto per_rank = static_cast<std::size_t>(state.range(0));
  const auto costs = workload(per_rank * paper_ranks);
  const auto check = orch::lpt(costs, paper_ranks); // validated once, outside the timing
  validate(check, costs.size(), "lpt");
  for (auto _ : state) {
    auto r = orch::lpt(costs, paper_ranks);
    benchmark::DoNotOptimize(r.bin_of.data());
  }
  report(state, check, costs.size());
}
BENCHMARK(bench_lpt)->Arg(8)->Arg(32)->Arg(128)->Unit(benchmark::kMillisecond);

/// The entry point with default options on the paper-scale workload.
void bench_partition_default(benchmark::State& state) {
  const auto per_rank = static_cast<std::size_t>(state.range(0));
  const auto costs = workload(per_rank * paper_ranks);
  const auto check = orch::partition(costs, paper_ranks);
  validate(check, costs.size(), "partition");
  for (auto _ : state) {
    auto r = orch::partition(costs, paper_ranks);
    benchmark::DoNotOptimize(r.bin_of.data());
  }
  report(state, check, costs.size());
  state.SetLabel(check.algorithm);
}
BENCHMARK(bench_partition_default)->Arg(8)->Arg(32)->Arg(128)->Unit(benchmark::kMillisecond);

/// The yardstick of the foundation issue: std::sort of n random 64-bit keys.
void bench_std_sort_keys(benchmark::State& state) {
  const auto n = static_cast<std::size_t>(state.range(0)) * paper_ranks;
  std::mt19937_64 rng(7);
  std::vector<std::uint64_t> keys(n);
  for (auto& k : keys) {
    k = rng();
  }
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

/// Quality and time of the default on other length shapes, many items per bin (n/k ≥ 8).
/// Args: shape, items per rank.
void bench_partition_shapes(benchmark::State& state) {
  const int shape = static_cast<int>(state.range(0));
  const auto per_rank = static_cast<std::size_t>(state.range(1));
  const auto costs = shaped(shape, per_rank * paper_ranks);
  const auto check = orch::partition(costs, paper_ranks);
  validate(check, costs.size(), "partition");
  for (auto _ : state) {
    auto r = orch::partition(costs, paper_ranks);
    benchmark::DoNotOptimize(r.bin_of.data());
  }
  report(state, check, costs.size());
  state.counters["lpt_ratio"] = orch::lpt(costs, paper_ranks).ratio_to_lower_bound();
  state.SetLabel(std::string(shape_name(shape)) + " " + check.algorithm);
}
BENCHMARK(bench_partition_shapes)
    ->ArgsProduct({{0, 1, 2, 3}, {8, 32, 128}})
    ->Unit(benchmark::kMillisecond);

/// Equal item counts on heavy-tailed token counts (lognormal σ = 1.5): 1024 items, 64 ranks.
void bench_equal_counts(benchmark::State& state) {
  const auto l = orch::test::lognormal_lengths(static_cast<std::uint64_t>(state.range(0)), 1024,
                                               7.0, 1.5, 65536);
  const std::vector<orch::cost_t> costs(l.begin(), l.end());
  orch::partition_options o;
  o.equal_counts = true;
  const auto check = orch::partition(costs, 64, o);
  validate(check, costs.size(), "partition(equal_counts)");
  for (auto _ : state) {
    auto r = orch::partition(costs, 64, o);
    benchmark::DoNotOptimize(r.bin_of.data());
  }
  report(state, check, costs.size());
}
BENCHMARK(bench_equal_counts)->Arg(1)->Arg(2)->Arg(3)->Unit(benchmark::kMillisecond);

/// Keep-together groups (an RL step: a prompt's sampled responses stay on one rank): 2,560
/// ranks, 81,920 items in groups of arg 0 (8 or 4) items; arg 1 picks the costs: 0 the paper
/// workload (attention cost), 1 lognormal token counts (linear cost). Times contraction,
/// partition of the groups and expansion; ratio_to_lower_bound is against the grouped bound
/// max(⌈Σ/k⌉, largest group), ungrouped_ratio against the plain one (the price of groups).
void bench_partition_groups(benchmark::State& state) {
  const auto size = static_cast<std::size_t>(state.range(0));
  const auto n = 32 * static_cast<std::size_t>(paper_ranks);
  const auto costs = state.range(1) == 0 ? workload(n) : shaped(2, n);
  std::vector<orch::index_t> groups(costs.size());
  for (std::size_t i = 0; i < groups.size(); ++i) {
    groups[i] = static_cast<orch::index_t>(i / size);
  }
  orch::partition_options o;
  o.groups = groups;
  const auto check = orch::partition(costs, paper_ranks, o);
  validate(check, costs.size(), "partition(groups)");
  for (std::size_t i = 0; i < groups.size(); ++i) {
    if (check.bin_of[i] != check.bin_of[i - i % size]) {
      throw std::logic_error("partition(groups) split a group");
    }
  }
  for (auto _ : state) {
    auto r = orch::partition(costs, paper_ranks, o);
    benchmark::DoNotOptimize(r.bin_of.data());
  }
  report(state, check, costs.size());
  state.counters["groups"] = static_cast<double>(costs.size() / size);
  state.counters["ungrouped_ratio"] = static_cast<double>(check.max_load) /
                                      static_cast<double>(orch::lower_bound(costs, paper_ranks));
  state.SetLabel(std::string(state.range(1) == 0 ? "attention " : "tokens ") + check.algorithm);
}
BENCHMARK(bench_partition_groups)
    ->ArgsProduct({{8, 4}, {0, 1}})
    ->ArgNames({"size", "tokens"})
    ->Unit(benchmark::kMillisecond);

/// Few items per bin: uniform costs [1, 10^4], k bins, n/k items each. Args: k, n/k.
template <class Run>
void few_items(benchmark::State& state, Run run) {
  const auto k = static_cast<orch::rank_t>(state.range(0));
  const auto n = static_cast<std::size_t>(state.range(1)) * static_cast<std::size_t>(k);
  const auto costs = orch::test::uniform_costs(static_cast<std::uint64_t>(n * 31 + 7), n, 1, 10000);
  const auto check = run(costs, k);
  validate(check, costs.size(), "few-items partitioner");
  for (auto _ : state) {
    auto r = run(costs, k);
    benchmark::DoNotOptimize(r.bin_of.data());
  }
  report(state, check, costs.size());
  state.SetLabel(check.algorithm);
}

void bench_few_auto(benchmark::State& state) {
  few_items(state, [](const auto& c, orch::rank_t k) { return orch::partition(c, k); });
}
void bench_few_lpt(benchmark::State& state) {
  few_items(state, [](const auto& c, orch::rank_t k) { return orch::lpt(c, k); });
}
void bench_few_kk(benchmark::State& state) {
  few_items(state, [](const auto& c, orch::rank_t k) { return orch::karmarkar_karp(c, k); });
}
void bench_few_multifit(benchmark::State& state) {
  few_items(state, [](const auto& c, orch::rank_t k) { return orch::multifit(c, k); });
}
void bench_few_subset_sum(benchmark::State& state) {
  few_items(state, [](const auto& c, orch::rank_t k) { return orch::subset_sum_partition(c, k); });
}
void bench_few_local_search(benchmark::State& state) {
  few_items(state, [](const auto& c, orch::rank_t k) {
    return orch::local_search(c, k, orch::karmarkar_karp(c, k).bin_of);
  });
}
void bench_few_exact(benchmark::State& state) {
  few_items(state, [](const auto& c, orch::rank_t k) { return orch::exact(c, k); });
}
#define ORCH_FEW_ARGS ->ArgsProduct({{10, 50}, {2, 3, 5}})->Unit(benchmark::kMillisecond)
BENCHMARK(bench_few_auto) ORCH_FEW_ARGS;
BENCHMARK(bench_few_lpt) ORCH_FEW_ARGS;
BENCHMARK(bench_few_kk) ORCH_FEW_ARGS;
BENCHMARK(bench_few_multifit) ORCH_FEW_ARGS;
BENCHMARK(bench_few_subset_sum) ORCH_FEW_ARGS;
BENCHMARK(bench_few_local_search) ORCH_FEW_ARGS;
BENCHMARK(bench_few_exact) ORCH_FEW_ARGS;
#undef ORCH_FEW_ARGS

/// Karmarkar–Karp at the scale where frameworks call a Python version: 8,192 items, 256 bins.
void bench_kk_8192_256(benchmark::State& state) {
  const auto costs = workload(8192);
  const auto check = orch::karmarkar_karp(costs, 256);
  validate(check, costs.size(), "karmarkar_karp");
  for (auto _ : state) {
    auto r = orch::karmarkar_karp(costs, 256);
    benchmark::DoNotOptimize(r.bin_of.data());
  }
  report(state, check, costs.size());
}
BENCHMARK(bench_kk_8192_256)->Unit(benchmark::kMillisecond);

/// Straggler-aware balancing: 2,560 ranks, every 16th at 3/4 speed.
void bench_lpt_speeds(benchmark::State& state) {
  const auto per_rank = static_cast<std::size_t>(state.range(0));
  const auto costs = workload(per_rank * paper_ranks);
  std::vector<orch::cost_t> speeds(paper_ranks, 4);
  for (std::size_t r = 0; r < speeds.size(); r += 16) {
    speeds[r] = 3;
  }
  const auto check = orch::lpt_speeds(costs, speeds);
  validate(check, costs.size(), "lpt_speeds");
  for (auto _ : state) {
    auto r = orch::lpt_speeds(costs, speeds);
    benchmark::DoNotOptimize(r.bin_of.data());
  }
  report(state, check, costs.size());
  state.counters["time_ratio"] = check.max_time / check.time_lower_bound;
}
BENCHMARK(bench_lpt_speeds)->Arg(8)->Arg(32)->Unit(benchmark::kMillisecond);

/// Padded batches (count × longest), exact, 2,560 ranks.
void bench_padded(benchmark::State& state) {
  const auto per_rank = static_cast<std::size_t>(state.range(0));
  const auto lengths = orch::test::lognormal_lengths(5, per_rank * paper_ranks, 7.0, 1.0, 32768);
  const bool equal = state.range(1) != 0;
  const auto check = orch::padded_partition(lengths, paper_ranks, equal);
  for (auto _ : state) {
    auto r = orch::padded_partition(lengths, paper_ranks, equal);
    benchmark::DoNotOptimize(r.bin_of.data());
  }
  state.counters["items"] = static_cast<double>(lengths.size());
  state.counters["max_padded"] = static_cast<double>(check.max_padded);
}
BENCHMARK(bench_padded)->ArgsProduct({{8, 32}, {0, 1}})->Unit(benchmark::kMillisecond);

/// One rank's micro-batches: 64 samples, token cap 16k, balanced by attention cost.
void bench_microbatches(benchmark::State& state) {
  const auto tokens_l = orch::test::lognormal_lengths(6, 64, 7.0, 1.0, 16384);
  const std::vector<orch::cost_t> tokens(tokens_l.begin(), tokens_l.end());
  const auto flops = orch::compute_costs(orch::attention_cost{4096, 1, 0}, tokens_l);
  const orch::cost_t cap = 16384;
  const auto m = orch::min_microbatches(tokens, cap);
  const auto check = orch::split_microbatches(flops, tokens, cap, m);
  validate(check, tokens.size(), "split_microbatches");
  for (auto _ : state) {
    const auto mm = orch::min_microbatches(tokens, cap);
    auto r = orch::split_microbatches(flops, tokens, cap, mm);
    benchmark::DoNotOptimize(r.bin_of.data());
  }
  report(state, check, tokens.size());
  state.counters["microbatches"] = static_cast<double>(m);
}
BENCHMARK(bench_microbatches)->Unit(benchmark::kMillisecond);

} // namespace

BENCHMARK_MAIN();
