// SPDX-License-Identifier: Apache-2.0
// Errors in what a user gives orch-bench (files, flags) and the number parsing they share.
#pragma once

#include <cstddef>
#include <cstdint>
#include <optional>
#include <sstream>
#include <stdexcept>
#include <string>
#include <string_view>

namespace orch_bench {

/// A malformed input file or argument. The message names the source (a file name and line
/// number, or a flag); commands turn it into exit code 2 (orch_bench::exit_usage).
class input_error : public std::runtime_error {
public:
  using std::runtime_error::runtime_error;
};

/// Concatenates streamable parts into one string. Used for messages instead of chains of
/// std::string operator+, on which GCC 12 at -O2 reports a false -Wrestrict (GCC bug 105329).
template <class... Parts>
[[nodiscard]] std::string cat(const Parts&... parts) {
  std::ostringstream out;
  (out << ... << parts);
  return out.str();
}

/// Throws input_error "SOURCE:LINE: MESSAGE" (line 0: "SOURCE: MESSAGE").
[[noreturn]] void fail_input(std::string_view source, std::size_t line, std::string_view message);

/// Leading and trailing spaces, tabs and carriage returns removed.
[[nodiscard]] std::string_view trim(std::string_view s) noexcept;

/// A decimal integer (optional leading '-', digits only, no spaces), or nothing when `s` is
/// not one or does not fit in int64.
[[nodiscard]] std::optional<std::int64_t> parse_int(std::string_view s) noexcept;

/// A finite decimal or scientific floating-point number, or nothing.
[[nodiscard]] std::optional<double> parse_double(std::string_view s) noexcept;

} // namespace orch_bench
