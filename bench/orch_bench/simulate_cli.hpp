// SPDX-License-Identifier: Apache-2.0
// Pieces shared by `orch-bench simulate` and `orch-bench demo`: the bundled trace, model
// selection and constant overrides, the progress bar and the plot script.
#pragma once

#include "model_presets.hpp"
#include "options.hpp"
#include "simulate.hpp"
#include "trace.hpp"

#include <functional>
#include <iosfwd>
#include <string>
#include <vector>

namespace orch_bench {

/// The trace shipped in data/ (data/omni_trace.csv, omni recipe), used when --trace is not
/// given.
[[nodiscard]] std::string bundled_trace_path();

/// Declares --model, --preset and the step-time overrides (--achieved-flops,
/// --backward-factor, --nvlink-bandwidth, --network-bandwidth).
void add_model_options(option_parser& opts);
/// The model those options select, overrides applied and validated. Throws: input_error.
[[nodiscard]] bench_model model_from_options(const option_parser& opts);

/// Throws input_error when `t` has a field no encoder of `m` consumes (naming it).
void check_trace_fields(const trace& t, const bench_model& m, const std::string& trace_name);

/// Parses "none,orch,..." into strategies. Throws: input_error for an unknown or repeated name.
[[nodiscard]] std::vector<orch::strategy> parse_strategies(const std::string& list);

/// A progress callback that draws a bar on `err` when standard error is a terminal, and
/// does nothing otherwise. `label` prefixes the bar.
[[nodiscard]] std::function<void(int, int)> progress_bar(std::ostream& err, std::string label);

/// Writes DIR/simulate.json and runs bench/python/plot_simulate.py on it when python3 with
/// matplotlib is available; otherwise says so on `err`. Returns false when plotting failed.
bool plot(const simulate_result& r, const std::string& dir, std::ostream& out, std::ostream& err);

} // namespace orch_bench
