// SPDX-License-Identifier: Apache-2.0
#include "simulate.hpp"

#include <orch/locality.hpp>
#include <orch/orchestrate/orchestrate.hpp>
#include <orch/topology.hpp>

#include <support/generators.hpp>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <iomanip>
#include <limits>
#include <ostream>
#include <random>
#include <sstream>
#include <stdexcept>

namespace orch_bench {

namespace {

// splitmix64: decorrelates the per-step seeds derived from the run seed.
std::uint64_t mix(std::uint64_t x) {
  x += 0x9E3779B97F4A7C15ULL;
  x = (x ^ (x >> 30)) * 0xBF58476D1CE4E5B9ULL;
  x = (x ^ (x >> 27)) * 0x94D049BB133111EBULL;
  return x ^ (x >> 31);
}

// Per-rank bytes by class of a set of exchanges run as one fused all-to-all.
struct stage_bytes {
  std::vector<orch::bytes_t> send_intra, recv_intra, send_inter, recv_inter;
  explicit stage_bytes(orch::rank_t ranks)
      : send_intra(static_cast<std::size_t>(ranks)), recv_intra(static_cast<std::size_t>(ranks)),
        send_inter(static_cast<std::size_t>(ranks)), recv_inter(static_cast<std::size_t>(ranks)) {}

  void add(const orch::exchange_plan& plan, const orch::topology& topo) {
    const auto node = topo.node_of_ranks();
    // The sparse traffic matrix: O(pairs), where per-rank views would sort every rank's items.
    for (const auto& t : plan.pairs()) {
      if (t.source == t.destination) {
        continue;
      }
      const auto si = static_cast<std::size_t>(t.source);
      const auto di = static_cast<std::size_t>(t.destination);
      if (node[si] == node[di]) {
        send_intra[si] += t.bytes;
        recv_intra[di] += t.bytes;
      } else {
        send_inter[si] += t.bytes;
        recv_inter[di] += t.bytes;
      }
    }
  }

  // The slowest rank: its busier direction per class, NVLink and network time added.
  [[nodiscard]] double seconds(const simulation_constants& sim) const {
    double worst = 0.0;
    for (std::size_t r = 0; r < send_intra.size(); ++r) {
      const auto intra = static_cast<double>(std::max(send_intra[r], recv_intra[r]));
      const auto inter = static_cast<double>(std::max(send_inter[r], recv_inter[r]));
      worst = std::max(worst, intra / sim.nvlink_bytes_per_s + inter / sim.network_bytes_per_s);
    }
    return worst;
  }
};

double median(std::vector<double> v) {
  if (v.empty()) {
    return 0.0;
  }
  std::sort(v.begin(), v.end());
  const std::size_t n = v.size();
  return n % 2 == 1 ? v[n / 2] : 0.5 * (v[n / 2 - 1] + v[n / 2]);
}

bool ends_with(const std::string& s, std::string_view suffix) {
  return s.size() >= suffix.size() &&
         s.compare(s.size() - suffix.size(), suffix.size(), suffix) == 0;
}

} // namespace

std::uint64_t step_seed(std::uint64_t seed, int step) {
  return mix(mix(seed) ^ static_cast<std::uint64_t>(step));
}

bench_model restrict_to_trace(const bench_model& model, const trace& t) {
  const auto s = summarize(t);
  bench_model out = model;
  out.model.encoders.clear();
  for (const auto& enc : model.model.encoders) {
    bool used = false;
    for (const auto& f : enc.fields) {
      const auto kind = parse_field(f.name);
      used = used || (kind && s.items[static_cast<std::size_t>(*kind)] > 0);
    }
    if (used) {
      out.model.encoders.push_back(enc);
    }
  }
  return out;
}

orch::item_table sample_step(const trace& t, const bench_model& model, orch::rank_t ranks,
                             orch::index_t examples_per_rank, std::uint64_t seed) {
  if (t.empty() || ranks <= 0 || examples_per_rank <= 0) {
    throw std::invalid_argument("sample_step: empty trace, or ranks / examples per rank < 1");
  }
  std::mt19937_64 rng(seed);
  orch::item_table table(model.model);
  std::vector<orch::media_spec> media;
  const auto last = static_cast<std::int64_t>(t.size()) - 1;
  for (orch::rank_t r = 0; r < ranks; ++r) {
    for (orch::index_t j = 0; j < examples_per_rank; ++j) {
      const auto e = static_cast<std::size_t>(orch::test::uniform_int(rng, 0, last));
      media.clear();
      for (const auto& m : t.media(e)) {
        media.push_back({field_names[static_cast<std::size_t>(m.kind)], m.length});
      }
      (void)table.add_example(r, j, t.text_tokens(e), media);
    }
  }
  return table;
}

simulate_result simulate(const trace& t, const bench_model& full_model,
                         const simulate_config& config,
                         const std::function<void(int, int)>& progress) {
  if (config.steps < 1 || config.strategies.empty()) {
    throw std::invalid_argument("simulate: need at least one step and one strategy");
  }
  const bench_model model = restrict_to_trace(full_model, t);
  model.validate();
  const auto topo = orch::topology::uniform(config.ranks, config.ranks_per_node);
  const simulation_constants& sim = model.sim;
  const double seconds_per_unit =
      sim.cost_unit_flops * (1.0 + sim.backward_factor) / sim.achieved_flops;

  simulate_result result;
  result.config = config;
  result.model_name = model.name;
  result.sim = sim;
  result.trace_examples = t.size();
  for (const auto& e : model.model.encoders) {
    result.phase_names.push_back(e.name);
  }
  result.phase_names.push_back(model.model.llm.name);
  const std::size_t phases = result.phase_names.size();

  // Strategy none runs first every step: it is the baseline of the speed-up.
  std::vector<orch::strategy> order{orch::strategy::none};
  for (const auto s : config.strategies) {
    if (s != orch::strategy::none && std::find(order.begin(), order.end(), s) == order.end()) {
      order.push_back(s);
    }
  }
  const bool report_none = std::find(config.strategies.begin(), config.strategies.end(),
                                     orch::strategy::none) != config.strategies.end();

  struct accumulator {
    strategy_stats stats;
    std::vector<double> plan_ms;
  };
  std::vector<accumulator> acc(order.size());
  for (std::size_t k = 0; k < order.size(); ++k) {
    acc[k].stats.name = std::string(orch::to_string(order[k]));
    acc[k].stats.phases.resize(phases);
    for (std::size_t p = 0; p < phases; ++p) {
      acc[k].stats.phases[p].name = result.phase_names[p];
    }
  }

  const int total = config.steps * static_cast<int>(order.size());
  int done = 0;
  for (int step = 0; step < config.steps; ++step) {
    const auto table =
        sample_step(t, model, config.ranks, config.examples_per_rank, step_seed(config.seed, step));
    for (std::size_t k = 0; k < order.size(); ++k) {
      orch::orchestrate_options options;
      options.strategy = order[k];
      options.threads = config.threads;
      options.locality.slack_ppm = config.slack_ppm;
      const auto start = std::chrono::steady_clock::now();
      const auto plan = orch::orchestrate(table, model.model, topo, options);
      const auto stop = std::chrono::steady_clock::now();
      const double ms = std::chrono::duration<double, std::milli>(stop - start).count();

      auto& s = acc[k].stats;
      step_record rec;
      rec.step = step;
      rec.strategy = s.name;
      rec.plan_ms = ms;
      rec.plan_hash = plan.hash;

      // Compute: encoders back to back, then the LLM; a feature exchange that moves bytes
      // between ranks is a barrier between them, otherwise each rank runs straight through.
      const auto ranks = static_cast<std::size_t>(config.ranks);
      std::vector<orch::cost_t> encoder_sum(ranks, 0);
      double total_units = 0.0;
      const auto plan_phases = plan.phases();
      for (std::size_t p = 0; p < phases; ++p) {
        const orch::phase_result& ph = plan_phases[p];
        if (p + 1 < phases) {
          for (std::size_t r = 0; r < ranks; ++r) {
            encoder_sum[r] += ph.loads[r];
          }
        }
        total_units += static_cast<double>(ph.balance.total);
        s.phases[p].max_over_mean += ph.balance.max_over_mean;
        s.phases[p].max_over_lower_bound += ph.balance.max_over_lower_bound;
        s.phases[p].idle_fraction += ph.balance.idle_fraction;
        s.phases[p].max_time_s += static_cast<double>(ph.balance.max_load) * seconds_per_unit;
        rec.max_over_mean.push_back(ph.balance.max_over_mean);
        rec.max_over_lower_bound.push_back(ph.balance.max_over_lower_bound);
      }
      stage_bytes dispatch(config.ranks);
      stage_bytes features(config.ranks);
      bytes_stats all;
      const auto plan_exchanges = plan.exchanges();
      s.exchanges.resize(plan_exchanges.size());
      for (std::size_t x = 0; x < plan_exchanges.size(); ++x) {
        const orch::exchange_result& ex = plan_exchanges[x];
        const bool is_features = ends_with(ex.name, ".features");
        (is_features ? features : dispatch).add(ex.forward, topo);
        const auto lb = ex.inter_node_lower_bound;
        auto& xs = s.exchanges[x];
        xs.name = ex.name;
        xs.bytes.self += static_cast<double>(ex.bytes.self);
        xs.bytes.intra_node += static_cast<double>(ex.bytes.intra_node);
        xs.bytes.inter_node += static_cast<double>(ex.bytes.inter_node);
        xs.bytes.inter_node_lower_bound += static_cast<double>(lb);
        all.self += static_cast<double>(ex.bytes.self);
        all.intra_node += static_cast<double>(ex.bytes.intra_node);
        all.inter_node += static_cast<double>(ex.bytes.inter_node);
        all.inter_node_lower_bound += static_cast<double>(lb);
      }
      bool features_move = false;
      for (const auto v : features.send_intra) {
        features_move = features_move || v > 0;
      }
      for (const auto v : features.send_inter) {
        features_move = features_move || v > 0;
      }
      const auto& llm_loads = plan.llm.loads;
      double critical_units = 0.0;
      if (features_move) {
        critical_units =
            static_cast<double>(*std::max_element(encoder_sum.begin(), encoder_sum.end())) +
            static_cast<double>(plan.llm.balance.max_load);
      } else {
        orch::cost_t worst = 0;
        for (std::size_t r = 0; r < ranks; ++r) {
          worst = std::max(worst, encoder_sum[r] + llm_loads[r]);
        }
        critical_units = static_cast<double>(worst);
      }
      rec.compute_s = critical_units * seconds_per_unit;
      rec.exchange_s = dispatch.seconds(sim) + 2.0 * features.seconds(sim);
      rec.step_time_s = rec.compute_s + rec.exchange_s;
      rec.idle_fraction =
          critical_units > 0.0
              ? 1.0 - total_units / static_cast<double>(config.ranks) / critical_units
              : 0.0;
      rec.bytes = all;

      s.step_time_s += rec.step_time_s;
      s.compute_s += rec.compute_s;
      s.exchange_s += rec.exchange_s;
      s.idle_fraction += rec.idle_fraction;
      s.bytes.self += all.self;
      s.bytes.intra_node += all.intra_node;
      s.bytes.inter_node += all.inter_node;
      s.bytes.inter_node_lower_bound += all.inter_node_lower_bound;
      s.feature_bytes_direct += static_cast<double>(plan.feature_bytes_direct);
      s.feature_bytes_two_hop += static_cast<double>(plan.feature_bytes_two_hop);
      s.sampled_examples += table.examples();
      // Media count as encoder forwards: a long item cut into chunks counts each chunk.
      s.sampled_media += plan.chunks.chunks(table.media_items());
      s.placed_examples += plan.llm.placement.items();
      for (const auto& enc : plan.encoders) {
        s.placed_media += enc.phase.placement.items();
      }
      acc[k].plan_ms.push_back(ms);
      if (report_none || order[k] != orch::strategy::none) {
        result.steps.push_back(std::move(rec));
      }
      if (progress) {
        progress(++done, total);
      }
    }
  }

  const double n = config.steps;
  const double none_time = acc[0].stats.step_time_s / n;
  for (std::size_t k = 0; k < order.size(); ++k) {
    if (order[k] == orch::strategy::none && !report_none) {
      continue;
    }
    auto s = acc[k].stats;
    s.step_time_s /= n;
    s.compute_s /= n;
    s.exchange_s /= n;
    s.idle_fraction /= n;
    for (auto& p : s.phases) {
      p.max_over_mean /= n;
      p.max_over_lower_bound /= n;
      p.idle_fraction /= n;
      p.max_time_s /= n;
    }
    for (auto* b : {&s.bytes}) {
      b->self /= n;
      b->intra_node /= n;
      b->inter_node /= n;
      b->inter_node_lower_bound /= n;
    }
    for (auto& x : s.exchanges) {
      x.bytes.self /= n;
      x.bytes.intra_node /= n;
      x.bytes.inter_node /= n;
      x.bytes.inter_node_lower_bound /= n;
    }
    s.feature_bytes_direct /= n;
    s.feature_bytes_two_hop /= n;
    s.speedup_vs_none = s.step_time_s > 0.0 ? none_time / s.step_time_s : 1.0;
    s.plan_ms = median(acc[k].plan_ms);
    result.strategies.push_back(std::move(s));
  }
  // Report in the order the strategies were asked for.
  std::vector<strategy_stats> ordered;
  for (const auto st : config.strategies) {
    for (const auto& s : result.strategies) {
      if (s.name == orch::to_string(st) &&
          std::none_of(ordered.begin(), ordered.end(),
                       [&](const strategy_stats& o) { return o.name == s.name; })) {
        ordered.push_back(s);
      }
    }
  }
  result.strategies = std::move(ordered);
  return result;
}

nlohmann::json to_json(const simulate_result& r) {
  using nlohmann::json;
  json strategies = json::array();
  for (const auto& s : r.strategies) {
    json phases = json::array();
    for (const auto& p : s.phases) {
      phases.push_back({{"name", p.name},
                        {"max_over_mean", p.max_over_mean},
                        {"max_over_lower_bound", p.max_over_lower_bound},
                        {"idle_fraction", p.idle_fraction},
                        {"max_time_s", p.max_time_s}});
    }
    const auto bytes = [](const bytes_stats& b) {
      return json{{"self", b.self},
                  {"intra_node", b.intra_node},
                  {"inter_node", b.inter_node},
                  {"inter_node_lower_bound", b.inter_node_lower_bound}};
    };
    json exchanges = json::array();
    for (const auto& x : s.exchanges) {
      exchanges.push_back({{"name", x.name}, {"bytes", bytes(x.bytes)}});
    }
    strategies.push_back({{"name", s.name},
                          {"step_time_s", s.step_time_s},
                          {"compute_s", s.compute_s},
                          {"exchange_s", s.exchange_s},
                          {"speedup_vs_none", s.speedup_vs_none},
                          {"idle_fraction", s.idle_fraction},
                          {"plan_ms", s.plan_ms},
                          {"phases", phases},
                          {"bytes", bytes(s.bytes)},
                          {"exchanges", exchanges},
                          {"feature_bytes_direct", s.feature_bytes_direct},
                          {"feature_bytes_two_hop", s.feature_bytes_two_hop}});
  }
  json names = json::array();
  for (const auto st : r.config.strategies) {
    names.push_back(std::string(orch::to_string(st)));
  }
  return json{{"config",
               {{"trace", r.config.trace_name},
                {"trace_examples", r.trace_examples},
                {"model", r.model_name},
                {"phases", r.phase_names},
                {"ranks", r.config.ranks},
                {"ranks_per_node", r.config.ranks_per_node},
                {"nodes", r.config.ranks / r.config.ranks_per_node},
                {"examples_per_rank", r.config.examples_per_rank},
                {"steps", r.config.steps},
                {"seed", r.config.seed},
                {"strategies", names},
                {"slack_ppm", r.config.slack_ppm},
                {"cost_unit_flops", r.sim.cost_unit_flops},
                {"achieved_flops", r.sim.achieved_flops},
                {"backward_factor", r.sim.backward_factor},
                {"nvlink_bytes_per_s", r.sim.nvlink_bytes_per_s},
                {"network_bytes_per_s", r.sim.network_bytes_per_s}}},
              {"strategies", strategies}};
}

namespace {

std::string fixed(double v, int precision) {
  std::ostringstream s;
  s << std::fixed << std::setprecision(precision) << v;
  return s.str();
}

std::string pad(const std::string& s, std::size_t width) {
  return s.size() >= width ? s : std::string(width - s.size(), ' ') + s;
}

std::string left(const std::string& s, std::size_t width) {
  return s.size() >= width ? s : s + std::string(width - s.size(), ' ');
}

} // namespace

void print_tables(std::ostream& out, const simulate_result& r) {
  const auto& c = r.config;
  out << "trace " << c.trace_name << " (" << r.trace_examples << " examples), model "
      << r.model_name << ", " << c.ranks << " ranks (" << c.ranks / c.ranks_per_node << " nodes x "
      << c.ranks_per_node << "), " << c.examples_per_rank << " examples/rank, " << c.steps
      << " steps, seed " << c.seed << "\n";
  out << "step time = compute x" << fixed(1.0 + r.sim.backward_factor, 1) << " (fwd+bwd) at "
      << std::setprecision(3) << r.sim.achieved_flops / 1e12 << " TFLOP/s + exchanges at NVLink "
      << r.sim.nvlink_bytes_per_s / 1e9 << " GB/s, network " << r.sim.network_bytes_per_s / 1e9
      << " GB/s per GPU\n\n";

  out << left("strategy", 10) << pad("step s", 9) << pad("speedup", 9) << pad("idle", 7)
      << pad("compute s", 11) << pad("exch s", 9) << pad("plan ms", 9);
  for (const auto& p : r.phase_names) {
    out << pad(p + " max/mean", 17) << pad("/LB", 6);
  }
  out << '\n';
  for (const auto& s : r.strategies) {
    out << left(s.name, 10) << pad(fixed(s.step_time_s, 3), 9)
        << pad(fixed(s.speedup_vs_none, 2) + "x", 9)
        << pad(fixed(100.0 * s.idle_fraction, 1) + "%", 7) << pad(fixed(s.compute_s, 3), 11)
        << pad(fixed(s.exchange_s, 4), 9) << pad(fixed(s.plan_ms, 2), 9);
    for (const auto& p : s.phases) {
      out << pad(fixed(p.max_over_mean, 2), 17) << pad(fixed(p.max_over_lower_bound, 2), 6);
    }
    out << '\n';
  }
  out << "\nbytes per step (GB)  " << pad("self", 9) << pad("intra-node", 12)
      << pad("inter-node", 12) << pad("inter LB", 10) << pad("features 1-hop", 16)
      << pad("2-hop", 8) << '\n';
  for (const auto& s : r.strategies) {
    out << left(s.name, 21) << pad(fixed(s.bytes.self / 1e9, 2), 9)
        << pad(fixed(s.bytes.intra_node / 1e9, 2), 12)
        << pad(fixed(s.bytes.inter_node / 1e9, 2), 12)
        << pad(fixed(s.bytes.inter_node_lower_bound / 1e9, 2), 10)
        << pad(fixed(s.feature_bytes_direct / 1e9, 2), 16)
        << pad(fixed(s.feature_bytes_two_hop / 1e9, 2), 8) << '\n';
  }
}

void write_csv(std::ostream& out, const simulate_result& r) {
  out << "step,strategy,step_time_s,compute_s,exchange_s,idle_fraction,plan_ms";
  for (const auto& p : r.phase_names) {
    out << ',' << p << "_max_over_mean," << p << "_max_over_lower_bound";
  }
  out << ",bytes_self,bytes_intra_node,bytes_inter_node,bytes_inter_node_lower_bound,plan_hash\n";
  out << std::setprecision(9);
  for (const auto& s : r.steps) {
    out << s.step << ',' << s.strategy << ',' << s.step_time_s << ',' << s.compute_s << ','
        << s.exchange_s << ',' << s.idle_fraction << ',' << s.plan_ms;
    for (std::size_t p = 0; p < s.max_over_mean.size(); ++p) {
      out << ',' << s.max_over_mean[p] << ',' << s.max_over_lower_bound[p];
    }
    out << ',' << std::setprecision(15) << s.bytes.self << ',' << s.bytes.intra_node << ','
        << s.bytes.inter_node << ',' << s.bytes.inter_node_lower_bound << std::setprecision(9)
        << ',' << std::hex << std::setw(16) << std::setfill('0') << s.plan_hash << std::dec
        << std::setfill(' ') << '\n';
  }
}

} // namespace orch_bench
