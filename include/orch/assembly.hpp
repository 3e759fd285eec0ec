// SPDX-License-Identifier: Apache-2.0
/// The assembly map: where each text run and each media item's encoder output lands in the
/// LLM sequence of its example, on the example's LLM rank, as a list of token copies.
#pragma once

#include <orch/config.hpp>
#include <orch/detail/checked.hpp>
#include <orch/item_table.hpp>
#include <orch/layout.hpp>
#include <orch/types.hpp>

#include <cstddef>
#include <cstdint>
#include <span>
#include <vector>

namespace orch {

/// One copy of `tokens` consecutive tokens into a rank's sequence buffer.
struct assembly_segment {
  /// Source buffer on the same rank: text_source for the rank's text buffer (examples in LLM
  /// slot order), else the index of the encoder whose feature buffer holds the tokens.
  std::int32_t source = 0;
  index_t source_token = 0; ///< first token in the source buffer
  index_t target_token = 0; ///< first token in the rank's sequence buffer
  length_t tokens = 0;
  index_t example = 0; ///< the example the tokens belong to
  index_t media = -1;  ///< the media item (table index) of a feature segment, -1 for text
};

/// Source id of text segments.
inline constexpr std::int32_t text_source = -1;

/// The sequences of every LLM rank, as copies from its text and feature buffers.
///
/// Buffer conventions (all in tokens): a rank's text buffer holds its examples' text tokens in
/// LLM slot order; encoder e's feature buffer on the rank holds the outputs of its media items
/// in the order of that encoder's LLM-side feature layout; the sequence buffer holds the
/// examples' sequences in LLM slot order, each laid out as text[0, p0) media0 text[p0, p1)
/// media1 ... text[pk, text_tokens), p the media text positions.
struct assembly_map {
  std::vector<index_t> rank_begin;        ///< segments of rank r: [rank_begin[r], rank_begin[r+1])
  std::vector<assembly_segment> segments; ///< every rank's segments, ranks in order
  std::vector<index_t> sequence_offset;   ///< per example: first token of its sequence on its rank
  std::vector<length_t> sequence_length;  ///< per example: text + all encoder outputs
  std::vector<index_t> sequence_tokens;   ///< per rank: length of its sequence buffer

  /// The segments of rank r in target order.
  [[nodiscard]] std::span<const assembly_segment> on_rank(rank_t r) const {
    const auto b = static_cast<std::size_t>(rank_begin.at(static_cast<std::size_t>(r)));
    const auto e = static_cast<std::size_t>(rank_begin.at(static_cast<std::size_t>(r) + 1));
    return std::span<const assembly_segment>(segments).subspan(b, e - b);
  }
};

/// Builds the assembly map.
///
/// `llm` places examples; `feature_layouts[e]` places the media items of encoder e
/// (`encoder_media[e][i]` is the table index of its item i) on the LLM rank of their example;
/// `media_encoder[m]` is the encoder of table media item m and `output_tokens[m]` its output.
/// Complexity: O(examples + media + ranks).
/// Throws: orch::overflow when a token offset does not fit.
[[nodiscard]] inline assembly_map
build_assembly(const item_table& table, const layout& llm, std::span<const layout> feature_layouts,
               std::span<const std::vector<index_t>> encoder_media,
               std::span<const std::int32_t> media_encoder,
               std::span<const length_t> output_tokens) {
  const auto ranks = static_cast<std::size_t>(llm.ranks());
  const auto examples = static_cast<std::size_t>(table.examples());
  // Token offset of every media item inside its encoder's feature buffer on its LLM rank.
  // Every media item is in one feature layout, so every entry is written (no zero-fill).
  // (Hot loops read the layouts' and the table's column spans, not the checked accessors.)
  detail::uninit_vector<index_t> feature_token(output_tokens.size());
  for (std::size_t e = 0; e < feature_layouts.size(); ++e) {
    const auto& fl = feature_layouts[e];
    const auto order = fl.order();
    const auto first = fl.first_on();
    const index_t* const media_of = encoder_media[e].data();
    for (std::size_t r = 0; r + 1 < first.size(); ++r) {
      index_t cursor = 0;
      const auto end = static_cast<std::size_t>(first[r + 1]);
      for (auto p = static_cast<std::size_t>(first[r]); p < end; ++p) {
        const auto m = static_cast<std::size_t>(media_of[order[p]]);
        feature_token[m] = cursor;
        cursor = detail::checked_add(cursor, output_tokens[m], "build_assembly: feature tokens");
      }
    }
  }

  const auto text_of = table.text_lengths();
  const auto position_of = table.media_text_positions();
  const auto media_first = table.media_offsets();
  const auto order = llm.order();
  const auto first = llm.first_on();
  assembly_map a;
  a.rank_begin.assign(ranks + 1, 0);
  a.sequence_offset.assign(examples, 0);
  a.sequence_length.assign(examples, 0);
  a.sequence_tokens.assign(ranks, 0);
  a.segments.reserve(examples + 2 * output_tokens.size());
  for (std::size_t r = 0; r < ranks; ++r) {
    index_t text_cursor = 0; // position in the rank's text buffer
    index_t target = 0;      // position in the rank's sequence buffer
    auto emit = [&](std::int32_t source, index_t source_token, length_t tokens, index_t example,
                    index_t media) {
      if (tokens > 0) {
        a.segments.push_back({source, source_token, target, tokens, example, media});
        target = detail::checked_add(target, tokens, "build_assembly: sequence tokens");
      }
    };
    const auto end = static_cast<std::size_t>(first[r + 1]);
    for (auto p = static_cast<std::size_t>(first[r]); p < end; ++p) {
      const index_t x = order[p];
      const auto xu = static_cast<std::size_t>(x);
      const index_t begin = target;
      length_t consumed = 0; // text tokens of x already placed
      const auto media_end = static_cast<std::size_t>(media_first[xu + 1]);
      for (auto mu = static_cast<std::size_t>(media_first[xu]); mu < media_end; ++mu) {
        const length_t position = position_of[mu];
        emit(text_source, text_cursor + consumed, position - consumed, x, -1);
        consumed = position;
        emit(media_encoder[mu], feature_token[mu], output_tokens[mu], x, static_cast<index_t>(mu));
      }
      emit(text_source, text_cursor + consumed, text_of[xu] - consumed, x, -1);
      text_cursor = detail::checked_add(text_cursor, text_of[xu], "build_assembly: text tokens");
      a.sequence_offset[xu] = begin;
      a.sequence_length[xu] = target - begin;
    }
    a.sequence_tokens[r] = target;
    a.rank_begin[r + 1] = static_cast<index_t>(a.segments.size());
  }
  return a;
}

} // namespace orch
