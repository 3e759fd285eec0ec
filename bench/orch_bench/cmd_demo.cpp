// SPDX-License-Identifier: Apache-2.0
// `orch-bench demo`: the README's first command. Simulates the bundled real-data trace at a
// few scales with every strategy and prints one comparison table; needs nothing but the repo.
#include "command.hpp"
#include "input_error.hpp"
#include "options.hpp"
#include "simulate.hpp"
#include "simulate_cli.hpp"

#include <orch/config.hpp>

#include <iomanip>
#include <ostream>
#include <sstream>

namespace {

std::string num(double v, int precision) {
  std::ostringstream s;
  s << std::fixed << std::setprecision(precision) << v;
  return s.str();
}

std::string cell(const std::string& s, std::size_t width) {
  return s.size() >= width ? s : std::string(width - s.size(), ' ') + s;
}

std::vector<orch::rank_t> parse_scales(const std::string& list) {
  std::vector<orch::rank_t> out;
  std::size_t start = 0;
  while (true) {
    const auto comma = list.find(',', start);
    const auto v = orch_bench::parse_int(orch_bench::trim(
        std::string_view(list).substr(start, comma == std::string::npos ? comma : comma - start)));
    if (!v || *v < 1 || *v > (1 << 20)) {
      throw orch_bench::input_error(
          orch_bench::cat("--scales: '", list, "' is not a comma-separated list of rank counts"));
    }
    out.push_back(static_cast<orch::rank_t>(*v));
    if (comma == std::string::npos) {
      return out;
    }
    start = comma + 1;
  }
}

int run_demo(const std::vector<std::string>& args, std::ostream& out, std::ostream& err) {
  orch_bench::option_parser opts(
      "demo [--scales LIST] [--steps S] [--trace FILE] [--seed X]",
      "Simulates the bundled trace (real per-example lengths, omni recipe: text, image-text,\n"
      "ASR, spoken dialogue and long audio) on 8-GPU nodes with 16 examples per rank, with\n"
      "every strategy, and prints the comparison. `orch-bench simulate` gives the details;\n"
      "docs/orch-bench.md explains every column and the step-time model.");
  opts.value("scales", "LIST", "rank counts (multiples of 8)", "16,64,512");
  opts.value("steps", "S", "sampled steps per scale", "5");
  opts.value("trace", "FILE", "length trace", orch_bench::bundled_trace_path());
  opts.value("seed", "X", "random seed", "1");
  orch_bench::add_model_options(opts);
  return orch_bench::exit_code_of("demo", err, [&] {
    opts.parse(args);
    if (opts.help_requested()) {
      opts.print_help(out);
      return orch_bench::exit_ok;
    }
    const auto model = orch_bench::model_from_options(opts);
    const auto scales = parse_scales(opts.get("scales"));
    const int steps = static_cast<int>(opts.get_int("steps", 1, 10'000));
    const auto seed = static_cast<std::uint64_t>(
        opts.get_int("seed", 0, std::numeric_limits<std::int64_t>::max()));
    const std::string path = opts.get("trace");
    const auto t = orch_bench::read_trace_file(path);
    orch_bench::check_trace_fields(t, model, path);

    out << "orch-bench demo: " << t.size() << " examples of real per-example lengths (" << path
        << ")\nmodel " << model.name << " (" << model.description << ")\n"
        << "8 ranks per node, 16 examples per rank, " << steps
        << " sampled steps per scale; values are means over steps\n\n";
    bool header = false;
    for (const auto ranks : scales) {
      if (ranks % 8 != 0) {
        throw orch_bench::input_error(orch_bench::cat("--scales: ", std::to_string(ranks),
                                                      " is not a multiple of 8 ranks per node"));
      }
      orch_bench::simulate_config config;
      config.trace_name = path;
      config.ranks = ranks;
      config.ranks_per_node = 8;
      config.examples_per_rank = 16;
      config.steps = steps;
      config.seed = seed;
      const auto r = orch_bench::simulate(
          t, model, config, orch_bench::progress_bar(err, std::to_string(ranks) + " ranks"));
      if (!header) {
        out << cell("ranks", 6) << "  " << std::left << std::setw(10) << "strategy" << std::right
            << cell("step s", 8) << cell("speedup", 9) << cell("idle", 7);
        for (const auto& p : r.phase_names) {
          out << cell(p + " max/mean", 17);
        }
        out << cell("inter-node GB", 15) << cell("plan ms", 9) << '\n';
        header = true;
      }
      for (const auto& s : r.strategies) {
        out << cell(std::to_string(ranks), 6) << "  " << std::left << std::setw(10) << s.name
            << std::right << cell(num(s.step_time_s, 3), 8)
            << cell(num(s.speedup_vs_none, 2) + "x", 9)
            << cell(num(100.0 * s.idle_fraction, 1) + "%", 7);
        for (const auto& p : s.phases) {
          out << cell(num(p.max_over_mean, 2), 17);
        }
        out << cell(num(s.bytes.inter_node / 1e9, 2), 15) << cell(num(s.plan_ms, 2), 9) << '\n';
      }
      out << '\n';
    }
    out << "step s: modelled forward+backward compute on the critical path plus exchange time;\n"
           "idle: share of GPU time in compute spent waiting for the slowest rank;\n"
           "max/mean: the busiest rank's load over the mean, per phase (1.00 is perfect).\n";
    return orch_bench::exit_ok;
  });
}

const bool registered = orch_bench::register_command(
    {"demo", "simulate the bundled real-data trace at 16, 64 and 512 ranks (start here)",
     run_demo});

} // namespace
