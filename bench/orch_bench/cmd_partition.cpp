// SPDX-License-Identifier: Apache-2.0
// `orch-bench partition`: partitions one instance file with orch or a peer, prints one line
// (or one JSON object) with the max load, the lower bound and the time.
#include "command.hpp"
#include "input_error.hpp"
#include "instance_file.hpp"
#include "options.hpp"
#include "partition_runner.hpp"

#include <orch/config.hpp>
#include <orch/partition/algorithm.hpp>

#include <cstdint>
#include <exception>
#include <iomanip>
#include <limits>
#include <ostream>
#include <string>
#include <vector>

namespace {

int run_partition(const std::vector<std::string>& args, std::ostream& out, std::ostream& err) {
  orch_bench::option_parser opts(
      "partition --instance FILE [--format pcmax|costs|detect] [--bins K] [--algo NAME]\n"
      "                            [--budget N] [--equal-counts] [--max-items-per-bin N]\n"
      "                            [--repeat N] [--json]",
      "Partitions the item costs of FILE into K bins, minimising the largest bin, and prints\n"
      "the max load, the lower bound, whether the result is proven optimal and the time of\n"
      "the partition call (median of --repeat runs). With --json: one object with the keys\n"
      "algo, n, bins, max_load, lower_bound, proven_optimal, time_ms, selected (the\n"
      "algorithm chain that produced the result).\n"
      "Formats: pcmax = line 1 'p p_cmax <n> <m>', line 2 the n costs then 0, later lines\n"
      "ignored; costs = one integer per line (needs --bins). Malformed files: exit code 2.\n"
      "Peers (--algo): " +
          orch_bench::peer_names_joined());
  opts.value("instance", "FILE", "the instance file");
  opts.value("format", "F", "pcmax, costs or detect (pcmax when line 1 starts with 'p')", "detect");
  opts.value("bins", "K", "number of bins (default: m of a pcmax file)");
  opts.value("algo", "NAME", "auto, an orch algorithm (lpt, kk, multifit, ...) or a peer", "auto");
  opts.value("budget", "N", "work budget of orch's search, in nodes + moves (default: orch's)");
  opts.flag("equal-counts", "every bin gets n/k items (differing by at most one)");
  opts.value("max-items-per-bin", "N", "at most N items in any bin");
  opts.value("repeat", "N", "runs of the partition call; the median time is reported", "1");
  opts.flag("json", "print one JSON object instead of a line");
  std::string algo;
  std::string path;
  orch_bench::instance_format format = orch_bench::instance_format::detect;
  std::int64_t bins = 0;
  std::int64_t repeat = 1;
  orch_bench::run_request request;
  orch_bench::instance inst;
  try {
    opts.parse(args);
    if (opts.help_requested()) {
      opts.print_help(out);
      return orch_bench::exit_ok;
    }
    path = opts.get("instance");
    algo = opts.get("algo");
    if (!orch_bench::is_peer_name(algo)) {
      try {
        static_cast<void>(orch::parse_partition_algorithm(algo));
      } catch (const orch::invalid_argument& e) {
        throw orch_bench::input_error("option --algo: " + std::string(e.what()) + ", or a peer (" +
                                      orch_bench::peer_names_joined() + ")");
      }
    }
    if (!orch_bench::parse_instance_format(opts.get("format"), format)) {
      throw orch_bench::input_error("option --format: '" + opts.get("format") +
                                    "' is not pcmax, costs or detect");
    }
    if (opts.given("bins")) {
      bins = opts.get_int("bins", 1, std::numeric_limits<orch::rank_t>::max());
    }
    repeat = opts.get_int("repeat", 1, 1'000'000);
    request.algorithm = algo;
    request.equal_counts = opts.given("equal-counts");
    if (opts.given("budget")) {
      request.work_budget = opts.get_int("budget", 0, std::numeric_limits<std::int64_t>::max());
      request.budget_given = true;
    }
    if (opts.given("max-items-per-bin")) {
      request.max_items_per_bin =
          opts.get_int("max-items-per-bin", 1, std::numeric_limits<std::int64_t>::max());
    }
    if (orch_bench::is_peer_name(algo) &&
        (request.equal_counts || request.max_items_per_bin > 0 || request.budget_given)) {
      throw orch_bench::input_error(
          "--equal-counts, --max-items-per-bin and --budget apply to orch's algorithms, not to "
          "the peer '" +
          algo + "'");
    }
    inst = orch_bench::read_instance_file(path, format);
    if (bins == 0) {
      if (inst.format == orch_bench::instance_format::costs) {
        throw orch_bench::input_error("--bins K is required for a costs file");
      }
      bins = inst.bins;
    }
  } catch (const orch_bench::input_error& e) {
    err << "orch-bench partition: " << e.what() << "\n";
    return orch_bench::exit_usage;
  } catch (const std::exception& e) {
    err << "orch-bench partition: " << e.what() << "\n"; // the file cannot be read
    return orch_bench::exit_failure;
  }

  orch_bench::run_outcome outcome;
  try {
    outcome = orch_bench::run_algorithm(request, inst.costs, static_cast<orch::rank_t>(bins),
                                        static_cast<int>(repeat));
  } catch (const orch::invalid_argument& e) {
    // An unknown algorithm name, or an option the input cannot take (n not a multiple of k).
    err << "orch-bench partition: " << e.what() << "\n";
    return orch_bench::exit_usage;
  } catch (const orch::error& e) {
    err << "orch-bench partition: " << e.what() << "\n";
    return orch_bench::exit_failure;
  }
  const auto& r = outcome.result;
  if (opts.given("json")) {
    out << "{\"algo\":\"" << orch_bench::json_escape(algo) << "\",\"n\":" << inst.costs.size()
        << ",\"bins\":" << bins << ",\"max_load\":" << r.max_load
        << ",\"lower_bound\":" << r.lower_bound
        << ",\"proven_optimal\":" << (r.proven_optimal ? "true" : "false")
        << ",\"time_ms\":" << std::fixed << std::setprecision(4) << outcome.median_ms
        << ",\"selected\":\"" << orch_bench::json_escape(r.algorithm) << "\"}\n";
  } else {
    out << algo << ": n=" << inst.costs.size() << " bins=" << bins << " max_load=" << r.max_load
        << " lower_bound=" << r.lower_bound << " ratio=" << std::fixed << std::setprecision(6)
        << r.ratio_to_lower_bound() << " proven_optimal=" << (r.proven_optimal ? "yes" : "no")
        << " time=" << std::setprecision(3) << outcome.median_ms << " ms";
    if (r.algorithm != algo) {
      out << " (" << r.algorithm << ")";
    }
    out << "\n";
  }
  return orch_bench::exit_ok;
}

const bool registered = orch_bench::register_command(
    {"partition", "partition an instance file (pcmax or costs) with orch or a peer",
     run_partition});

} // namespace
