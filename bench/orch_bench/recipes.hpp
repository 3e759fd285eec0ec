// SPDX-License-Identifier: Apache-2.0
// Trace recipes: mixes of example types built from the real length data in data/
// (docs/trace-format.md, "Recipes"), for `orch-bench make-trace`.
#pragma once

#include "trace.hpp"

#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

namespace orch_bench {

/// One kind of example in a recipe and its share of the examples.
struct recipe_part {
  double share = 0.0;      ///< probability that an example is of this kind
  std::string kind;        ///< e.g. "text", "image-text", "asr", "long-audio"
  std::string description; ///< where its lengths come from
};

/// A named mix of example kinds.
struct recipe {
  std::string name;
  std::string description;
  std::vector<recipe_part> parts; ///< shares sum to 1
};

/// The recipes make-trace knows: "omni" and "vision".
[[nodiscard]] const std::vector<recipe>& recipes();

/// The data folder used when --data is not given: the repository's `data/` folder
/// (<repo>/data, described in data/SOURCES.md).
[[nodiscard]] std::string default_data_dir();

/// Builds a trace of `examples` examples from recipe `name`, reading the length data under
/// `data_dir`. Each example draws its kind with the recipe's shares and its lengths from the
/// data, all from one std::mt19937_64 seeded with `seed`, so the trace is reproducible.
/// Complexity: O(data rows + examples). Throws: input_error for an unknown recipe or a missing
/// or malformed data file (naming it).
[[nodiscard]] trace make_trace(const std::string& name, const std::string& data_dir,
                               std::size_t examples, std::uint64_t seed);

} // namespace orch_bench
