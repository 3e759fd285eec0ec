// SPDX-License-Identifier: Apache-2.0
#include "input_error.hpp"

#include <charconv>
#include <cmath>
#include <cstdlib>
#include <string>
#include <system_error>

namespace orch_bench {

void fail_input(std::string_view source, std::size_t line, std::string_view message) {
  std::string what(source);
  if (line > 0) {
    what += ':';
    what += std::to_string(line);
  }
  what += ": ";
  what += message;
  throw input_error(what);
}

std::string_view trim(std::string_view s) noexcept {
  const auto blank = [](char c) { return c == ' ' || c == '\t' || c == '\r' || c == '\n'; };
  while (!s.empty() && blank(s.front())) {
    s.remove_prefix(1);
  }
  while (!s.empty() && blank(s.back())) {
    s.remove_suffix(1);
  }
  return s;
}

std::optional<std::int64_t> parse_int(std::string_view s) noexcept {
  if (s.empty() || (s.front() == '+')) {
    return std::nullopt;
  }
  std::int64_t value = 0;
  const auto* end = s.data() + s.size();
  const auto [ptr, ec] = std::from_chars(s.data(), end, value);
  if (ec != std::errc{} || ptr != end) {
    return std::nullopt;
  }
  return value;
}

std::optional<double> parse_double(std::string_view s) noexcept {
  if (s.empty() || s.size() > 64) {
    return std::nullopt;
  }
  // strtod needs a terminated string; from_chars for double is fine in libstdc++ 12 but not
  // in libc++ 14, and clang builds may use either.
  char buffer[65];
  s.copy(buffer, s.size());
  buffer[s.size()] = '\0';
  for (std::size_t i = 0; i < s.size(); ++i) {
    const char c = buffer[i];
    const bool ok =
        (c >= '0' && c <= '9') || c == '.' || c == '-' || c == '+' || c == 'e' || c == 'E';
    if (!ok) {
      return std::nullopt; // rejects "inf", "nan", hex floats and spaces
    }
  }
  char* end = nullptr;
  const double value = std::strtod(buffer, &end);
  if (end != buffer + s.size() || !std::isfinite(value)) {
    return std::nullopt;
  }
  return value;
}

} // namespace orch_bench
