// SPDX-License-Identifier: Apache-2.0
#include "csv_table.hpp"

#include "input_error.hpp"

#include <fstream>

namespace orch_bench {

namespace {

std::vector<std::string> split(std::string_view line) {
  std::vector<std::string> out;
  std::size_t start = 0;
  while (true) {
    const auto comma = line.find(',', start);
    out.emplace_back(trim(line.substr(start, comma - start)));
    if (comma == std::string_view::npos) {
      return out;
    }
    start = comma + 1;
  }
}

} // namespace

csv_table csv_table::read(const std::string& path) {
  std::ifstream in(path);
  if (!in) {
    fail_input(path, 0, "cannot open the data file");
  }
  csv_table t;
  t.path_ = path;
  std::string line;
  std::size_t number = 0;
  while (std::getline(in, line)) {
    ++number;
    if (trim(line).empty()) {
      continue;
    }
    auto cells = split(trim(line));
    if (t.header_.empty()) {
      t.header_ = std::move(cells);
      continue;
    }
    if (cells.size() != t.header_.size()) {
      fail_input(path, number,
                 cat("expected ", std::to_string(t.header_.size()), " cells, got ",
                     std::to_string(cells.size())));
    }
    for (auto& c : cells) {
      t.cells_.push_back(std::move(c));
    }
    t.line_.push_back(number);
  }
  if (t.header_.empty() || t.line_.empty()) {
    fail_input(path, number, "no header or no data rows");
  }
  return t;
}

std::size_t csv_table::column(std::string_view name) const {
  for (std::size_t c = 0; c < header_.size(); ++c) {
    if (header_[c] == name) {
      return c;
    }
  }
  fail_input(path_, 1, cat("no column '", std::string(name), "'"));
}

std::string_view csv_table::cell(std::size_t row, std::size_t column) const {
  return cells_.at(row * header_.size() + column);
}

double csv_table::number(std::size_t row, std::size_t column) const {
  const auto v = parse_double(cell(row, column));
  if (!v) {
    fail_input(path_, line_.at(row),
               cat("column '", header_.at(column), "': '", std::string(cell(row, column)),
                   "' is not a number"));
  }
  return *v;
}

std::int64_t csv_table::integer(std::size_t row, std::size_t column) const {
  const auto v = parse_int(cell(row, column));
  if (!v) {
    fail_input(path_, line_.at(row),
               cat("column '", header_.at(column), "': '", std::string(cell(row, column)),
                   "' is not an integer"));
  }
  return *v;
}

} // namespace orch_bench
