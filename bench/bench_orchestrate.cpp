// SPDX-License-Identifier: Apache-2.0
// The whole step plan at the paper's scale: 2,560 ranks (320 nodes × 8) × 32 examples, about
// 1.5 images and 0.3 audio clips per example; every strategy. Counters: per-phase max/lower
// bound, the composed feature route vs two hops, inter-node bytes against their lower bounds,
// the growth of the peak resident set, page faults per step, and the plan time over the time
// of std::sort on 81,920 64-bit keys (the reference the plan-time targets are stated in,
// docs/benchmarks.md); beside it, the heap bytes of the returned plan and the time of writing
// that many bytes once (memset), the memory floor of any step that returns such a plan.
// bench_orchestrate_training_loop plans as a training loop does, each plan replacing the
// previous one.
#include <orch/orchestrate/orchestrate.hpp>

#include <support/generators.hpp>

#include <benchmark/benchmark.h>

#include <malloc.h>
#include <sys/resource.h>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdint>
#include <cstring>
#include <optional>
#include <random>
#include <stdexcept>
#include <string_view>
#include <vector>

namespace {

/// The reference keys: 81,920 (2,560 ranks × 32 examples) seeded 64-bit words.
std::vector<std::uint64_t> reference_keys() {
  std::mt19937_64 rng(2026);
  std::vector<std::uint64_t> keys(81'920);
  for (auto& k : keys) {
    k = rng();
  }
  return keys;
}

/// Median wall time in ms of std::sort on a fresh copy of the reference keys (copy not
/// timed), over `runs` runs: the unit of the plan-time targets, measured in the same process
/// and moment as the plan it is compared with.
double sort_reference_ms(int runs) {
  const auto keys = reference_keys();
  std::vector<double> ms;
  std::vector<std::uint64_t> work;
  for (int r = 0; r < runs; ++r) {
    work = keys;
    const auto start = std::chrono::steady_clock::now();
    std::sort(work.begin(), work.end());
    const auto stop = std::chrono::steady_clock::now();
    benchmark::DoNotOptimize(work.data());
    ms.push_back(std::chrono::duration<double, std::milli>(stop - start).count());
  }
  std::nth_element(ms.begin(), ms.begin() + runs / 2, ms.end());
  return ms[static_cast<std::size_t>(runs / 2)];
}

/// Peak resident set of this process so far, in MiB (Linux: ru_maxrss is in KiB).
double peak_rss_mib() {
  rusage u{};
  getrusage(RUSAGE_SELF, &u);
  return static_cast<double>(u.ru_maxrss) / 1024.0;
}

/// Minor page faults of this process so far: pages the kernel handed it (and zeroed), which is
/// what a step pays when the allocator gave the previous step's memory back.
long minor_page_faults() {
  rusage u{};
  getrusage(RUSAGE_SELF, &u);
  return u.ru_minflt;
}

/// std::sort of the 81,920 reference keys (the copy into the work buffer is timed too: about
/// 1 % of the sort).
void bench_reference_sort(benchmark::State& state) {
  const auto keys = reference_keys();
  std::vector<std::uint64_t> work(keys.size());
  for (auto _ : state) {
    std::copy(keys.begin(), keys.end(), work.begin());
    std::sort(work.begin(), work.end());
    benchmark::DoNotOptimize(work.data());
  }
}
BENCHMARK(bench_reference_sort)->Unit(benchmark::kMillisecond)->UseRealTime();

/// A ViT (14-px patches, 2×2 merge), a Whisper-style audio encoder (100 frames/s, ÷2) and a
/// 7B-class LLM; costs in units of 10^6 FLOPs (2·params per token, 4·d·layers per token pair).
orch::model_description bench_model() {
  orch::model_description m;
  m.encoders.push_back(
      {"vision", {"image", "video"}, {1300, 2, 0}, 4, 0, 0, 14 * 14 * 3 * 2, 3584 * 2});
  m.encoders.push_back({"audio", {"audio"}, {1300, 1, 0}, 4, 0, 0, 128 * 2, 3584 * 2});
  m.llm.cost = {15000, 1, 0};
  m.llm.text_bytes_per_token = 8;
  return m;
}

orch::item_table bench_table(orch::rank_t ranks, orch::index_t per_rank, std::uint64_t seed) {
  std::mt19937_64 rng(seed);
  orch::item_table t;
  std::vector<orch::media_spec> media;
  for (orch::rank_t r = 0; r < ranks; ++r) {
    for (orch::index_t i = 0; i < per_rank; ++i) {
      media.clear();
      const auto text =
          std::max<orch::length_t>(8, std::llround(std::exp(5.5 + 0.9 * orch::test::normal(rng))));
      // ~1.5 images per example: 0..3, mean 1.5; patches of a dynamic-resolution image.
      const auto images = orch::test::uniform_int(rng, 0, 3);
      for (orch::index_t k = 0; k < images; ++k) {
        media.push_back({"image", orch::test::uniform_int(rng, 256, 4096), 0});
      }
      // ~0.3 audio clips per example: 2–30 s at 100 frames/s.
      if (orch::test::uniform01(rng) < 0.3) {
        media.push_back({"audio", orch::test::uniform_int(rng, 200, 3000), text});
      }
      t.add_example(r, i, text, media);
    }
  }
  return t;
}

/// The counters every whole-step benchmark prints: over_sort (plan time over the sort's time,
/// the unit of the targets, measured before and after the timed loop, the smaller kept),
/// sort_ms and page_faults_per_step.
void set_time_counters(benchmark::State& state, std::chrono::steady_clock::duration loop,
                       long faults, double sort_ms_before) {
  const double sort_ms = std::min(sort_ms_before, sort_reference_ms(5));
  const double steps =
      static_cast<double>(std::max<benchmark::IterationCount>(1, state.iterations()));
  const double plan_ms = std::chrono::duration<double, std::milli>(loop).count() / steps;
  state.counters["over_sort"] = plan_ms / sort_ms;
  state.counters["sort_ms"] = sort_ms;
  state.counters["page_faults_per_step"] = static_cast<double>(faults) / steps;
}

/// Heap bytes in use (glibc's mallinfo2: small chunks plus mmapped ones), or nothing where
/// the C library has no mallinfo2.
std::optional<std::size_t> heap_in_use() {
#if defined(__GLIBC__) && (__GLIBC__ > 2 || (__GLIBC__ == 2 && __GLIBC_MINOR__ >= 33))
  const struct mallinfo2 m = mallinfo2();
  return m.uordblks + m.hblkhd;
#else
  return std::nullopt;
#endif
}

/// Median wall time in ms of one memset over `bytes` bytes of a buffer already written once
/// (no page faults), over `runs` runs: about the least time this machine takes to write that
/// much (non-temporal stores may beat memset on some machines, by little).
double write_reference_ms(std::size_t bytes, int runs) {
  std::vector<unsigned char> buffer(bytes, 1);
  std::vector<double> ms;
  for (int r = 0; r < runs; ++r) {
    const auto start = std::chrono::steady_clock::now();
    std::memset(buffer.data(), r, buffer.size());
    benchmark::ClobberMemory();
    const auto stop = std::chrono::steady_clock::now();
    benchmark::DoNotOptimize(buffer.data());
    ms.push_back(std::chrono::duration<double, std::milli>(stop - start).count());
  }
  std::nth_element(ms.begin(), ms.begin() + runs / 2, ms.end());
  return ms[static_cast<std::size_t>(runs / 2)];
}

/// A whole-step benchmark's inputs from its arguments (strategy, ranks, threads).
struct step_case {
  orch::topology topo;
  orch::item_table table;
  orch::model_description model;
  orch::orchestrate_options options;
};

step_case make_step_case(const benchmark::State& state) {
  const auto ranks = static_cast<orch::rank_t>(state.range(1));
  step_case c{orch::topology::uniform(ranks, 8), bench_table(ranks, 32, 2026), bench_model(), {}};
  c.options.strategy = orch::all_strategies[static_cast<std::size_t>(state.range(0))];
  c.options.threads = static_cast<int>(state.range(2));
  return c;
}

/// plan_MiB: the heap bytes one returned plan holds (vectors' capacities included), measured
/// around a plan built for it; write_over_sort: the time of writing that many bytes once over
/// the sort's time (set_time_counters' sort_ms, so call this after it). Any algorithm that
/// returns a plan of this size writes it at least once; docs/benchmarks.md sets the `none`
/// step's target (1x the sort) beside that floor.
void set_memory_floor_counters(benchmark::State& state, const step_case& c) {
  const auto before = heap_in_use();
  const orch::step_plan plan = orch::orchestrate(c.table, c.model, c.topo, c.options);
  const auto after = heap_in_use();
  benchmark::DoNotOptimize(plan.hash);
  if (!before || !after || *after < *before) {
    return;
  }
  const std::size_t bytes = *after - *before;
  state.counters["plan_MiB"] = static_cast<double>(bytes) / (1024.0 * 1024.0);
  state.counters["write_over_sort"] = write_reference_ms(bytes, 5) / state.counters["sort_ms"];
}

void bench_orchestrate(benchmark::State& state) {
  const step_case c = make_step_case(state);
  const auto& [topo, table, model, options] = c;
  // The growth of the peak resident set over the first plan: the step plan's peak memory
  // above the table when this benchmark runs first in its process (--benchmark_filter).
  const double rss_before = peak_rss_mib();
  const auto check = orch::orchestrate(table, model, topo, options);
  const double rss_growth = peak_rss_mib() - rss_before;
  if (check.phases().size() != 3) {
    throw std::logic_error("orchestrate returned the wrong number of phases");
  }
  const double sort_ms_before = sort_reference_ms(5);
  const long faults_before = minor_page_faults();
  const auto start = std::chrono::steady_clock::now();
  for (auto _ : state) {
    auto sp = orch::orchestrate(table, model, topo, options);
    benchmark::DoNotOptimize(sp.hash);
  }
  const auto stop = std::chrono::steady_clock::now();
  set_time_counters(state, stop - start, minor_page_faults() - faults_before, sort_ms_before);
  set_memory_floor_counters(state, c);
  state.counters["peak_rss_growth_MiB"] = rss_growth;
  state.SetLabel(std::string(orch::to_string(options.strategy)));
  state.counters["examples"] = static_cast<double>(table.examples());
  state.counters["media"] = static_cast<double>(table.media_items());
  for (const orch::phase_result& ph : check.phases()) {
    state.counters[ph.name + "_max_over_lb"] = ph.balance.max_over_lower_bound;
  }
  orch::bytes_t inter = 0;
  orch::bytes_t total = 0;
  orch::bytes_t moved_inter = 0; // input and text exchanges, whose bounds are stated
  orch::bytes_t moved_bound = 0;
  orch::bytes_t features_inter = 0;
  orch::bytes_t features_bound = 0;
  for (const orch::exchange_result& x : check.exchanges()) {
    inter += x.bytes.inter_node;
    total += x.bytes.total();
    const bool features = std::string_view(x.name).ends_with(".features");
    (features ? features_inter : moved_inter) += x.bytes.inter_node;
    (features ? features_bound : moved_bound) += x.inter_node_lower_bound;
  }
  // Bytes in MB (10^6); the ratios are inter-node bytes over the sum of their lower bounds.
  state.counters["inputs_text_inter_MB"] = static_cast<double>(moved_inter) / 1e6;
  state.counters["inputs_text_lb_MB"] = static_cast<double>(moved_bound) / 1e6;
  state.counters["features_inter_MB"] = static_cast<double>(features_inter) / 1e6;
  state.counters["features_lb_MB"] = static_cast<double>(features_bound) / 1e6;
  state.counters["inter_node_share"] =
      total == 0 ? 0.0 : static_cast<double>(inter) / static_cast<double>(total);
  state.counters["features_direct_over_two_hop"] =
      check.feature_bytes_two_hop == 0 ? 0.0
                                       : static_cast<double>(check.feature_bytes_direct) /
                                             static_cast<double>(check.feature_bytes_two_hop);
}
// Wall time is what a step waits for; with threads > 1 CPU time adds up over the threads.
BENCHMARK(bench_orchestrate)
    ->ArgsProduct({{0, 1, 2, 3}, {64, 512, 2560}, {1, 2}})
    ->ArgNames({"strategy", "ranks", "threads"})
    ->Unit(benchmark::kMillisecond)
    ->UseRealTime();

/// The step as a training loop plans it, `plan = orch::orchestrate(...)` once per step: the
/// previous step's plan is alive while the next one is planned and is freed after it, so the
/// allocator reuses its memory. bench_orchestrate drops each plan before planning the next,
/// which lets glibc's malloc return the memory to the kernel at one thread (page faults every
/// step; docs/benchmarks.md, "The heap allocator and the one-thread step").
void bench_orchestrate_training_loop(benchmark::State& state) {
  const step_case c = make_step_case(state);
  const auto& [topo, table, model, options] = c;
  orch::step_plan plan = orch::orchestrate(table, model, topo, options);
  const double sort_ms_before = sort_reference_ms(5);
  const long faults_before = minor_page_faults();
  const auto start = std::chrono::steady_clock::now();
  for (auto _ : state) {
    plan = orch::orchestrate(table, model, topo, options);
    benchmark::DoNotOptimize(plan.hash);
  }
  const auto stop = std::chrono::steady_clock::now();
  set_time_counters(state, stop - start, minor_page_faults() - faults_before, sort_ms_before);
  set_memory_floor_counters(state, c);
  state.SetLabel(std::string(orch::to_string(options.strategy)));
}
BENCHMARK(bench_orchestrate_training_loop)
    ->ArgsProduct({{0, 3}, {2560}, {1, 2}})
    ->ArgNames({"strategy", "ranks", "threads"})
    ->Unit(benchmark::kMillisecond)
    ->UseRealTime();

/// One phase of the 2,560-rank step as the orchestrator sees it: costs, owner rank and the
/// bytes staying on the owner saves (strategy orch with every example kept on its owner).
struct step_phase {
  std::vector<orch::cost_t> costs;
  std::vector<orch::rank_t> owner;
  std::vector<orch::bytes_t> stay;
};

step_phase make_step_phase(std::size_t phase) {
  const auto table = bench_table(2560, 32, 2026);
  const auto in = orch::detail::resolve_inputs(table, bench_model());
  const auto owners = table.owners();
  step_phase p;
  if (phase < in.encoders.size()) {
    const auto& items = in.encoders[phase];
    p.costs = items.costs;
    for (std::size_t i = 0; i < items.costs.size(); ++i) {
      p.owner.push_back(owners[static_cast<std::size_t>(items.example[i])]);
      p.stay.push_back(items.input_bytes[i] + items.feature_bytes[i]);
    }
  } else {
    p.costs = in.llm_costs;
    p.owner.assign(owners.begin(), owners.end());
    for (std::size_t x = 0; x < p.costs.size(); ++x) {
      p.stay.push_back(in.text_bytes[x] + in.example_feature_bytes[x]);
    }
  }
  return p;
}

const char* const phase_names[] = {"vision", "audio", "llm"};

// The pieces of a step plan, per phase (0 vision, 1 audio, 2 LLM): the default partition
// (per_phase), locality_balance against it (the engine against reference bins), the engine as
// orch places a phase (no reference, target LB + 0.1 %; the label names the method that won:
// audio, with ~10 items per rank, needs node_first or settle), and the inter-node lower bound.
void bench_step_partition(benchmark::State& state) {
  const auto p = make_step_phase(static_cast<std::size_t>(state.range(0)));
  for (auto _ : state) {
    auto r = orch::partition(p.costs, 2560);
    benchmark::DoNotOptimize(r.max_load);
  }
  state.SetLabel(phase_names[state.range(0)]);
}
BENCHMARK(bench_step_partition)->DenseRange(0, 2)->ArgName("phase")->Unit(benchmark::kMillisecond);

void bench_step_locality_balance(benchmark::State& state) {
  const auto p = make_step_phase(static_cast<std::size_t>(state.range(0)));
  const auto topo = orch::topology::uniform(2560, 8);
  const auto reference = orch::partition(p.costs, 2560);
  for (auto _ : state) {
    auto r = orch::locality_balance(p.costs, p.owner, p.stay, topo, reference.bin_of);
    benchmark::DoNotOptimize(r.max_load);
  }
  state.SetLabel(phase_names[state.range(0)]);
}
BENCHMARK(bench_step_locality_balance)
    ->DenseRange(0, 2)
    ->ArgName("phase")
    ->Unit(benchmark::kMillisecond);

void bench_step_place(benchmark::State& state) {
  const auto p = make_step_phase(static_cast<std::size_t>(state.range(0)));
  const auto topo = orch::topology::uniform(2560, 8);
  // As the orchestrator places a phase: the engine at LB + 0.1 %, no reference partition.
  orch::place_options options;
  options.measure = false;
  orch::placement_method method = orch::placement_method::keep_local;
  for (auto _ : state) {
    auto r = orch::place(p.costs, p.owner, p.stay, topo, options);
    method = r.method;
    benchmark::DoNotOptimize(r.max_load);
  }
  state.SetLabel(std::string(phase_names[state.range(0)]) + " " +
                 std::string(orch::to_string(method)));
}
BENCHMARK(bench_step_place)->DenseRange(0, 2)->ArgName("phase")->Unit(benchmark::kMillisecond);

/// The assembly map of the 2,560-rank step under `none` (every example on its owner, its media
/// in the owner's feature layouts), hashed as the orchestrator builds it. Label: the segments.
void bench_step_assemble(benchmark::State& state) {
  const auto table = bench_table(2560, 32, 2026);
  const auto in = orch::detail::resolve_inputs(table, bench_model());
  const auto owners = orch::detail::owner_layout(table, 2560);
  const auto media = orch::detail::media_layouts_following(table, in, owners);
  std::size_t segments = 0;
  for (auto _ : state) {
    std::uint64_t hash = 0;
    auto a = orch::detail::assemble_sequences<true>(table, owners, media, in.encoder_media,
                                                    in.media_encoder, in.output_tokens, &hash);
    segments = a.segments.size();
    benchmark::DoNotOptimize(hash);
  }
  state.SetLabel(std::to_string(segments) + " segments");
}
BENCHMARK(bench_step_assemble)->Unit(benchmark::kMillisecond);

void bench_step_inter_node_bound(benchmark::State& state) {
  const auto p = make_step_phase(static_cast<std::size_t>(state.range(0)));
  const auto topo = orch::topology::uniform(2560, 8);
  const orch::cost_t lb = orch::lower_bound(p.costs, 2560);
  for (auto _ : state) {
    auto b = orch::inter_node_lower_bound(p.costs, p.owner, p.stay, topo, lb + lb / 1000);
    benchmark::DoNotOptimize(b);
  }
  state.SetLabel(phase_names[state.range(0)]);
}
BENCHMARK(bench_step_inter_node_bound)
    ->DenseRange(0, 2)
    ->ArgName("phase")
    ->Unit(benchmark::kMillisecond);

} // namespace

BENCHMARK_MAIN();
