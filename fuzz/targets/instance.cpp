// SPDX-License-Identifier: Apache-2.0
// Fuzz target: orch-bench's instance reader (the `pcmax` and `costs` formats). The first byte
// picks the format (detect, pcmax, costs), the rest is the file. Any file either parses into
// non-negative costs (and m ≥ 1 for pcmax) that round-trip through write_pcmax, or throws a
// parse_error whose line() is a line of the input and whose message starts "SOURCE:LINE: ".
#define ORCH_FUZZ_NAME "instance"
#include "../fuzz_input.hpp"

#include "instance_file.hpp"

#include <algorithm>
#include <sstream>
#include <string>

int orch_fuzz_instance(const std::uint8_t* data, std::size_t size) {
  orch::fuzz::input in(data, size);
  constexpr orch_bench::instance_format formats[] = {orch_bench::instance_format::detect,
                                                     orch_bench::instance_format::pcmax,
                                                     orch_bench::instance_format::costs};
  const auto format = formats[in.uniform(0, 2)];
  const std::string text(in.rest());
  const auto lines = static_cast<std::size_t>(std::count(text.begin(), text.end(), '\n')) + 1;
  std::istringstream file(text);
  orch_bench::instance inst;
  try {
    inst = orch_bench::parse_instance(file, format, "fuzz.txt");
  } catch (const orch_bench::parse_error& e) {
    // A missing line is named by its number: one past the last line of the input.
    ORCH_FUZZ_CHECK(e.line() >= 1 && e.line() <= lines + 1);
    const std::string prefix = "fuzz.txt:" + std::to_string(e.line()) + ": ";
    ORCH_FUZZ_CHECK(std::string(e.what()).rfind(prefix, 0) == 0);
    return 0;
  }
  for (const auto c : inst.costs) {
    ORCH_FUZZ_CHECK(c >= 0);
  }
  if (inst.format == orch_bench::instance_format::pcmax) {
    ORCH_FUZZ_CHECK(inst.bins >= 1);
  } else {
    ORCH_FUZZ_CHECK(inst.format == orch_bench::instance_format::costs && inst.bins == 0);
  }
  // Round trip through the pcmax writer (bins 1 for a costs file).
  const orch::rank_t bins = inst.bins > 0 ? inst.bins : 1;
  std::ostringstream out;
  orch_bench::write_pcmax(out, inst.costs, bins);
  std::istringstream back_in(out.str());
  const auto back = orch_bench::parse_instance(back_in, orch_bench::instance_format::detect);
  ORCH_FUZZ_CHECK(back.format == orch_bench::instance_format::pcmax);
  ORCH_FUZZ_CHECK(back.costs == inst.costs && back.bins == bins);
  return 0;
}
