// SPDX-License-Identifier: Apache-2.0
/// The assembly map: where each text run and each media item's encoder output lands in the
/// LLM sequence of its example, on the example's LLM rank, as a list of token copies. (The
/// builder, which reads the item table, is orch/orchestrate/build_assembly.hpp.)
#pragma once

#include <orch/config.hpp>
#include <orch/exchange/layout.hpp>
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
  /// Throws: orch::invalid_argument (r outside [0, ranks)).
  [[nodiscard]] std::span<const assembly_segment> on_rank(rank_t r) const {
    if (r < 0 || static_cast<std::size_t>(r) + 1 >= rank_begin.size()) {
      throw_invalid_argument("assembly_map::on_rank: rank ", r, " is outside [0, ",
                             rank_begin.empty() ? 0 : rank_begin.size() - 1, ")");
    }
    const auto b = static_cast<std::size_t>(rank_begin[static_cast<std::size_t>(r)]);
    const auto e = static_cast<std::size_t>(rank_begin[static_cast<std::size_t>(r) + 1]);
    return std::span<const assembly_segment>(segments).subspan(b, e - b);
  }
};

} // namespace orch
