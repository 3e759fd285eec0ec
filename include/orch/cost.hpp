// SPDX-License-Identifier: Apache-2.0
/// Cost models: map an item's length to integer cost units, the currency of every partition.
#pragma once

#include <orch/config.hpp>
#include <orch/detail/primitives/checked.hpp>
#include <orch/types.hpp>

#include <concepts>
#include <cstddef>
#include <span>
#include <vector>

namespace orch {

/// A cost model maps a non-negative length to non-negative integer cost units.
///
/// Semantics a concept cannot express: the model is deterministic, non-decreasing in the
/// length, and throws orch::invalid_argument for a negative length and orch::overflow when
/// the cost does not fit in cost_t (never wraps).
template <class Model>
concept cost_model = std::copy_constructible<Model> && requires(const Model& m, length_t l) {
  { m(l) } -> std::same_as<cost_t>;
};

namespace detail {

inline void check_length(length_t length, const char* model) {
  if (length < 0) {
    throw_invalid_argument(model, ": negative length ", length);
  }
}

inline void check_coefficient(cost_t c, const char* model, const char* name) {
  if (c < 0) {
    throw_invalid_argument(model, ": coefficient ", name, " = ", c, " is negative");
  }
}

} // namespace detail

/// Cost proportional to length: `per_unit * l + per_item` (tokens through a linear layer).
/// Complexity: O(1). Throws: orch::invalid_argument (negative length or coefficient),
/// orch::overflow.
struct linear_cost {
  cost_t per_unit = 1; ///< cost units per length unit
  cost_t per_item = 0; ///< fixed cost of every item (launch, padding to a tile)

  [[nodiscard]] cost_t operator()(length_t length) const {
    detail::check_length(length, "linear_cost");
    detail::check_coefficient(per_unit, "linear_cost", "per_unit");
    detail::check_coefficient(per_item, "linear_cost", "per_item");
    return detail::checked_add(detail::checked_mul(per_unit, length, "linear_cost"), per_item,
                               "linear_cost");
  }
};

/// Transformer cost of one sequence: `linear * l + quadratic * l^2 + per_item`. The linear
/// term covers the projections and MLP, the quadratic one the attention scores. Evaluated in
/// 128-bit arithmetic so that l near 2^31 is reported as overflow rather than wrapped.
/// Complexity: O(1). Throws: orch::invalid_argument, orch::overflow (cost above 2^63 - 1).
struct attention_cost {
  cost_t linear = 1;
  cost_t quadratic = 0;
  cost_t per_item = 0;

  [[nodiscard]] cost_t operator()(length_t length) const {
    detail::check_length(length, "attention_cost");
    detail::check_coefficient(linear, "attention_cost", "linear");
    detail::check_coefficient(quadratic, "attention_cost", "quadratic");
    detail::check_coefficient(per_item, "attention_cost", "per_item");
    using wide = detail::int128;
    const wide l = length;
    // linear · l and quadratic · l are at most 2^63 · 2^63 = 2^126; (quadratic · l) · l may
    // pass 2^127 for lengths near 2^63, so that product is checked. Once it is at most
    // 2^63 − 1, the sum of the three terms stays below 2^127.
    wide square = 0;
    const bool huge = __builtin_mul_overflow(wide{quadratic} * l, l, &square);
    const wide c = huge || square > wide{max_cost} ? wide{max_cost} + 1
                                                   : wide{linear} * l + square + wide{per_item};
    if (c > wide{max_cost}) {
      throw_overflow("attention_cost: cost of length ", length, " (linear ", linear, ", quadratic ",
                     quadratic, ") exceeds 2^63 - 1");
    }
    return static_cast<cost_t>(c);
  }
};

/// Activation memory of an item in bytes: `bytes_per_unit * l + bytes_per_item`. Used as a
/// second resource (a per-rank memory cap) rather than as time.
/// Complexity: O(1). Throws: orch::invalid_argument, orch::overflow.
struct memory_cost {
  cost_t bytes_per_unit = 1;
  cost_t bytes_per_item = 0;

  [[nodiscard]] cost_t operator()(length_t length) const {
    detail::check_length(length, "memory_cost");
    detail::check_coefficient(bytes_per_unit, "memory_cost", "bytes_per_unit");
    detail::check_coefficient(bytes_per_item, "memory_cost", "bytes_per_item");
    return detail::checked_add(detail::checked_mul(bytes_per_unit, length, "memory_cost"),
                               bytes_per_item, "memory_cost");
  }
};

static_assert(cost_model<linear_cost>);
static_assert(cost_model<attention_cost>);
static_assert(cost_model<memory_cost>);

/// The cost of every length under `model`.
/// Complexity: O(n). Throws: orch::invalid_argument naming the first item with a negative
/// length; orch::overflow naming the item whose cost does not fit.
template <cost_model Model>
[[nodiscard]] std::vector<cost_t> compute_costs(const Model& model,
                                                std::span<const length_t> lengths) {
  std::vector<cost_t> costs(lengths.size());
  for (std::size_t i = 0; i < lengths.size(); ++i) {
    if (lengths[i] < 0) {
      throw_invalid_argument("compute_costs: item ", i, " has negative length ", lengths[i]);
    }
    try {
      costs[i] = model(lengths[i]);
    } catch (const overflow& e) {
      throw_overflow("compute_costs: item ", i, ": ", e.what());
    }
  }
  return costs;
}

} // namespace orch
