// SPDX-License-Identifier: Apache-2.0
// Fuzz target: orch-bench's trace reader (docs/trace-format.md). Any text either reads as a
// trace that round-trips (write then read gives the same examples, and writing that gives the
// same text), or is rejected with an input_error "SOURCE:LINE: ..." naming a line of the input.
#define ORCH_FUZZ_NAME "trace"
#include "../fuzz_input.hpp"

#include "trace.hpp"

#include "input_error.hpp"

#include <algorithm>
#include <sstream>
#include <string>

namespace {

bool same(const orch_bench::trace& a, const orch_bench::trace& b) {
  if (a.size() != b.size() || a.media_items() != b.media_items()) {
    return false;
  }
  for (std::size_t e = 0; e < a.size(); ++e) {
    const auto ma = a.media(e);
    const auto mb = b.media(e);
    if (a.id(e) != b.id(e) || a.text_tokens(e) != b.text_tokens(e) || ma.size() != mb.size()) {
      return false;
    }
    for (std::size_t m = 0; m < ma.size(); ++m) {
      if (ma[m].kind != mb[m].kind || ma[m].length != mb[m].length) {
        return false;
      }
    }
  }
  return true;
}

} // namespace

int orch_fuzz_trace(const std::uint8_t* data, std::size_t size) {
  const std::string text(reinterpret_cast<const char*>(data), size);
  const auto lines = static_cast<std::size_t>(std::count(text.begin(), text.end(), '\n')) + 1;
  std::istringstream in(text);
  orch_bench::trace t;
  try {
    t = orch_bench::read_trace(in, "fuzz.csv");
  } catch (const orch_bench::input_error& e) {
    // "fuzz.csv:LINE: message" with LINE in [1, lines]; only an empty input, which has no
    // line to name, reads "fuzz.csv: message".
    const std::string what = e.what();
    if (what.rfind("fuzz.csv: ", 0) == 0) {
      ORCH_FUZZ_CHECK(text.empty());
      return 0;
    }
    ORCH_FUZZ_CHECK(what.rfind("fuzz.csv:", 0) == 0);
    const std::size_t colon = what.find(':', 9);
    ORCH_FUZZ_CHECK(colon != std::string::npos && colon > 9);
    const std::string number = what.substr(9, colon - 9);
    ORCH_FUZZ_CHECK(
        std::all_of(number.begin(), number.end(), [](char c) { return c >= '0' && c <= '9'; }));
    const auto line = std::stoull(number);
    ORCH_FUZZ_CHECK(line >= 1 && line <= lines);
    return 0;
  }
  ORCH_FUZZ_CHECK(!t.empty());
  for (std::size_t e = 0; e < t.size(); ++e) {
    ORCH_FUZZ_CHECK(t.text_tokens(e) >= 0);
    for (const auto& m : t.media(e)) {
      ORCH_FUZZ_CHECK(m.length >= 1 && m.length <= orch_bench::max_row_length);
      ORCH_FUZZ_CHECK(m.kind != orch_bench::field::text);
    }
  }
  std::ostringstream once;
  orch_bench::write_trace(once, t);
  std::istringstream again(once.str());
  const auto back = orch_bench::read_trace(again, "round-trip");
  ORCH_FUZZ_CHECK(same(t, back));
  std::ostringstream twice;
  orch_bench::write_trace(twice, back);
  ORCH_FUZZ_CHECK(twice.str() == once.str());
  return 0;
}
