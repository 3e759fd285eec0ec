// SPDX-License-Identifier: Apache-2.0
// orch-bench: measures orch offline on length data. Dispatches to registered subcommands.
#include "command.hpp"

#include <iostream>
#include <string>
#include <vector>

namespace {

void usage(std::ostream& out) {
  out << "usage: orch-bench <command> [options]\n\ncommands:\n";
  for (const auto& [name, c] : orch_bench::commands()) {
    out << "  " << name << std::string(name.size() < 12 ? 12 - name.size() : 1, ' ') << c.summary
        << '\n';
  }
  out << "\n`orch-bench <command> --help` describes a command's options.\n";
}

} // namespace

int main(int argc, char** argv) {
  const std::vector<std::string> all(argv + 1, argv + argc);
  if (all.empty() || all[0] == "--help" || all[0] == "-h" || all[0] == "help") {
    usage(all.empty() ? std::cerr : std::cout);
    return all.empty() ? orch_bench::exit_usage : orch_bench::exit_ok;
  }
  const auto it = orch_bench::commands().find(all[0]);
  if (it == orch_bench::commands().end()) {
    std::cerr << "orch-bench: unknown command '" << all[0] << "'\n\n";
    usage(std::cerr);
    return orch_bench::exit_usage;
  }
  const std::vector<std::string> args(all.begin() + 1, all.end());
  return it->second.run(args, std::cout, std::cerr);
}
