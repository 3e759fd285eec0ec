// SPDX-License-Identifier: Apache-2.0
// orch's partitioners against the peers' balancers (bench/peers/), on the same instances in
// the same run: lognormal, bimodal and heavy-tailed token counts and verl's FLOPs proxy, at
// 8,192 items / 256 ranks and 81,920 items / 2,560 ranks. Counters: ratio_to_lower_bound
// (max / max(⌈Σ/k⌉, max c), the same bound for every algorithm), max_over_mean, and for
// equal-count algorithms ratio_to_count_bound (max over a bound that knows every rank holds
// n/k items, see count_bound). Reference in the same run: std::sort of as many 64-bit keys.
#include "peers/peers.hpp"
#include "peers/workloads.hpp"

#include <orch/detail/primitives/checked.hpp>
#include <orch/partition/lpt.hpp>
#include <orch/partition/partition.hpp>
#include <orch/quality.hpp>

#include <benchmark/benchmark.h>

#include <algorithm>
#include <cstdint>
#include <functional>
#include <limits>
#include <map>
#include <random>
#include <stdexcept>
#include <string>
#include <utility>
#include <vector>

namespace {

using orch::cost_t;
using orch::rank_t;
using orch_bench::peers::workload;

constexpr std::uint64_t instance_seed = 20260301;

/// The instances, built once (outside every timed loop) and shared by all algorithms.
const std::vector<cost_t>& instance(workload w, std::size_t n) {
  static std::map<std::pair<int, std::size_t>, std::vector<cost_t>> cache;
  const auto key = std::make_pair(static_cast<int>(w), n);
  auto it = cache.find(key);
  if (it == cache.end()) {
    it = cache.emplace(key, orch_bench::peers::workload_costs(w, n, instance_seed)).first;
  }
  return it->second;
}

/// A lower bound for equal counts (every bin holds exactly c = n/k items). Take the j largest
/// items and the m bins that hold them (⌈j/c⌉ ≤ m ≤ min(j, k)): those bins hold m·c items, the
/// j largest and m·c − j others, each at least as large as the smallest ones, so some bin
/// carries at least (Σ j largest + Σ (m·c − j) smallest) / m. Minimised over m (unknown) and
/// maximised over j ≤ 2048 (the gain fades beyond the heavy items). j = 1 is the simple bound
/// "largest item + c − 1 smallest". Computed outside the timing.
cost_t count_bound(const std::vector<cost_t>& costs, rank_t bins) {
  const cost_t plain = orch::lower_bound(costs, bins);
  const auto k = static_cast<std::size_t>(bins);
  const std::size_t n = costs.size();
  const std::size_t c = n / k;
  if (c == 0 || n % k != 0) {
    return plain;
  }
  std::vector<cost_t> asc = costs;
  std::sort(asc.begin(), asc.end());
  std::vector<cost_t> smallest(n + 1, 0); // prefix sums, ascending
  std::vector<cost_t> largest(n + 1, 0);  // prefix sums, descending
  for (std::size_t i = 0; i < n; ++i) {
    smallest[i + 1] = smallest[i] + asc[i];
    largest[i + 1] = largest[i] + asc[n - 1 - i];
  }
  cost_t best = plain;
  for (std::size_t j = 1; j <= std::min<std::size_t>(n, 2048); ++j) {
    cost_t weakest = std::numeric_limits<cost_t>::max();
    for (std::size_t m = (j + c - 1) / c; m <= std::min(j, k); ++m) {
      const cost_t load = largest[j] + smallest[m * c - j];
      weakest = std::min(weakest, orch::detail::ceil_div(load, static_cast<cost_t>(m)));
    }
    best = std::max(best, weakest);
  }
  return best;
}

/// One competitor: a name and how to run it.
struct competitor {
  std::string name;
  bool equal_counts;
  std::function<orch::partition_result(const std::vector<cost_t>&, rank_t)> run;
};

std::vector<competitor> competitors() {
  std::vector<competitor> out;
  out.push_back({"orch_partition", false,
                 [](const std::vector<cost_t>& c, rank_t k) { return orch::partition(c, k); }});
  out.push_back({"orch_partition_equal", true, [](const std::vector<cost_t>& c, rank_t k) {
                   orch::partition_options o;
                   o.equal_counts = true;
                   return orch::partition(c, k, o);
                 }});
  out.push_back(
      {"orch_lpt", false, [](const std::vector<cost_t>& c, rank_t k) { return orch::lpt(c, k); }});
  for (const auto& p : orch_bench::peers::peer_list()) {
    const std::string name(p.name);
    out.push_back({name, p.equal_counts, [name](const std::vector<cost_t>& c, rank_t k) {
                     return orch_bench::peers::run_peer(name, c, k);
                   }});
  }
  return out;
}

void run_one(benchmark::State& state, const competitor& who, workload w, std::size_t n,
             rank_t bins) {
  const auto& costs = instance(w, n);
  const auto check = who.run(costs, bins); // validated once, outside the timing
  if (check.bin_of.size() != costs.size() ||
      orch::bin_loads(costs, check.bin_of, bins) != check.loads) {
    throw std::logic_error(who.name + " returned an inconsistent assignment");
  }
  for (auto _ : state) {
    auto r = who.run(costs, bins);
    benchmark::DoNotOptimize(r.bin_of.data());
  }
  const cost_t plain = orch::lower_bound(costs, bins);
  state.counters["items"] = static_cast<double>(n);
  state.counters["bins"] = static_cast<double>(bins);
  state.counters["ratio_to_lower_bound"] =
      static_cast<double>(check.max_load) / static_cast<double>(plain);
  state.counters["max_over_mean"] = orch::measure_loads(check.loads).max_over_mean;
  if (who.equal_counts) {
    state.counters["ratio_to_count_bound"] =
        static_cast<double>(check.max_load) / static_cast<double>(count_bound(costs, bins));
  }
}

void bench_std_sort_keys(benchmark::State& state) {
  const auto n = static_cast<std::size_t>(state.range(0));
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

void register_all() {
  struct size {
    std::size_t n;
    rank_t bins;
  };
  // Debug builds (the ctest smoke run) keep to the small size: the large one runs the peers'
  // O(n · k) argmin scans, which take seconds without optimisation.
#ifdef NDEBUG
  const std::vector<size> sizes{{8192, 256}, {81920, 2560}};
#else
  const std::vector<size> sizes{{8192, 256}};
#endif
  const std::vector<workload> workloads{workload::lognormal, workload::bimodal, workload::heavy,
                                        workload::verl_workload};
  static const auto all = competitors();
  for (const auto w : workloads) {
    for (const auto& s : sizes) {
      for (const auto& who : all) {
        const std::string name = "peers/" + std::string(orch_bench::peers::workload_name(w)) + "/" +
                                 std::to_string(s.n) + "x" + std::to_string(s.bins) + "/" +
                                 who.name;
        benchmark::RegisterBenchmark(name.c_str(), [&who, w, s](benchmark::State& st) {
          run_one(st, who, w, s.n, s.bins);
        })->Unit(benchmark::kMillisecond);
      }
    }
  }
  for (const auto& s : sizes) {
    benchmark::RegisterBenchmark(("std_sort_keys/" + std::to_string(s.n)).c_str(),
                                 bench_std_sort_keys)
        ->Arg(static_cast<std::int64_t>(s.n))
        ->Unit(benchmark::kMillisecond);
  }
}

} // namespace

int main(int argc, char** argv) {
  register_all();
  benchmark::Initialize(&argc, argv);
  if (benchmark::ReportUnrecognizedArguments(argc, argv)) {
    return 1;
  }
  benchmark::RunSpecifiedBenchmarks();
  benchmark::Shutdown();
  return 0;
}
