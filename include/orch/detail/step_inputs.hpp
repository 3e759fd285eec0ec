// SPDX-License-Identifier: Apache-2.0
/// Internals of orch/orchestrate.hpp: the validated per-item quantities of a step and the
/// media layouts that follow an example layout.
#pragma once

#include <orch/config.hpp>
#include <orch/detail/checked.hpp>
#include <orch/item_table.hpp>
#include <orch/layout.hpp>
#include <orch/model.hpp>
#include <orch/types.hpp>

#include <cstddef>
#include <cstdint>
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
  std::vector<index_t> phase_index;                // per table media: index in its encoder
  std::vector<std::vector<index_t>> encoder_media; // per encoder: table media, in order
  std::vector<encoder_items> encoders;             // per encoder
  std::vector<length_t> sequence_length;           // per example
  std::vector<cost_t> llm_costs;                   // per example
  std::vector<bytes_t> text_bytes;                 // per example, owner → LLM
  std::vector<bytes_t> example_feature_bytes;      // per example: Σ feature bytes of its media
};

/// Resolves every media item to its encoder and computes costs, output tokens, sequence
/// lengths and bytes. Two passes over the media (count per encoder, then fill), no growth.
/// Complexity: O(examples + media + fields · encoders).
/// Throws: as orchestrate (naming the example).
inline step_inputs resolve_inputs(const item_table& table, const model_description& model) {
  step_inputs in;
  const auto& names = table.field_names();
  std::vector<std::int32_t> encoder_of_field(names.size(), -1);
  for (std::size_t f = 0; f < names.size(); ++f) {
    encoder_of_field[f] = model.encoder_of_field(names[f]);
  }
  const auto fields = table.media_fields();
  const auto lengths = table.media_lengths();
  const auto example_of = table.media_examples();
  const std::size_t media = fields.size();
  const std::size_t encoders = model.encoders.size();
  in.media_encoder.resize(media);
  in.output_tokens.resize(media);
  in.phase_index.resize(media);
  std::vector<std::size_t> count(encoders, 0);
  for (std::size_t m = 0; m < media; ++m) {
    const auto field = static_cast<std::size_t>(fields[m]);
    const std::int32_t e = encoder_of_field[field];
    if (e < 0) {
      throw_invalid_argument("orchestrate: example ", example_of[m], " has a '", names[field],
                             "' item, a field no encoder of the model consumes");
    }
    in.media_encoder[m] = e;
    in.phase_index[m] = static_cast<index_t>(count[static_cast<std::size_t>(e)]++);
  }
  in.encoder_media.resize(encoders);
  in.encoders.resize(encoders);
  for (std::size_t e = 0; e < encoders; ++e) {
    in.encoder_media[e].resize(count[e]);
    auto& items = in.encoders[e];
    items.example.resize(count[e]);
    items.costs.resize(count[e]);
    items.input_bytes.resize(count[e]);
    items.feature_bytes.resize(count[e]);
  }
  for (std::size_t m = 0; m < media; ++m) {
    const auto e = static_cast<std::size_t>(in.media_encoder[m]);
    const auto& enc = model.encoders[e];
    const auto i = static_cast<std::size_t>(in.phase_index[m]);
    const length_t length = lengths[m];
    const length_t out = enc.output_tokens(length);
    if (enc.max_output_tokens > 0 && out > enc.max_output_tokens) {
      throw_invalid_argument("orchestrate: example ", example_of[m], " has a '",
                             names[static_cast<std::size_t>(fields[m])], "' item of length ",
                             length, " whose ", out, " output tokens exceed encoder '", enc.name,
                             "' limit of ", enc.max_output_tokens);
    }
    auto& items = in.encoders[e];
    try {
      items.costs[i] = enc.cost(length);
    } catch (const overflow& err) {
      throw_overflow("orchestrate: example ", example_of[m], ", encoder '", enc.name,
                     "': ", err.what());
    }
    in.output_tokens[m] = out;
    in.encoder_media[e][i] = static_cast<index_t>(m);
    items.example[i] = example_of[m];
    items.input_bytes[i] =
        checked_mul(length, enc.input_bytes_per_unit, "orchestrate: input bytes");
    items.feature_bytes[i] =
        checked_mul(out, enc.feature_bytes_per_token, "orchestrate: feature bytes");
  }
  const auto text = table.text_lengths();
  const auto offsets = table.media_offsets();
  const std::size_t examples = text.size();
  in.sequence_length.resize(examples);
  in.llm_costs.resize(examples);
  in.text_bytes.resize(examples);
  in.example_feature_bytes.resize(examples);
  for (std::size_t x = 0; x < examples; ++x) {
    length_t l = text[x];
    bytes_t features = 0;
    for (auto m = static_cast<std::size_t>(offsets[x]);
         m < static_cast<std::size_t>(offsets[x + 1]); ++m) {
      l = checked_add(l, in.output_tokens[m], "orchestrate: sequence");
      const auto& items = in.encoders[static_cast<std::size_t>(in.media_encoder[m])];
      features =
          checked_add(features, items.feature_bytes[static_cast<std::size_t>(in.phase_index[m])],
                      "orchestrate: feature bytes");
    }
    in.sequence_length[x] = l;
    try {
      in.llm_costs[x] = model.llm.cost(l);
    } catch (const overflow& err) {
      throw_overflow("orchestrate: example ", x, ", LLM sequence of ", l, " tokens: ", err.what());
    }
    in.text_bytes[x] =
        checked_mul(text[x], model.llm.text_bytes_per_token, "orchestrate: text bytes");
    in.example_feature_bytes[x] = features;
  }
  return in;
}

/// The examples on their owner rank, in local-index order (the table is validated: local
/// indices of a rank are exactly 0..count−1).
/// Complexity: O(examples + ranks).
inline layout owner_layout(const item_table& table, rank_t ranks) {
  const auto owners = table.owners();
  const auto local = table.local_indices();
  std::vector<index_t> first(static_cast<std::size_t>(ranks) + 1, 0);
  for (const rank_t r : owners) {
    ++first[static_cast<std::size_t>(r) + 1];
  }
  for (std::size_t r = 0; r < static_cast<std::size_t>(ranks); ++r) {
    first[r + 1] += first[r];
  }
  std::vector<index_t> order(owners.size());
  for (std::size_t x = 0; x < owners.size(); ++x) {
    order[static_cast<std::size_t>(first[static_cast<std::size_t>(owners[x])] + local[x])] =
        static_cast<index_t>(x);
  }
  return layout_access::from_order(ranks, std::vector<rank_t>(owners.begin(), owners.end()),
                                   std::move(first), std::move(order));
}

/// Per encoder: the layout of its items (phase item i ↔ table media `encoder_media[e][i]`)
/// on the rank of their example in `examples_layout`, ordered there by (slot of the example,
/// position in the example). One walk over the examples serves every encoder.
/// Complexity: O(examples + media + encoders · ranks).
inline std::vector<layout> media_layouts_following(const item_table& table, const step_inputs& in,
                                                   const layout& examples_layout) {
  const rank_t ranks = examples_layout.ranks();
  const std::size_t encoders = in.encoder_media.size();
  struct building {
    std::vector<rank_t> rank_of;
    std::vector<index_t> first;
    std::vector<index_t> order;
  };
  std::vector<building> out(encoders);
  for (std::size_t e = 0; e < encoders; ++e) {
    out[e].rank_of.resize(in.encoder_media[e].size());
    out[e].first.resize(static_cast<std::size_t>(ranks) + 1);
    out[e].order.resize(in.encoder_media[e].size());
  }
  std::vector<std::size_t> cursor(encoders, 0);
  const auto order = examples_layout.order();
  const auto first = examples_layout.first_on();
  const auto offsets = table.media_offsets();
  // Each rank's examples in slot order and their media in order: that is the slot order.
  for (std::size_t r = 0; r + 1 < first.size(); ++r) {
    for (std::size_t e = 0; e < encoders; ++e) {
      out[e].first[r] = static_cast<index_t>(cursor[e]);
    }
    for (auto p = static_cast<std::size_t>(first[r]); p < static_cast<std::size_t>(first[r + 1]);
         ++p) {
      const auto x = static_cast<std::size_t>(order[p]);
      for (auto m = static_cast<std::size_t>(offsets[x]);
           m < static_cast<std::size_t>(offsets[x + 1]); ++m) {
        const auto e = static_cast<std::size_t>(in.media_encoder[m]);
        const index_t i = in.phase_index[m];
        out[e].rank_of[static_cast<std::size_t>(i)] = static_cast<rank_t>(r);
        out[e].order[cursor[e]++] = i;
      }
    }
  }
  std::vector<layout> layouts;
  layouts.reserve(encoders);
  for (std::size_t e = 0; e < encoders; ++e) {
    out[e].first[static_cast<std::size_t>(ranks)] = static_cast<index_t>(cursor[e]);
    layouts.push_back(layout_access::from_order(ranks, std::move(out[e].rank_of),
                                                std::move(out[e].first), std::move(out[e].order)));
  }
  return layouts;
}

} // namespace detail

} // namespace orch
