// SPDX-License-Identifier: Apache-2.0
// `orch-bench make-trace`: builds a length trace from the real length data with a recipe.
#include "command.hpp"
#include "input_error.hpp"
#include "options.hpp"
#include "recipes.hpp"
#include "trace.hpp"

#include <fstream>
#include <iomanip>
#include <ostream>
#include <sstream>

namespace {

int run_make_trace(const std::vector<std::string>& args, std::ostream& out, std::ostream& err) {
  std::string recipe_list;
  for (const auto& r : orch_bench::recipes()) {
    recipe_list += "\n  " + r.name + ": " + r.description;
    for (const auto& p : r.parts) {
      std::ostringstream share;
      share << std::setw(3) << static_cast<int>(p.share * 100.0 + 0.5);
      recipe_list += "\n    " + share.str() + " % " + p.kind + ": " + p.description;
    }
  }
  orch_bench::option_parser opts(
      "make-trace --recipe NAME --out FILE [--data DIR] [--examples N] [--seed X]",
      orch_bench::cat("Builds a length trace (docs/trace-format.md) from the per-example length "
                      "data in DIR.\nRecipes:",
                      recipe_list));
  opts.value("recipe", "NAME", "the mix of example kinds (omni, vision)");
  opts.value("out", "FILE", "where to write the trace CSV");
  opts.value("data", "DIR", "the length data folder", orch_bench::default_data_dir());
  opts.value("examples", "N", "examples in the trace", "20000");
  opts.value("seed", "X", "random seed", "1");
  try {
    opts.parse(args);
    if (opts.help_requested()) {
      opts.print_help(out);
      return orch_bench::exit_ok;
    }
    const std::string name = opts.get("recipe");
    const std::string path = opts.get("out");
    const std::string data = opts.get("data");
    const auto examples = opts.get_int("examples", 1, 100'000'000);
    const auto seed = opts.get_int("seed", 0, std::numeric_limits<std::int64_t>::max());
    const auto t = orch_bench::make_trace(name, data, static_cast<std::size_t>(examples),
                                          static_cast<std::uint64_t>(seed));
    std::ofstream file(path);
    if (!file) {
      err << "orch-bench make-trace: cannot write '" << path << "'\n";
      return orch_bench::exit_failure;
    }
    const std::vector<std::string> comment{
        orch_bench::cat("orch length trace (docs/trace-format.md), recipe '", name, "'"),
        orch_bench::cat("regenerate: orch-bench make-trace --recipe ", name, " --examples ",
                        std::to_string(examples), " --seed ", std::to_string(seed), " --out FILE"),
        "lengths derived from public datasets; see SOURCES.md of the data folder"};
    orch_bench::write_trace(file, t, comment);
    file.close();
    if (!file) {
      err << "orch-bench make-trace: error writing '" << path << "'\n";
      return orch_bench::exit_failure;
    }
    const auto s = orch_bench::summarize(t);
    out << "wrote " << path << ": " << s.examples << " examples, recipe " << name << ", seed "
        << seed << "\n";
    out << "field   examples  items     mean length  max length\n";
    for (std::size_t f = 0; f < 4; ++f) {
      const double mean =
          s.items[f] == 0 ? 0.0 : static_cast<double>(s.total[f]) / static_cast<double>(s.items[f]);
      out << std::left << std::setw(8) << orch_bench::field_names[f] << std::right << std::setw(8)
          << s.examples_with[f] << std::setw(8) << s.items[f] << std::setw(14) << std::fixed
          << std::setprecision(1) << mean << std::setw(12) << s.max_length[f] << '\n';
    }
    return orch_bench::exit_ok;
  } catch (const orch_bench::input_error& e) {
    err << "orch-bench make-trace: " << e.what() << '\n';
    return orch_bench::exit_usage;
  }
}

const bool registered = orch_bench::register_command(
    {"make-trace", "build a length trace from the length data in data/ with a recipe",
     run_make_trace});

} // namespace
