// SPDX-License-Identifier: Apache-2.0
// `orch-bench simulate`: plans sampled steps with every strategy and reports balance, bytes
// and a modelled step time side by side (docs/orch-bench.md).
#include "command.hpp"
#include "input_error.hpp"
#include "options.hpp"
#include "simulate.hpp"
#include "simulate_cli.hpp"

#include <orch/config.hpp>

#include <fstream>
#include <iostream>
#include <ostream>
#include <string>

namespace {

int run_simulate(const std::vector<std::string>& args, std::ostream& out, std::ostream& err) {
  orch_bench::option_parser opts(
      "simulate [--trace FILE] [--model FILE.json] --ranks R --ranks-per-node G "
      "--examples-per-rank B --steps S --seed X [--strategies LIST] [--threads T] [--slack-ppm P] "
      "[--json] [--csv FILE] [--plot DIR]",
      "Each step samples R×B trace examples at random (rank = position / B), plans the step\n"
      "with every strategy (orch::orchestrate) and reports per strategy the per-phase\n"
      "balance, the idle fraction, a modelled step time and its speed-up over 'none', the\n"
      "bytes moved by locality class and the plan time. Columns: docs/orch-bench.md.");
  opts.value("trace", "FILE", "length trace (docs/trace-format.md)",
             orch_bench::bundled_trace_path());
  orch_bench::add_model_options(opts);
  opts.value("ranks", "R", "data-parallel ranks", "64");
  opts.value("ranks-per-node", "G", "ranks per node (R must be a multiple)", "8");
  opts.value("examples-per-rank", "B", "examples each rank samples per step", "16");
  opts.value("steps", "S", "sampled steps", "20");
  opts.value("seed", "X", "random seed", "1");
  opts.value("strategies", "LIST", "comma-separated", "none,llm_only,per_phase,orch");
  opts.value("threads", "T", "threads each plan uses (orchestrate_options::threads)", "1");
  opts.value("slack-ppm", "P",
             "room above each phase's lower bound, in parts per million, that orch may spend "
             "on locality (orchestrate_options::locality.slack_ppm)",
             std::to_string(orch::locality_options{}.slack_ppm));
  opts.flag("json", "print one JSON object instead of the tables");
  opts.value("csv", "FILE", "also write one row per step and strategy");
  opts.value("plot", "DIR", "write DIR/simulate.json and PNG plots (python3 + matplotlib)");
  return orch_bench::exit_code_of("simulate", err, [&] {
    opts.parse(args);
    if (opts.help_requested()) {
      opts.print_help(out);
      return orch_bench::exit_ok;
    }
    const auto model = orch_bench::model_from_options(opts);
    orch_bench::simulate_config config;
    config.trace_name = opts.get("trace");
    config.ranks = static_cast<orch::rank_t>(opts.get_int("ranks", 1, 1 << 20));
    config.ranks_per_node =
        static_cast<orch::rank_t>(opts.get_int("ranks-per-node", 1, config.ranks));
    if (config.ranks % config.ranks_per_node != 0) {
      throw orch_bench::input_error(orch_bench::cat("--ranks ", std::to_string(config.ranks),
                                                    " is not a multiple of --ranks-per-node ",
                                                    std::to_string(config.ranks_per_node)));
    }
    config.examples_per_rank = opts.get_int("examples-per-rank", 1, 1 << 16);
    config.steps = static_cast<int>(opts.get_int("steps", 1, 1'000'000));
    config.seed = static_cast<std::uint64_t>(
        opts.get_int("seed", 0, std::numeric_limits<std::int64_t>::max()));
    config.strategies = orch_bench::parse_strategies(opts.get("strategies"));
    config.threads = static_cast<int>(opts.get_int("threads", 1, 256));
    config.slack_ppm = opts.get_int("slack-ppm", 0, 1'000'000);
    const auto t = orch_bench::read_trace_file(config.trace_name);
    orch_bench::check_trace_fields(t, model, config.trace_name);
    const auto result =
        orch_bench::simulate(t, model, config, orch_bench::progress_bar(err, "simulate"));
    if (opts.given("json")) {
      out << orch_bench::to_json(result).dump(2) << '\n';
    } else {
      orch_bench::print_tables(out, result);
    }
    if (opts.given("csv")) {
      std::ofstream csv(opts.get("csv"));
      if (!csv) {
        err << "orch-bench simulate: cannot write '" << opts.get("csv") << "'\n";
        return orch_bench::exit_failure;
      }
      orch_bench::write_csv(csv, result);
    }
    if (opts.given("plot")) {
      // With --json, stdout holds only the JSON object: plot messages go to stderr.
      std::ostream& note = opts.given("json") ? err : out;
      if (!orch_bench::plot(result, opts.get("plot"), note, err)) {
        return orch_bench::exit_failure;
      }
    }
    return orch_bench::exit_ok;
  });
}

const bool registered = orch_bench::register_command(
    {"simulate", "plan sampled steps with every strategy; balance, bytes, step time",
     run_simulate});

} // namespace
