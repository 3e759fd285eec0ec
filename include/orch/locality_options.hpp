// SPDX-License-Identifier: Apache-2.0
/// orch::locality_options, the options of locality_balance, on their own (so that
/// orch/step_plan.hpp can hold them without the placers; orch/locality.hpp includes this
/// header).
#pragma once

#include <cstdint>

namespace orch {

/// Options of locality_balance.
struct locality_options {
  /// Allowed excess of the largest load over the reference partition's, in millionths of the
  /// cost lower bound max(ceil(Σc/k), max c): target = reference max + slack · LB / 10^6.
  /// The default 1000 (0.1 %) buys room to keep items local at a balance cost far below the
  /// noise of a step time.
  std::int64_t slack_ppm = 1000;
};

} // namespace orch
