// SPDX-License-Identifier: Apache-2.0
// `orch-bench model`: prints a built-in model preset (or a model file, checked) as JSON, the
// starting point for a model of one's own.
#include "command.hpp"
#include "input_error.hpp"
#include "model_json.hpp"
#include "options.hpp"

#include <ostream>

namespace {

int run_model(const std::vector<std::string>& args, std::ostream& out, std::ostream& err) {
  orch_bench::option_parser opts("model [--preset NAME | --check FILE.json]",
                                 "Prints a built-in model as JSON (docs/model.md), or checks a "
                                 "model file and prints it normalised.");
  opts.value("preset", "NAME", "omni-7b or omni-72b", "omni-7b");
  opts.value("check", "FILE.json", "a model file to validate");
  try {
    opts.parse(args);
    if (opts.help_requested()) {
      opts.print_help(out);
      return orch_bench::exit_ok;
    }
    if (opts.given("preset") && opts.given("check")) {
      throw orch_bench::input_error("give --preset or --check, not both");
    }
    const auto m = opts.given("check") ? orch_bench::load_model_file(opts.get("check"))
                                       : orch_bench::preset_model(opts.get("preset"));
    out << orch_bench::to_json(m).dump(2) << '\n';
    return orch_bench::exit_ok;
  } catch (const orch_bench::input_error& e) {
    err << "orch-bench model: " << e.what() << '\n';
    return orch_bench::exit_usage;
  }
}

const bool registered = orch_bench::register_command(
    {"model", "print a built-in model preset as JSON (or check a model file)", run_model});

} // namespace
