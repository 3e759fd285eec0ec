// SPDX-License-Identifier: Apache-2.0
#include "simulate_cli.hpp"

#include "input_error.hpp"
#include "model_json.hpp"

#include <orch/config.hpp>

#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <ostream>
#include <unistd.h>

// The repository's data folder and bench/python; CMake passes their absolute paths
// (bench/orch_bench/CMakeLists.txt).
#ifndef ORCH_BENCH_DATA_DIR
#define ORCH_BENCH_DATA_DIR "data"
#endif
#ifndef ORCH_BENCH_SCRIPT_DIR
#define ORCH_BENCH_SCRIPT_DIR "bench/python"
#endif

namespace orch_bench {

std::string bundled_trace_path() {
  return std::filesystem::path(std::string(ORCH_BENCH_DATA_DIR) + "/omni_trace.csv")
      .lexically_normal()
      .string();
}

void add_model_options(option_parser& opts) {
  opts.value("model", "FILE.json", "model JSON (orch-bench model prints one to start from)");
  opts.value("preset", "NAME", "built-in model: omni-7b or omni-72b", "omni-7b");
  opts.value("achieved-flops", "F", "achieved FLOP/s per GPU [default: the model's, 4e14]");
  opts.value("backward-factor", "F", "backward / forward FLOPs [default: the model's, 2]");
  opts.value("nvlink-bandwidth", "B",
             "intra-node bytes/s per GPU per direction [default: the model's, 3.6e11]");
  opts.value("network-bandwidth", "B",
             "inter-node bytes/s per GPU per direction [default: the model's, 4e10]");
}

bench_model model_from_options(const option_parser& opts) {
  if (opts.given("model") && opts.given("preset")) {
    throw input_error("give --model or --preset, not both");
  }
  bench_model m =
      opts.given("model") ? load_model_file(opts.get("model")) : preset_model(opts.get("preset"));
  if (opts.given("achieved-flops")) {
    m.sim.achieved_flops = opts.get_double("achieved-flops", 1.0, 1e30);
  }
  if (opts.given("backward-factor")) {
    m.sim.backward_factor = opts.get_double("backward-factor", 0.0, 1e3);
  }
  if (opts.given("nvlink-bandwidth")) {
    m.sim.nvlink_bytes_per_s = opts.get_double("nvlink-bandwidth", 1.0, 1e30);
  }
  if (opts.given("network-bandwidth")) {
    m.sim.network_bytes_per_s = opts.get_double("network-bandwidth", 1.0, 1e30);
  }
  try {
    m.validate();
  } catch (const orch::error& e) {
    throw input_error(e.what());
  }
  return m;
}

void check_trace_fields(const trace& t, const bench_model& m, const std::string& trace_name) {
  const auto s = summarize(t);
  for (std::size_t f = 1; f < field_names.size(); ++f) {
    if (s.items[f] > 0 && m.model.encoder_of_field(std::string(field_names[f])) < 0) {
      throw input_error(trace_name + ": the trace has '" + std::string(field_names[f]) +
                        "' items but no encoder of model '" + m.name + "' consumes that field");
    }
  }
}

std::vector<orch::strategy> parse_strategies(const std::string& list) {
  std::vector<orch::strategy> out;
  std::size_t start = 0;
  while (start <= list.size()) {
    const auto comma = list.find(',', start);
    const std::string name(trim(std::string_view(list).substr(start, comma - start)));
    orch::strategy s{};
    try {
      s = orch::parse_strategy(name);
    } catch (const orch::error& e) {
      throw input_error(std::string("--strategies: ") + e.what());
    }
    for (const auto o : out) {
      if (o == s) {
        throw input_error(cat("--strategies: '", name, "' given twice"));
      }
    }
    out.push_back(s);
    if (comma == std::string::npos) {
      break;
    }
    start = comma + 1;
  }
  return out;
}

std::function<void(int, int)> progress_bar(std::ostream& err, std::string label) {
  if (isatty(STDERR_FILENO) == 0) {
    return {};
  }
  return [&err, label = std::move(label)](int done, int total) {
    constexpr int width = 30;
    const int filled = total > 0 ? done * width / total : width;
    err << '\r' << label << " [" << std::string(static_cast<std::size_t>(filled), '#')
        << std::string(static_cast<std::size_t>(width - filled), '.') << "] " << done << '/'
        << total << " plans" << (done == total ? "\r\033[K" : "") << std::flush;
  };
}

namespace {

std::string shell_quote(const std::string& s) {
  std::string out = "'";
  for (const char c : s) {
    out += c == '\'' ? std::string("'\\''") : std::string(1, c);
  }
  return out + "'";
}

} // namespace

bool plot(const simulate_result& r, const std::string& dir, std::ostream& out, std::ostream& err) {
  std::error_code ec;
  std::filesystem::create_directories(dir, ec);
  const std::string json_path = dir + "/simulate.json";
  {
    std::ofstream f(json_path);
    if (!f) {
      err << "plots: cannot write " << json_path << '\n';
      return false;
    }
    f << to_json(r).dump(2) << '\n';
  }
  if (std::system("python3 -c 'import matplotlib' >/dev/null 2>&1") != 0) {
    err << "plots skipped: python3 with matplotlib not found (wrote " << json_path
        << "; bench/python/plot_simulate.py draws it)\n";
    return true;
  }
  const std::string script = std::string(ORCH_BENCH_SCRIPT_DIR) + "/plot_simulate.py";
  const std::string cmd =
      cat("python3 ", shell_quote(script), ' ', shell_quote(json_path), ' ', shell_quote(dir));
  if (std::system(cmd.c_str()) != 0) {
    err << "plots: " << script << " failed\n";
    return false;
  }
  out << "plots written to " << dir << '\n';
  return true;
}

} // namespace orch_bench
