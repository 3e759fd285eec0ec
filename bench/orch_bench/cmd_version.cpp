// SPDX-License-Identifier: Apache-2.0
// `orch-bench version`: the orch version the tool was built with.
#include "command.hpp"

#include <orch/config.hpp>

#include <ostream>

namespace {

int run_version(const std::vector<std::string>& args, std::ostream& out, std::ostream& err) {
  if (!args.empty()) {
    err << "orch-bench version: takes no arguments\n";
    return orch_bench::exit_usage;
  }
  out << "orch-bench " << ORCH_VERSION_MAJOR << '.' << ORCH_VERSION_MINOR << '.'
      << ORCH_VERSION_PATCH << '\n';
  return orch_bench::exit_ok;
}

const bool registered =
    orch_bench::register_command({"version", "print the orch version", run_version});

} // namespace
