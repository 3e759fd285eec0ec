// SPDX-License-Identifier: Apache-2.0
#include "instance_file.hpp"

#include <charconv>
#include <cstdint>
#include <fstream>
#include <istream>
#include <limits>
#include <ostream>
#include <sstream>
#include <system_error>

namespace orch_bench {

namespace {

/// The whitespace-separated tokens of `line`.
std::vector<std::string_view> tokens_of(std::string_view line) {
  std::vector<std::string_view> out;
  std::size_t i = 0;
  while (i < line.size()) {
    while (i < line.size() && (line[i] == ' ' || line[i] == '\t' || line[i] == '\r')) {
      ++i;
    }
    const std::size_t start = i;
    while (i < line.size() && line[i] != ' ' && line[i] != '\t' && line[i] != '\r') {
      ++i;
    }
    if (i > start) {
      out.push_back(line.substr(start, i - start));
    }
  }
  return out;
}

/// Where parsing is: the source's name and the current 1-based line.
struct cursor {
  std::string_view source;
  std::size_t line = 0;
  [[noreturn]] void fail(const std::string& message) const {
    throw parse_error(source, line, message);
  }
};

/// `token` as a signed 64-bit integer, or a parse_error at `at` saying what `what` is.
std::int64_t to_integer(std::string_view token, const cursor& at, const std::string& what) {
  std::int64_t value = 0;
  const auto [end, ec] = std::from_chars(token.data(), token.data() + token.size(), value);
  if (ec == std::errc::result_out_of_range) {
    at.fail(what + " '" + std::string(token) + "' does not fit a 64-bit integer");
  }
  if (ec != std::errc() || end != token.data() + token.size()) {
    at.fail(what + " '" + std::string(token) + "' is not an integer");
  }
  return value;
}

std::string ordinal_cost(std::size_t i) {
  return "cost " + std::to_string(i + 1);
}

instance parse_pcmax(std::istream& in, std::string_view source) {
  instance result;
  result.format = instance_format::pcmax;
  std::string text;
  cursor at{source, 1};
  // Line 1: the header. Blank lines are not allowed before it: the format fixes the lines.
  if (!std::getline(in, text)) {
    at.fail("empty file: expected 'p p_cmax <n> <m>'");
  }
  const auto head = tokens_of(text);
  if (head.size() != 4 || head[0] != "p" || head[1] != "p_cmax") {
    at.fail("expected 'p p_cmax <n> <m>', found '" + text + "'");
  }
  const std::int64_t n = to_integer(head[2], at, "item count n");
  const std::int64_t m = to_integer(head[3], at, "machine count m");
  if (n < 0) {
    at.fail("item count n must not be negative, got " + std::to_string(n));
  }
  if (m <= 0 || m > std::numeric_limits<orch::rank_t>::max()) {
    at.fail("machine count m must be in [1, 2^31 - 1], got " + std::to_string(m));
  }
  result.bins = static_cast<orch::rank_t>(m);
  // Line 2: n costs and the terminating 0.
  at.line = 2;
  if (!std::getline(in, text)) {
    at.fail("missing: expected " + std::to_string(n) +
            " costs followed by 0, but the file ends after line 1");
  }
  const auto body = tokens_of(text);
  const auto count = static_cast<std::size_t>(n);
  if (body.size() != count + 1) {
    at.fail("expected " + std::to_string(n) + " costs followed by 0, found " +
            std::to_string(body.size()) + " numbers");
  }
  result.costs.reserve(count);
  for (std::size_t i = 0; i < count; ++i) {
    const std::int64_t c = to_integer(body[i], at, ordinal_cost(i));
    if (c < 0) {
      at.fail(ordinal_cost(i) + " is negative (" + std::to_string(c) + ")");
    }
    result.costs.push_back(c);
  }
  if (to_integer(body[count], at, "terminator") != 0) {
    at.fail("the costs must end with 0, found '" + std::string(body[count]) + "'");
  }
  return result;
}

instance parse_costs(std::istream& in, std::string_view source) {
  instance result;
  result.format = instance_format::costs;
  std::string text;
  cursor at{source, 0};
  while (std::getline(in, text)) {
    ++at.line;
    const auto tokens = tokens_of(text);
    if (tokens.empty()) {
      continue;
    }
    if (tokens.size() != 1) {
      at.fail("expected one cost per line, found " + std::to_string(tokens.size()) + " tokens");
    }
    const std::int64_t c = to_integer(tokens[0], at, "cost");
    if (c < 0) {
      at.fail("cost is negative (" + std::to_string(c) + ")");
    }
    result.costs.push_back(c);
  }
  return result;
}

} // namespace

parse_error::parse_error(std::string_view source, std::size_t line, std::string_view message)
    : input_error(std::string(source) + ":" + std::to_string(line) + ": " + std::string(message)),
      line_(line) {}

bool parse_instance_format(std::string_view name, instance_format& out) {
  if (name == "pcmax") {
    out = instance_format::pcmax;
  } else if (name == "costs") {
    out = instance_format::costs;
  } else if (name == "detect") {
    out = instance_format::detect;
  } else {
    return false;
  }
  return true;
}

instance parse_instance(std::istream& in, instance_format format, std::string_view source) {
  if (format == instance_format::detect) {
    // Read everything once: detection looks at the first non-blank line, parsing starts over.
    std::ostringstream all;
    all << in.rdbuf();
    const std::string text = all.str();
    std::istringstream probe(text);
    std::string first;
    format = instance_format::costs;
    while (std::getline(probe, first)) {
      const auto tokens = tokens_of(first);
      if (!tokens.empty()) {
        if (tokens[0] == "p") {
          format = instance_format::pcmax;
        }
        break;
      }
    }
    std::istringstream again(text);
    return format == instance_format::pcmax ? parse_pcmax(again, source)
                                            : parse_costs(again, source);
  }
  return format == instance_format::pcmax ? parse_pcmax(in, source) : parse_costs(in, source);
}

instance read_instance_file(const std::string& path, instance_format format) {
  std::ifstream in(path);
  if (!in) {
    throw std::runtime_error("cannot open '" + path + "'");
  }
  return parse_instance(in, format, path);
}

void write_pcmax(std::ostream& out, std::span<const orch::cost_t> costs, orch::rank_t bins) {
  out << "p p_cmax " << costs.size() << ' ' << bins << '\n';
  for (const auto c : costs) {
    out << c << ' ';
  }
  out << "0\n";
}

} // namespace orch_bench
