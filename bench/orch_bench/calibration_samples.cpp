// SPDX-License-Identifier: Apache-2.0
#include "calibration_samples.hpp"

#include "input_error.hpp"

#include <istream>

namespace orch_bench {

phase_samples read_calibration_samples(std::istream& in, std::string_view source) {
  phase_samples out;
  std::string line;
  std::size_t number = 0;
  bool header = false;
  while (std::getline(in, line)) {
    ++number;
    const std::string_view text = trim(line);
    if (text.empty() || text.front() == '#') {
      continue;
    }
    if (!header) {
      if (text != "phase,time_s,lengths") {
        fail_input(source, number, "expected the header 'phase,time_s,lengths'");
      }
      header = true;
      continue;
    }
    const auto c1 = text.find(',');
    const auto c2 = c1 == std::string_view::npos ? c1 : text.find(',', c1 + 1);
    if (c2 == std::string_view::npos || text.find(',', c2 + 1) != std::string_view::npos) {
      fail_input(source, number, "expected 3 comma-separated cells (phase,time_s,lengths)");
    }
    const std::string phase(trim(text.substr(0, c1)));
    if (phase.empty()) {
      fail_input(source, number, "empty phase name");
    }
    const auto time = parse_double(trim(text.substr(c1 + 1, c2 - c1 - 1)));
    if (!time || *time < 0.0) {
      fail_input(source, number, "time_s is not a finite non-negative number");
    }
    orch::calibration_sample s;
    s.time = *time;
    std::string_view rest = trim(text.substr(c2 + 1));
    while (!rest.empty()) {
      const auto space = rest.find_first_of(" \t");
      const auto token = rest.substr(0, space);
      const auto l = parse_int(token);
      if (!l || *l < 0) {
        fail_input(source, number,
                   cat("length '", std::string(token), "' is not a non-negative integer"));
      }
      s.lengths.push_back(*l);
      rest = space == std::string_view::npos ? std::string_view{} : trim(rest.substr(space));
    }
    if (s.lengths.empty()) {
      fail_input(source, number, "a batch needs at least one length");
    }
    out[phase].push_back(std::move(s));
  }
  if (!header) {
    fail_input(source, number, "empty file: no header 'phase,time_s,lengths'");
  }
  if (out.empty()) {
    fail_input(source, number, "no samples");
  }
  return out;
}

} // namespace orch_bench
