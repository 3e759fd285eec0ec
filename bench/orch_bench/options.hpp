// SPDX-License-Identifier: Apache-2.0
// A small `--name value` / `--name=value` / `--flag` parser shared by orch-bench subcommands.
#pragma once

#include <cstdint>
#include <iosfwd>
#include <map>
#include <string>
#include <vector>

namespace orch_bench {

/// Declares a subcommand's options, parses its arguments and prints its help. Values are
/// checked when read: get_int / get_double throw input_error naming the flag and the range.
class option_parser {
public:
  /// `usage` is the synopsis line after "usage: orch-bench ", e.g. "simulate --trace FILE ...".
  option_parser(std::string usage, std::string description);

  /// A boolean flag (`--json`).
  void flag(const std::string& name, const std::string& help);
  /// An option with a value (`--ranks R`); `fallback` is its default ("" when required or
  /// optional without default — see required()).
  void value(const std::string& name, const std::string& metavar, const std::string& help,
             const std::string& fallback = "");

  /// Parses `args`. Throws input_error for an unknown option, a missing value or a repeated
  /// option. `--help` / `-h` sets help_requested() and stops parsing.
  void parse(const std::vector<std::string>& args);

  [[nodiscard]] bool help_requested() const noexcept { return help_; }
  void print_help(std::ostream& out) const;

  /// Whether a flag or value option was given on the command line.
  [[nodiscard]] bool given(const std::string& name) const;
  /// The value given, else the default; throws input_error when neither exists.
  [[nodiscard]] std::string get(const std::string& name) const;
  /// get() as an integer in [min, max]; throws input_error otherwise.
  [[nodiscard]] std::int64_t get_int(const std::string& name, std::int64_t min,
                                     std::int64_t max) const;
  /// get() as a finite number in [min, max]; throws input_error otherwise.
  [[nodiscard]] double get_double(const std::string& name, double min, double max) const;

private:
  struct spec {
    bool takes_value = false;
    std::string metavar;
    std::string help;
    std::string fallback;
  };
  std::string usage_;
  std::string description_;
  std::vector<std::string> order_;
  std::map<std::string, spec> specs_;
  std::map<std::string, std::string> values_;
  bool help_ = false;
};

} // namespace orch_bench
