// SPDX-License-Identifier: Apache-2.0
/// Internals of orch/orchestrate/orchestrate.hpp: the validated per-item quantities of a step
/// (costs, output tokens, sequence lengths, bytes), before any placement.
#pragma once

#include <orch/config.hpp>
#include <orch/detail/orchestrate/media_terms.hpp>
#include <orch/detail/primitives/checked.hpp>
#include <orch/detail/primitives/parallel.hpp>
#include <orch/detail/primitives/uninit_vector.hpp>
#include <orch/orchestrate/item_table.hpp>
#include <orch/orchestrate/model.hpp>
#include <orch/types.hpp>

#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <functional>
#include <span>
#include <string>
#include <vector>

namespace orch {
namespace detail {

/// The media items of one encoder (its phase items, in table order) and what each costs and
/// moves.
struct encoder_items {
  std::vector<index_t> example;       // parent example of each phase item
  std::vector<cost_t> costs;          // encoder cost
  std::vector<bytes_t> input_bytes;   // raw input, owner → encoder
  std::vector<bytes_t> feature_bytes; // output features, encoder → LLM
};

/// Validated per-item quantities of a step, before any placement.
struct step_inputs {
  std::vector<std::int32_t> media_encoder;         // per table media item
  std::vector<length_t> output_tokens;             // per table media item
  uninit_vector<index_t> phase_index;              // per table media: index in its encoder
  std::vector<std::vector<index_t>> encoder_media; // per encoder: table media, in order
  std::vector<encoder_items> encoders;             // per encoder
  std::vector<length_t> sequence_length;           // per example
  std::vector<cost_t> llm_costs;                   // per example
  // Read in place (never moved into a result): written by index without zero-filling first.
  uninit_vector<bytes_t> text_bytes;            // per example, owner → LLM
  uninit_vector<bytes_t> example_feature_bytes; // per example: Σ feature bytes of its media
};

/// The checks of resolve_inputs for example `x`, in their order (`in` holds every media
/// item's output tokens and feature bytes): they throw the error the fast path saw.
[[noreturn]] [[gnu::noinline]] inline void throw_example_error(const item_table& table,
                                                               const model_description& model,
                                                               const step_inputs& in,
                                                               std::size_t x) {
  const auto offsets = table.media_offsets();
  length_t l = table.text_lengths()[x];
  bytes_t features = 0;
  try {
    for (auto m = static_cast<std::size_t>(offsets[x]);
         m < static_cast<std::size_t>(offsets[x + 1]); ++m) {
      l = checked_add(l, in.output_tokens[m], "sequence tokens");
      const auto& items = in.encoders[static_cast<std::size_t>(in.media_encoder[m])];
      features =
          checked_add(features, items.feature_bytes[static_cast<std::size_t>(in.phase_index[m])],
                      "feature bytes");
    }
  } catch (const overflow& err) {
    throw_overflow("orchestrate: ", describe_example(table, static_cast<index_t>(x)), ": ",
                   err.what());
  }
  try {
    static_cast<void>(model.llm.cost(l));
  } catch (const overflow& err) {
    throw_overflow("orchestrate: ", describe_example(table, static_cast<index_t>(x)),
                   ", LLM sequence of ", l, " tokens: ", err.what());
  }
  try {
    static_cast<void>(
        checked_mul(table.text_lengths()[x], model.llm.text_bytes_per_token, "text bytes"));
  } catch (const overflow& err) {
    throw_overflow("orchestrate: ", describe_example(table, static_cast<index_t>(x)), ": ",
                   err.what());
  }
  ORCH_ASSERT(false);
  throw_overflow("orchestrate: ", describe_example(table, static_cast<index_t>(x)),
                 ": a sequence quantity exceeds 2^63 - 1");
}

/// resolve_inputs' walk over the examples [begin, end) and their media: writes every per-item
/// quantity of them by index (the arrays are sized) and returns the first example whose sums
/// leave int64, or `end`. Lengths up to an encoder's safe bound (encoder_terms) need no
/// overflow check; other items, and items over the output limit, go through the model's
/// checked calls (checked_media), which throw the exact error right away, so within a walk
/// media errors come in media order.
inline std::size_t resolve_examples(const item_table& table, const model_description& model,
                                    std::span<const encoder_terms> terms, step_inputs& in,
                                    std::size_t begin, std::size_t end) {
  const length_t llm_safe = cost_safe_length(model.llm.cost);
  const auto text = table.text_lengths();
  const auto offsets = table.media_offsets();
  const auto lengths = table.media_lengths();
  std::size_t bad_example = end;
  for (std::size_t x = begin; x < end; ++x) {
    bool overflowed = false; // a sum of the example passed 2^63 - 1
    length_t l = text[x];
    bytes_t features = 0;
    const auto media_end = static_cast<std::size_t>(offsets[x + 1]);
    for (auto m = static_cast<std::size_t>(offsets[x]); m < media_end; ++m) {
      const auto e = static_cast<std::size_t>(in.media_encoder[m]);
      const encoder_terms& t = terms[e];
      const length_t length = lengths[m];
      media_quantities q;
      if (length <= t.safe) { // lengths are non-negative (item_table checks them)
        q.out = ceil_div(length, t.divisor) + t.extra;
        q.cost = t.cost.linear * length + t.cost.quadratic * length * length + t.cost.per_item;
        q.input = length * t.input_per_unit;
        q.feature = q.out * t.feature_per_token;
      }
      if (length > t.safe || q.out > t.limit) {
        q = checked_media(table, model, e, m); // throws over the limit
      }
      auto& items = in.encoders[e];
      const auto at = static_cast<std::size_t>(in.phase_index[m]);
      in.output_tokens[m] = q.out;
      in.encoder_media[e][at] = static_cast<index_t>(m);
      items.example[at] = static_cast<index_t>(x);
      items.costs[at] = q.cost;
      items.input_bytes[at] = q.input;
      items.feature_bytes[at] = q.feature;
      overflowed |= __builtin_add_overflow(l, q.out, &l);
      overflowed |= __builtin_add_overflow(features, q.feature, &features);
    }
    cost_t llm_cost = 0;
    overflowed |=
        __builtin_mul_overflow(text[x], model.llm.text_bytes_per_token, &in.text_bytes[x]);
    if (l <= llm_safe && !overflowed) {
      const auto& c = model.llm.cost;
      llm_cost = c.linear * l + c.quadratic * l * l + c.per_item;
    } else if (!overflowed) {
      try {
        llm_cost = model.llm.cost(l);
      } catch (...) {
        // Reported after every media item passed, by throw_example_error's same call.
        overflowed = true;
      }
    }
    if (overflowed && bad_example == end) {
      bad_example = x;
    }
    in.sequence_length[x] = l;
    in.llm_costs[x] = llm_cost;
    in.example_feature_bytes[x] = features;
  }
  return bad_example;
}

/// Resolves every media item to its encoder and computes costs, output tokens, sequence
/// lengths and bytes.
///
/// Two passes: the encoder of every media item and its index among that encoder's items (so
/// an unconsumed field is reported before anything else), then walks over the examples and
/// their media for everything else (resolve_examples), which write by index into sized
/// arrays. With `threads` > 1 and many examples the walks take contiguous ranges of
/// examples concurrently; the lowest range's error wins (media errors in media order), and an
/// example whose sums leave int64 is reported only after every media item passed, as a pass
/// over the media followed by one over the examples would — the same errors and values for
/// every thread count.
/// Complexity: O(examples + media + fields · encoders).
/// Throws: as orchestrate (naming the example).
inline step_inputs resolve_inputs(const item_table& table, const model_description& model,
                                  int threads = 1) {
  step_inputs in;
  const auto& names = table.field_names();
  std::vector<std::int32_t> encoder_of_field(names.size(), -1);
  for (std::size_t f = 0; f < names.size(); ++f) {
    encoder_of_field[f] = model.encoder_of_field(names[f]);
  }
  const auto fields = table.media_fields();
  const auto example_of = table.media_examples();
  const std::size_t media = fields.size();
  const std::size_t encoders = model.encoders.size();
  in.media_encoder.reserve(media);
  in.phase_index.resize(media); // every entry written below
  std::vector<index_t> count(encoders, 0);
  for (std::size_t m = 0; m < media; ++m) {
    const auto field = static_cast<std::size_t>(fields[m]);
    const std::int32_t e = encoder_of_field[field];
    if (e < 0) {
      throw_invalid_argument("orchestrate: ", describe_example(table, example_of[m]), " has a '",
                             names[field], "' item, a field no encoder of the model consumes (its ",
                             "fields: ", model.field_list(), ")");
    }
    in.media_encoder.push_back(e);
    in.phase_index[m] = count[static_cast<std::size_t>(e)]++;
  }
  std::vector<encoder_terms> terms;
  terms.reserve(encoders);
  in.encoder_media.resize(encoders);
  in.encoders.resize(encoders);
  for (std::size_t e = 0; e < encoders; ++e) {
    const auto n = static_cast<std::size_t>(count[e]);
    in.encoder_media[e].resize(n);
    auto& items = in.encoders[e];
    items.example.resize(n);
    items.costs.resize(n);
    items.input_bytes.resize(n);
    items.feature_bytes.resize(n);
    terms.emplace_back(model.encoders[e]);
  }
  const std::size_t examples = table.text_lengths().size();
  in.output_tokens.resize(media);
  in.sequence_length.resize(examples);
  in.llm_costs.resize(examples);
  in.text_bytes.resize(examples);
  in.example_feature_bytes.resize(examples);
  // Ranges of examples, one per thread; small tables are not worth a thread start.
  constexpr std::size_t examples_per_range = 8192;
  const std::size_t ranges = std::clamp<std::size_t>(
      examples / examples_per_range, 1, static_cast<std::size_t>(std::max(threads, 1)));
  std::vector<std::size_t> bad(ranges, examples);
  if (ranges == 1) {
    bad[0] = resolve_examples(table, model, terms, in, 0, examples);
  } else {
    std::vector<std::function<void()>> walks;
    for (std::size_t k = 0; k < ranges; ++k) {
      walks.emplace_back([&, k] {
        const std::size_t end = examples * (k + 1) / ranges;
        bad[k] = resolve_examples(table, model, terms, in, examples * k / ranges, end);
        bad[k] = bad[k] == end ? examples : bad[k];
      });
    }
    run_tasks(walks, static_cast<int>(ranges));
  }
  const std::size_t bad_example = *std::min_element(bad.begin(), bad.end());
  if (bad_example < examples) {
    throw_example_error(table, model, in, bad_example);
  }
  return in;
}

} // namespace detail

} // namespace orch
