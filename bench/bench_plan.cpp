// SPDX-License-Identifier: Apache-2.0
// Exchange plans, node-wise rearrangement, schedules and locality-aware balancing at the
// paper's scale (2,560 ranks on 320 nodes of 8), plus the fixed locality workload of issue 4
// (512 ranks, 8 per node, 16 lognormal items per rank, bytes proportional to length).
#include <orch/cost.hpp>
#include <orch/exchange/layout.hpp>
#include <orch/exchange/plan.hpp>
#include <orch/exchange/schedule.hpp>
#include <orch/locality.hpp>
#include <orch/partition/partition.hpp>
#include <orch/topology.hpp>

#include <support/generators.hpp>

#include <benchmark/benchmark.h>

#include <cstdint>
#include <stdexcept>
#include <string>
#include <vector>

namespace {

constexpr orch::rank_t paper_ranks = 2560;
constexpr orch::rank_t gpus_per_node = 8;
/// Bytes per token of a bf16 hidden state of width 4096 (what an LLM-phase exchange moves).
constexpr orch::bytes_t bytes_per_token = 8192;

/// One balancing step: items sampled `per_rank` per rank (rank r holds a contiguous block),
/// lognormal lengths (median ~1100 tokens, cap 32k), costs under `cost`, bins from
/// orch::partition (default options: the plain partitioner).
struct workload {
  orch::topology topo;
  std::vector<orch::length_t> lengths;
  std::vector<orch::cost_t> costs;
  std::vector<orch::bytes_t> bytes;
  std::vector<orch::rank_t> owner;
  orch::partition_result bins;
  orch::layout from;
  orch::layout to; // bins mapped to ranks in order (bin k on rank k)
};

template <class Cost>
workload make_workload(orch::rank_t ranks, std::size_t per_rank, Cost cost, std::uint64_t seed,
                       double sigma = 1.0) {
  workload w;
  w.topo = orch::topology::uniform(ranks, gpus_per_node);
  const std::size_t n = per_rank * static_cast<std::size_t>(ranks);
  w.lengths = orch::test::lognormal_lengths(seed, n, 7.0, sigma, 32768);
  w.costs = orch::compute_costs(cost, w.lengths);
  w.bytes.resize(n);
  w.owner.resize(n);
  for (std::size_t i = 0; i < n; ++i) {
    w.bytes[i] = w.lengths[i] * bytes_per_token;
    w.owner[i] = static_cast<orch::rank_t>(i / per_rank);
  }
  w.bins = orch::partition(w.costs, ranks);
  w.from = orch::layout::contiguous(std::vector<orch::index_t>(
      static_cast<std::size_t>(ranks), static_cast<orch::index_t>(per_rank)));
  w.to = orch::layout::from_assignment(w.bins.bin_of, ranks);
  return w;
}

const workload& paper_workload() {
  static const workload w = make_workload(paper_ranks, 32, orch::linear_cost{}, 20261129);
  return w;
}

void bench_make_plan(benchmark::State& state) {
  const auto& w = paper_workload();
  const auto check = orch::make_plan(w.from, w.to, w.bytes);
  if (check.total_bytes() <= 0 || check.items() != static_cast<orch::index_t>(w.bytes.size())) {
    throw std::logic_error("make_plan built a wrong plan");
  }
  for (auto _ : state) {
    auto p = orch::make_plan(w.from, w.to, w.bytes);
    benchmark::DoNotOptimize(p);
  }
  state.counters["items"] = static_cast<double>(check.items());
  state.counters["pairs"] = static_cast<double>(check.pair_count());
}
BENCHMARK(bench_make_plan)->Unit(benchmark::kMillisecond);

void bench_plan_hash(benchmark::State& state) {
  const auto& w = paper_workload();
  // make_plan computes its plan's hash while building (included in bench_make_plan); a
  // derived plan such as the inverse computes it on request, which is what this measures.
  const auto plan = orch::inverse(orch::make_plan(w.from, w.to, w.bytes));
  for (auto _ : state) {
    benchmark::DoNotOptimize(plan.hash());
  }
  state.counters["items"] = static_cast<double>(plan.items());
}
BENCHMARK(bench_plan_hash)->Unit(benchmark::kMillisecond);

void bench_inverse(benchmark::State& state) {
  const auto& w = paper_workload();
  const auto plan = orch::make_plan(w.from, w.to, w.bytes);
  for (auto _ : state) {
    auto back = orch::inverse(plan);
    benchmark::DoNotOptimize(back);
  }
  state.counters["pairs"] = static_cast<double>(plan.pair_count());
}
BENCHMARK(bench_inverse)->Unit(benchmark::kMillisecond);

void bench_layout_from_assignment(benchmark::State& state) {
  const auto& w = paper_workload();
  for (auto _ : state) {
    auto l = orch::layout::from_assignment(w.bins.bin_of, paper_ranks);
    benchmark::DoNotOptimize(l);
  }
  state.counters["items"] = static_cast<double>(w.bytes.size());
}
BENCHMARK(bench_layout_from_assignment)->Unit(benchmark::kMillisecond);

void bench_rearrange_bins(benchmark::State& state) {
  const auto& w = paper_workload();
  const auto check = orch::rearrange_bins(w.bins.bin_of, w.owner, w.bytes, w.topo);
  const auto identity = orch::measure_traffic(w.owner, w.bins.bin_of, w.bytes, w.topo);
  if (check.moves().inter_node > identity.inter_node) {
    throw std::logic_error("rearrangement worse than the identity map");
  }
  for (auto _ : state) {
    auto r = orch::rearrange_bins(w.bins.bin_of, w.owner, w.bytes, w.topo);
    benchmark::DoNotOptimize(r);
  }
  state.counters["nodes"] = static_cast<double>(w.topo.nodes());
  state.counters["identity_inter_share"] = identity.inter_node_share();
  state.counters["rearranged_inter_share"] = check.moves().inter_node_share();
}
BENCHMARK(bench_rearrange_bins)->Unit(benchmark::kMillisecond);

void bench_make_schedule(benchmark::State& state) {
  const auto& w = paper_workload();
  const auto plan = orch::make_plan(w.from, w.to, w.bytes);
  const auto check = orch::make_schedule(plan, w.topo);
  for (auto _ : state) {
    auto s = orch::make_schedule(plan, w.topo);
    benchmark::DoNotOptimize(s);
  }
  orch::rank_t flat_remote = 0;
  for (orch::rank_t r = 0; r < plan.ranks(); ++r) {
    orch::rank_t c = 0;
    for (const orch::rank_t p : plan.view(r).send_peers) {
      c += w.topo.node_of(p) != w.topo.node_of(r) ? 1 : 0;
    }
    flat_remote = c > flat_remote ? c : flat_remote;
  }
  state.counters["flat_max_remote_peers"] = static_cast<double>(flat_remote);
  state.counters["staged_max_remote_peers"] = static_cast<double>(check.max_remote_peers());
}
BENCHMARK(bench_make_schedule)->Unit(benchmark::kMillisecond);

void bench_locality_balance_paper(benchmark::State& state) {
  const auto& w = paper_workload();
  const auto check = orch::locality_balance(w.costs, w.owner, w.bytes, w.topo, w.bins.bin_of);
  for (auto _ : state) {
    auto r = orch::locality_balance(w.costs, w.owner, w.bytes, w.topo, w.bins.bin_of);
    benchmark::DoNotOptimize(r);
  }
  state.counters["inter_share"] = check.moved.inter_node_share();
  state.counters["inter_over_lb"] = static_cast<double>(check.moved.inter_node) /
                                    static_cast<double>(check.inter_node_lower_bound);
  state.SetLabel(std::string(orch::to_string(check.method)));
}
BENCHMARK(bench_locality_balance_paper)->Unit(benchmark::kMillisecond);

/// The fixed workload of issue 4: 512 ranks, 8 per node, 16 lognormal items per rank
/// (median 1097 tokens, sigma = arg 1 / 100, cap 32k), bytes proportional to length. Arg 0
/// picks the cost: 0 linear (tokens), 1 attention 4096·l + l². Times locality_balance; the
/// counters compare identity mapping (bin k on rank k), node-wise rearrangement and
/// locality-aware balancing of the same step.
void bench_fixed_workload(benchmark::State& state) {
  const double sigma = static_cast<double>(state.range(1)) / 100.0;
  const auto w = state.range(0) == 0
                     ? make_workload(512, 16, orch::linear_cost{}, 4242, sigma)
                     : make_workload(512, 16, orch::attention_cost{4096, 1, 0}, 4242, sigma);
  const auto identity = orch::measure_traffic(w.owner, w.bins.bin_of, w.bytes, w.topo);
  const auto rearranged = orch::rearrange_bins(w.bins.bin_of, w.owner, w.bytes, w.topo).moves();
  const auto local = orch::locality_balance(w.costs, w.owner, w.bytes, w.topo, w.bins.bin_of);
  if (local.max_load > local.target || local.moved.inter_node < local.inter_node_lower_bound) {
    throw std::logic_error("locality_balance broke its guarantees");
  }
  for (auto _ : state) {
    auto r = orch::locality_balance(w.costs, w.owner, w.bytes, w.topo, w.bins.bin_of);
    benchmark::DoNotOptimize(r);
  }
  const auto share = [](orch::bytes_t part, orch::bytes_t whole) {
    return static_cast<double>(part) / static_cast<double>(whole);
  };
  state.counters["identity_inter"] = identity.inter_node_share();
  state.counters["rearranged_inter"] = rearranged.inter_node_share();
  state.counters["local_inter"] = local.moved.inter_node_share();
  state.counters["local_intra"] = share(local.moved.intra_node, local.moved.total());
  state.counters["lb_inter"] = share(local.inter_node_lower_bound, local.moved.total());
  state.counters["local_over_lb"] =
      local.inter_node_lower_bound == 0
          ? (local.moved.inter_node == 0 ? 1.0 : 0.0)
          : share(local.moved.inter_node, local.inter_node_lower_bound);
  state.counters["plain_max_lb"] = w.bins.ratio_to_lower_bound();
  state.counters["local_max_lb"] = local.ratio_to_lower_bound();
  state.SetLabel(std::string(orch::to_string(local.method)));
}
BENCHMARK(bench_fixed_workload)
    ->ArgsProduct({{0, 1}, {50, 75, 100}})
    ->ArgNames({"attention", "sigma_pct"})
    ->Unit(benchmark::kMillisecond);

/// One rank extracting its own send and receive lists from the paper-scale plan.
void bench_rank_view(benchmark::State& state) {
  const auto& w = paper_workload();
  const auto plan = orch::make_plan(w.from, w.to, w.bytes);
  orch::rank_t r = 0;
  for (auto _ : state) {
    auto v = plan.view(r);
    benchmark::DoNotOptimize(v);
    r = (r + 97) % paper_ranks;
  }
  state.counters["items_per_rank"] = 32;
}
BENCHMARK(bench_rank_view)->Unit(benchmark::kMicrosecond);

} // namespace

BENCHMARK_MAIN();
