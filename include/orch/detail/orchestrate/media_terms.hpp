// SPDX-License-Identifier: Apache-2.0
/// Internals of orch/orchestrate/orchestrate.hpp: one media item's quantities (output
/// tokens, cost, input and feature bytes) — the bound up to which an encoder's arithmetic
/// cannot overflow (encoder_terms), and the model's checked calls beyond it (checked_media).
#pragma once

#include <orch/config.hpp>
#include <orch/detail/primitives/checked.hpp>
#include <orch/orchestrate/item_table.hpp>
#include <orch/orchestrate/model.hpp>
#include <orch/types.hpp>

#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <string>

namespace orch::detail {

/// "example x (rank r, local index l)": how errors at the public boundary name an example.
[[nodiscard]] inline std::string describe_example(const item_table& table, index_t x) {
  return message("example ", x, " (rank ", table.owners()[static_cast<std::size_t>(x)],
                 ", local index ", table.local_indices()[static_cast<std::size_t>(x)], ")");
}

/// The largest length l for which `cost(l)` needs no 128-bit arithmetic: l ≤ 2^31 and each of
/// the three terms at most max_cost / 3, so linear·l + quadratic·l² + per_item evaluated in
/// int64 cannot overflow and equals the model's value. -1 (no such l is assumed) for negative
/// coefficients (an unvalidated model: every cost then goes through the model's call).
/// Complexity: O(1) (a 32-step integer square root).
[[nodiscard]] inline length_t cost_safe_length(const attention_cost& cost) noexcept {
  constexpr cost_t third = max_cost / 3;
  if (cost.linear < 0 || cost.quadratic < 0 || cost.per_item < 0 || cost.per_item > third) {
    return -1;
  }
  length_t bound = length_t{1} << 31;
  if (cost.linear > 0) {
    bound = std::min(bound, third / cost.linear);
  }
  if (cost.quadratic > 0) {
    // The largest r ≤ 2^31 with r² ≤ third / quadratic (r² ≤ 2^62: no overflow).
    const cost_t most = third / cost.quadratic;
    length_t lo = 0;
    length_t hi = length_t{1} << 31;
    while (lo < hi) {
      const length_t mid = lo + (hi - lo + 1) / 2;
      if (mid * mid <= most) {
        lo = mid;
      } else {
        hi = mid - 1;
      }
    }
    bound = std::min(bound, lo);
  }
  return bound;
}

/// An encoder's coefficients for resolve_inputs, with `safe`: the largest input length for
/// which the output tokens, the cost and both byte sizes fit in int64 (-1 when the model is
/// not validated). Items up to it skip every overflow check.
struct encoder_terms {
  length_t safe = -1;
  length_t divisor = 1;
  length_t extra = 0;
  length_t limit = max_cost; ///< max_output_tokens, or no limit
  bytes_t input_per_unit = 0;
  bytes_t feature_per_token = 0;
  attention_cost cost;

  explicit encoder_terms(const encoder_model& enc)
      : divisor(enc.output_divisor), extra(enc.output_extra),
        limit(enc.max_output_tokens > 0 ? enc.max_output_tokens : max_cost),
        input_per_unit(enc.input_bytes_per_unit), feature_per_token(enc.feature_bytes_per_token),
        cost(enc.cost) {
    constexpr length_t most = max_cost;
    if (divisor <= 0 || extra < 0 || input_per_unit < 0 || feature_per_token < 0) {
      return;
    }
    // out = ceil(l / divisor) + extra ≤ l + extra; input = l · input_per_unit;
    // feature = out · feature_per_token.
    safe = std::min(cost_safe_length(cost), most - extra);
    if (input_per_unit > 0) {
      safe = std::min(safe, most / input_per_unit);
    }
    if (feature_per_token > 0) {
      safe = std::min(safe, most / feature_per_token - extra);
    }
  }
};

/// What resolve_inputs computes for one media item.
struct media_quantities {
  length_t out = 0;
  cost_t cost = 0;
  bytes_t input = 0;
  bytes_t feature = 0;
};

/// resolve_inputs' quantities of media item `m` (encoder `e`) with the model's checked calls,
/// in their order, for the items the fast path does not cover (beyond encoder_terms::safe,
/// or over the output limit): throws the first error, naming the example.
[[nodiscard]] [[gnu::noinline]] inline media_quantities
checked_media(const item_table& table, const model_description& model, std::size_t e,
              std::size_t m) {
  const auto& names = table.field_names();
  const auto& enc = model.encoders[e];
  const index_t example = table.media_examples()[m];
  const length_t length = table.media_lengths()[m];
  media_quantities q;
  try {
    q.out = enc.output_tokens(length);
  } catch (const overflow& err) {
    throw_overflow("orchestrate: ", describe_example(table, example), ", encoder '", enc.name,
                   "': ", err.what());
  }
  if (enc.max_output_tokens > 0 && q.out > enc.max_output_tokens) {
    throw_invalid_argument("orchestrate: ", describe_example(table, example), " has a '",
                           names[static_cast<std::size_t>(table.media_fields()[m])],
                           "' item of length ", length, " whose ", q.out,
                           " output tokens exceed encoder '", enc.name, "' limit of ",
                           enc.max_output_tokens);
  }
  try {
    q.cost = enc.cost(length);
  } catch (const overflow& err) {
    throw_overflow("orchestrate: ", describe_example(table, example), ", encoder '", enc.name,
                   "': ", err.what());
  }
  try {
    q.input = checked_mul(length, enc.input_bytes_per_unit, "input bytes");
    q.feature = checked_mul(q.out, enc.feature_bytes_per_token, "feature bytes");
  } catch (const overflow& err) {
    throw_overflow("orchestrate: ", describe_example(table, example), ", encoder '", enc.name,
                   "': ", err.what());
  }
  return q;
}

} // namespace orch::detail
