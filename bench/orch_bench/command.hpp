// SPDX-License-Identifier: Apache-2.0
// orch-bench's subcommand registry: each cmd_<name>.cpp registers one subcommand at static
// initialisation, so subcommands live in their own files and main.cpp never lists them.
#pragma once

#include "input_error.hpp"

#include <orch/config.hpp>

#include <functional>
#include <map>
#include <ostream>
#include <string>
#include <string_view>
#include <vector>

namespace orch_bench {

/// Exit codes shared by all subcommands.
inline constexpr int exit_ok = 0;
inline constexpr int exit_failure = 1; ///< the run failed (I/O, an orch::error)
inline constexpr int exit_usage = 2;   ///< bad arguments or malformed input file

/// A subcommand: arguments after its name, standard output and error streams; returns the
/// process exit code.
using command_fn =
    std::function<int(const std::vector<std::string>& args, std::ostream& out, std::ostream& err)>;

struct command {
  std::string name;
  std::string summary; ///< one line for `orch-bench --help`
  command_fn run;
};

/// All registered subcommands by name.
inline std::map<std::string, command>& commands() {
  static std::map<std::string, command> registry;
  return registry;
}

/// Registers `c`; use as `const bool registered = orch_bench::register_command({...});`.
inline bool register_command(command c) {
  auto name = c.name;
  commands().emplace(std::move(name), std::move(c));
  return true;
}

/// Runs a subcommand's `work` (which returns the exit code) and reports what it throws as
/// "orch-bench <name>: <message>" on `err`: bad arguments or input files (input_error) exit
/// with exit_usage, a failed run (orch::error) with exit_failure.
template <class Work>
int exit_code_of(std::string_view name, std::ostream& err, Work&& work) {
  try {
    return work();
  } catch (const input_error& e) {
    err << "orch-bench " << name << ": " << e.what() << '\n';
    return exit_usage;
  } catch (const orch::error& e) {
    err << "orch-bench " << name << ": " << e.what() << '\n';
    return exit_failure;
  }
}

} // namespace orch_bench
