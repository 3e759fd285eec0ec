// SPDX-License-Identifier: Apache-2.0
// The samples file of `orch-bench calibrate`: measured batch times per phase (CSV with header
// `phase,time_s,lengths`, lengths space-separated; docs/orch-bench.md, "calibrate").
#pragma once

#include <orch/calibrate.hpp>

#include <iosfwd>
#include <map>
#include <string>
#include <string_view>
#include <vector>

namespace orch_bench {

/// Samples by phase name, each phase's samples in file order.
using phase_samples = std::map<std::string, std::vector<orch::calibration_sample>>;

/// Reads a samples file. Throws: input_error "SOURCE:LINE: ..." for a wrong header, a row
/// without three cells, an empty phase, a time that is not a finite non-negative number, a
/// batch with no length or a length that is not a non-negative integer.
[[nodiscard]] phase_samples read_calibration_samples(std::istream& in, std::string_view source);

} // namespace orch_bench
