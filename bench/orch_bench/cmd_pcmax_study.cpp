// SPDX-License-Identifier: Apache-2.0
// `orch-bench pcmax-study`: the quality study of orch's partitioners and the peers on
// P||Cmax instances with few items per bin (n/k from 2 to 5), against the optimum found by
// orch's exact solver.
#include "command.hpp"
#include "input_error.hpp"
#include "instance_file.hpp"
#include "options.hpp"
#include "partition_runner.hpp"
#include "pcmax_instances.hpp"

#include <orch/config.hpp>
#include <orch/partition/partition.hpp>
#include <orch/quality.hpp>

#include <algorithm>
#include <chrono>
#include <cstdint>
#include <fstream>
#include <iomanip>
#include <limits>
#include <map>
#include <ostream>
#include <sstream>
#include <string>
#include <vector>

namespace {

using orch::cost_t;

/// Comma-separated list to its items.
std::vector<std::string> split_list(const std::string& text) {
  std::vector<std::string> out;
  std::string item;
  std::istringstream in(text);
  while (std::getline(in, item, ',')) {
    if (!item.empty()) {
      out.push_back(item);
    }
  }
  return out;
}

std::vector<std::int64_t> int_list(const std::string& option, const std::string& text,
                                   std::int64_t lo, std::int64_t hi) {
  std::vector<std::int64_t> out;
  for (const auto& item : split_list(text)) {
    const auto v = orch_bench::parse_int(item);
    if (!v || *v < lo || *v > hi) {
      throw orch_bench::input_error("option --" + option + ": '" + item +
                                    "' is not an integer in [" + std::to_string(lo) + ", " +
                                    std::to_string(hi) + "]");
    }
    out.push_back(*v);
  }
  if (out.empty()) {
    throw orch_bench::input_error("option --" + option + ": empty list");
  }
  return out;
}

/// Gap, optimality and time of one algorithm over a group of instances.
struct tally {
  int instances = 0;  ///< with a known optimum
  int optimal = 0;    ///< max load equal to the optimum
  int proven = 0;     ///< the algorithm itself claimed proven optimality
  double gap_sum = 0; ///< Σ (max − opt) / opt
  double worst_gap = 0;
  std::vector<double> times_ms; ///< every instance, known optimum or not

  void add(cost_t max_load, cost_t opt, bool known, bool claimed, double ms) {
    times_ms.push_back(ms);
    if (!known) {
      return;
    }
    ++instances;
    const double gap =
        opt == 0 ? 0.0 : static_cast<double>(max_load - opt) / static_cast<double>(opt);
    gap_sum += gap;
    worst_gap = std::max(worst_gap, gap);
    optimal += max_load == opt ? 1 : 0;
    proven += claimed ? 1 : 0;
  }
  [[nodiscard]] double mean_gap_pct() const {
    return instances == 0 ? 0.0 : 100.0 * gap_sum / instances;
  }
  [[nodiscard]] double optimal_pct() const {
    return instances == 0 ? 0.0 : 100.0 * optimal / instances;
  }
  [[nodiscard]] double median_ms() const {
    if (times_ms.empty()) {
      return 0.0;
    }
    auto t = times_ms;
    std::sort(t.begin(), t.end());
    const std::size_t m = t.size();
    return m % 2 == 1 ? t[m / 2] : 0.5 * (t[m / 2 - 1] + t[m / 2]);
  }
  [[nodiscard]] double max_ms() const {
    return times_ms.empty() ? 0.0 : *std::max_element(times_ms.begin(), times_ms.end());
  }
  [[nodiscard]] long slower_than(double ms) const {
    return std::count_if(times_ms.begin(), times_ms.end(), [ms](double t) { return t > ms; });
  }
};

std::string ratio_label(int r2) {
  std::ostringstream s;
  s << r2 / 2;
  if (r2 % 2 != 0) {
    s << ".5";
  }
  return s.str();
}

void print_table(std::ostream& out, const std::string& title, const std::vector<std::string>& algos,
                 const std::map<std::string, tally>& by_algo, double slow_ms) {
  out << "\n" << title << "\n\n";
  out << "| algorithm | instances | mean gap % | worst gap % | optimal % | median ms | max ms | > "
      << slow_ms << " ms |\n"
      << "| --- | ---: | ---: | ---: | ---: | ---: | ---: | ---: |\n";
  for (const auto& a : algos) {
    const auto it = by_algo.find(a);
    if (it == by_algo.end()) {
      continue;
    }
    const tally& t = it->second;
    out << "| " << a << " | " << t.instances << " | " << std::fixed << std::setprecision(3)
        << t.mean_gap_pct() << " | " << std::setprecision(2) << 100.0 * t.worst_gap << " | "
        << std::setprecision(1) << t.optimal_pct() << " | " << std::setprecision(3) << t.median_ms()
        << " | " << t.max_ms() << " | " << t.slower_than(slow_ms) << " |\n";
  }
}

void print_json_group(std::ostream& out, const std::map<std::string, tally>& by_algo) {
  out << "{";
  bool first = true;
  for (const auto& [name, t] : by_algo) {
    out << (first ? "" : ",") << "\"" << orch_bench::json_escape(name)
        << "\":{\"instances\":" << t.instances << ",\"mean_gap_pct\":" << std::setprecision(6)
        << t.mean_gap_pct() << ",\"worst_gap_pct\":" << 100.0 * t.worst_gap
        << ",\"optimal_pct\":" << t.optimal_pct() << ",\"median_ms\":" << t.median_ms()
        << ",\"max_ms\":" << t.max_ms() << "}";
    first = false;
  }
  out << "}";
}

int run_study(const std::vector<std::string>& args, std::ostream& out, std::ostream& err) {
  orch_bench::option_parser opts(
      "pcmax-study [--replicates N] [--bins LIST] [--ratios LIST] [--seed X]\n"
      "                            [--exact-budget N] [--algos LIST] [--repeat N] [--slow-ms T]\n"
      "                            [--write-dir DIR] [--json]",
      "Generates P||Cmax instances with few items per bin (every family of\n"
      "orch_bench::pcmax_families() x k in --bins x n/k in --ratios/2 x --replicates seeds),\n"
      "computes the optimum with orch's exact solver (algorithm 'exact', --exact-budget work\n"
      "units), and reports for each algorithm the mean and worst gap to the optimum, the share\n"
      "of instances solved optimally and the time per instance (median, max). Instances whose\n"
      "optimum is unknown (the exact search ran out of budget and no algorithm reached a\n"
      "proven bound) count in the times only; their number is reported.");
  opts.value("replicates", "N", "seeds per (family, k, n/k) cell", "5");
  opts.value("bins", "LIST", "bin counts k", "4,8,16,32");
  opts.value("ratios", "LIST", "2 * n/k values (4 = two items per bin)", "4,5,6,7,8,10");
  opts.value("seed", "X", "base seed of the suite", "20260301");
  opts.value("exact-budget", "N", "work budget of the exact solver per instance", "50000000");
  opts.value("algos", "LIST",
             "algorithms: orch names (auto, lpt, kk, multifit, ...) and peer names",
             "auto,lpt,kk,multifit,verl_kk,veomni_greedy,veomni_greedy_unsorted,"
             "sorted_round_robin");
  opts.value("repeat", "N", "runs per algorithm and instance; the median time counts", "1");
  opts.value("slow-ms", "T", "count the instances slower than T ms", "50");
  opts.value("write-dir", "DIR", "also write every instance there in the pcmax format");
  opts.flag("json", "print one JSON object instead of tables");
  std::vector<std::string> algos;
  std::vector<orch::rank_t> bins;
  std::vector<int> ratios;
  std::int64_t replicates = 0;
  std::int64_t seed = 0;
  std::int64_t exact_budget = 0;
  std::int64_t repeat = 1;
  double slow_ms = 50;
  try {
    opts.parse(args);
    if (opts.help_requested()) {
      opts.print_help(out);
      return orch_bench::exit_ok;
    }
    replicates = opts.get_int("replicates", 1, 1000);
    seed = opts.get_int("seed", 0, std::numeric_limits<std::int64_t>::max());
    exact_budget = opts.get_int("exact-budget", 1, std::numeric_limits<std::int64_t>::max());
    repeat = opts.get_int("repeat", 1, 1000);
    slow_ms = opts.get_double("slow-ms", 0, 1e9);
    for (const auto k : int_list("bins", opts.get("bins"), 1, 4096)) {
      bins.push_back(static_cast<orch::rank_t>(k));
    }
    for (const auto r : int_list("ratios", opts.get("ratios"), 2, 64)) {
      ratios.push_back(static_cast<int>(r));
    }
    algos = split_list(opts.get("algos"));
    if (algos.empty()) {
      throw orch_bench::input_error("option --algos: empty list");
    }
  } catch (const orch_bench::input_error& e) {
    err << "orch-bench pcmax-study: " << e.what() << "\n";
    return orch_bench::exit_usage;
  }

  const auto suite = orch_bench::pcmax_suite(static_cast<std::uint64_t>(seed),
                                             static_cast<int>(replicates), bins, ratios);
  if (opts.given("write-dir")) {
    for (const auto& inst : suite) {
      const std::string path =
          opts.get("write-dir") + "/" + inst.family + "_k" + std::to_string(inst.bins) + "_r" +
          std::to_string(inst.items_per_bin_x2) + "_" + std::to_string(inst.replicate) + ".txt";
      std::ofstream file(path);
      if (!file) {
        err << "orch-bench pcmax-study: cannot write '" << path << "'\n";
        return orch_bench::exit_failure;
      }
      orch_bench::write_pcmax(file, inst.costs, inst.bins);
    }
  }

  std::map<std::string, tally> overall;
  // Instances without a proven optimum: gap to the best proven lower bound instead (an upper
  // bound on the gap to the optimum), "optimal" meaning "at that bound".
  std::map<std::string, tally> open_vs_bound;
  std::map<std::string, std::map<std::string, tally>> by_family;
  std::map<int, std::map<std::string, tally>> by_ratio;
  tally exact_tally;
  // The slowest instances of the first algorithm, for the report.
  struct timed {
    double ms;
    std::string label;
  };
  std::vector<timed> first_times;
  int unknown = 0;
  int exact_solved = 0;
  int inconsistent = 0;
  std::vector<std::string> skipped;
  for (const auto& inst : suite) {
    // The reference: orch's exact solver with a generous budget.
    orch::partition_options exact;
    exact.algorithm = orch::partition_algorithm::exact;
    exact.work_budget = exact_budget;
    const auto start = std::chrono::steady_clock::now();
    const auto ref = orch::partition(inst.costs, inst.bins, exact);
    const double exact_ms =
        std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - start).count();
    cost_t best_bound = std::max(ref.lower_bound, orch::lower_bound(inst.costs, inst.bins));
    cost_t best_max = ref.max_load;
    bool known = ref.proven_optimal;
    exact_solved += ref.proven_optimal ? 1 : 0;

    struct run {
      std::string algo;
      orch::partition_result result;
      double ms;
    };
    std::vector<run> runs;
    for (const auto& a : algos) {
      if (std::find(skipped.begin(), skipped.end(), a) != skipped.end()) {
        continue;
      }
      orch_bench::run_request request;
      request.algorithm = a;
      try {
        auto o =
            orch_bench::run_algorithm(request, inst.costs, inst.bins, static_cast<int>(repeat));
        runs.push_back({a, std::move(o.result), o.median_ms});
      } catch (const orch::invalid_argument& e) {
        err << "orch-bench pcmax-study: skipping '" << a << "': " << e.what() << "\n";
        skipped.push_back(a);
        continue;
      }
      const auto& r = runs.back().result;
      best_bound = std::max(best_bound, r.lower_bound);
      best_max = std::min(best_max, r.max_load);
      known = known || r.proven_optimal;
    }
    // The optimum: the plain bound for the constructed families (by construction), else an
    // exact search that finished, or any assignment meeting a proven bound.
    cost_t opt = 0;
    if (inst.optimum_known) {
      known = true;
      opt = orch::lower_bound(inst.costs, inst.bins);
    } else {
      known = known || best_max == best_bound;
      opt = known ? best_max : 0;
    }
    if (known && ref.proven_optimal && ref.max_load != opt) {
      ++inconsistent; // the exact solver claimed an optimum that is not one: a bug
    }
    if (!runs.empty() && runs.front().algo == algos.front()) {
      std::ostringstream label;
      label << inst.family << " k=" << inst.bins << " n=" << inst.costs.size() << " seed#"
            << inst.replicate << ": " << runs.front().result.algorithm << ", max "
            << runs.front().result.max_load;
      if (known) {
        label << " (optimum " << opt << ")";
      }
      first_times.push_back({runs.front().ms, label.str()});
    }
    for (const auto& r : runs) {
      if (known && r.result.max_load < opt) {
        ++inconsistent;
      }
      if (r.result.proven_optimal && known && r.result.max_load != opt) {
        ++inconsistent;
      }
      overall[r.algo].add(r.result.max_load, opt, known, r.result.proven_optimal, r.ms);
      by_family[inst.family][r.algo].add(r.result.max_load, opt, known, r.result.proven_optimal,
                                         r.ms);
      by_ratio[inst.items_per_bin_x2][r.algo].add(r.result.max_load, opt, known,
                                                  r.result.proven_optimal, r.ms);
    }
    exact_tally.add(ref.max_load, opt, known, ref.proven_optimal, exact_ms);
    unknown += known ? 0 : 1;
    if (!known) {
      for (const auto& r : runs) {
        open_vs_bound[r.algo].add(r.result.max_load, best_bound, true, false, r.ms);
      }
    }
  }
  std::vector<std::string> shown;
  for (const auto& a : algos) {
    if (std::find(skipped.begin(), skipped.end(), a) == skipped.end()) {
      shown.push_back(a);
    }
  }

  if (opts.given("json")) {
    out << "{\"instances\":" << suite.size()
        << ",\"optimum_known\":" << static_cast<int>(suite.size()) - unknown
        << ",\"exact_proven\":" << exact_solved << ",\"inconsistent\":" << inconsistent
        << ",\"exact_median_ms\":" << exact_tally.median_ms()
        << ",\"exact_max_ms\":" << exact_tally.max_ms() << ",\"overall\":";
    print_json_group(out, overall);
    out << ",\"by_family\":{";
    bool first = true;
    for (const auto& [family, group] : by_family) {
      out << (first ? "" : ",") << "\"" << family << "\":";
      print_json_group(out, group);
      first = false;
    }
    out << "},\"open_vs_bound\":";
    print_json_group(out, open_vs_bound);
    out << ",\"by_items_per_bin\":{";
    first = true;
    for (const auto& [r2, group] : by_ratio) {
      out << (first ? "" : ",") << "\"" << ratio_label(r2) << "\":";
      print_json_group(out, group);
      first = false;
    }
    out << "}}\n";
  } else {
    out << "pcmax-study: " << suite.size() << " instances (" << orch_bench::pcmax_families().size()
        << " families x k in {" << opts.get("bins") << "} x 2n/k in {" << opts.get("ratios")
        << "} x " << replicates << " seeds, base seed " << seed << ")\n"
        << "optimum known for " << static_cast<int>(suite.size()) - unknown
        << " (exact solver proved " << exact_solved << "; budget " << exact_budget
        << " work units, median " << std::fixed << std::setprecision(2) << exact_tally.median_ms()
        << " ms, max " << exact_tally.max_ms() << " ms per instance)\n"
        << "inconsistencies (an algorithm below a proven optimum): " << inconsistent << "\n";
    print_table(out, "All instances with a known optimum", shown, overall, slow_ms);
    for (const auto& family : orch_bench::pcmax_families()) {
      const auto it = by_family.find(std::string(family.name));
      if (it != by_family.end()) {
        print_table(out,
                    "Family " + std::string(family.name) + ": " + std::string(family.description),
                    shown, it->second, slow_ms);
      }
    }
    for (const auto& [r2, group] : by_ratio) {
      print_table(out, "n/k = " + ratio_label(r2), shown, group, slow_ms);
    }
    if (!open_vs_bound.empty()) {
      print_table(out,
                  "Instances without a proven optimum: gap to the best proven lower bound "
                  "(\"optimal\" = at that bound)",
                  shown, open_vs_bound, slow_ms);
    }
    std::sort(first_times.begin(), first_times.end(),
              [](const timed& a, const timed& b) { return a.ms > b.ms; });
    out << "\nSlowest instances for " << algos.front() << ":\n";
    for (std::size_t i = 0; i < std::min<std::size_t>(8, first_times.size()); ++i) {
      out << "  " << std::setprecision(1) << first_times[i].ms << " ms  " << first_times[i].label
          << "\n";
    }
  }
  return inconsistent == 0 ? orch_bench::exit_ok : orch_bench::exit_failure;
}

const bool registered = orch_bench::register_command(
    {"pcmax-study", "quality of orch and the peers on P||Cmax instances vs the optimum",
     run_study});

} // namespace
