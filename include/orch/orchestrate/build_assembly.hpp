// SPDX-License-Identifier: Apache-2.0
/// build_assembly: the assembly map (orch/orchestrate/assembly.hpp) of a step, from the item table,
/// the LLM layout and every encoder's LLM-side feature layout. On the orchestrate side: it reads
/// the item table, which the plan layer below never does.
#pragma once

#include <orch/config.hpp>
#include <orch/detail/primitives/checked.hpp>
#include <orch/detail/primitives/hash.hpp>
#include <orch/detail/primitives/uninit_vector.hpp>
#include <orch/exchange/layout.hpp>
#include <orch/orchestrate/assembly.hpp>
#include <orch/orchestrate/item_table.hpp>
#include <orch/types.hpp>

#include <array>
#include <bit>
#include <cstddef>
#include <cstdint>
#include <span>
#include <vector>

namespace orch {

namespace detail {

/// a + b: checked (throws orch::overflow naming `what`) when `Checked`, else plain — for
/// sums that a bound checked up front keeps inside int64.
template <bool Checked>
[[nodiscard]] inline std::int64_t assembly_add(std::int64_t a, std::int64_t b, const char* what) {
  if constexpr (Checked) {
    return checked_add(a, b, what);
  } else {
    static_cast<void>(what);
    return a + b;
  }
}

/// Writes the token offset of every media item inside its encoder's feature buffer on its LLM
/// rank (every media item is in one feature layout, so every entry is written) and returns
/// the bitwise or of every output token count. Checked: throws the first overflow in layout
/// order. Unchecked: the sums wrap (modulo 2^64, no undefined behaviour), so the offsets are
/// right only where build_assembly's bound, which needs the returned bits, holds.
template <bool Checked>
inline std::uint64_t feature_token_offsets(std::span<const layout> feature_layouts,
                                           std::span<const std::vector<index_t>> encoder_media,
                                           std::span<const length_t> output_tokens,
                                           index_t* feature_token) {
  std::uint64_t bits = 0;
  for (std::size_t e = 0; e < feature_layouts.size(); ++e) {
    const auto order = feature_layouts[e].order();
    const auto first = feature_layouts[e].first_on();
    const index_t* const media_of = encoder_media[e].data();
    for (std::size_t r = 0; r + 1 < first.size(); ++r) {
      index_t cursor = 0;
      const auto end = static_cast<std::size_t>(first[r + 1]);
      for (auto p = static_cast<std::size_t>(first[r]); p < end; ++p) {
        const auto m = static_cast<std::size_t>(media_of[order[p]]);
        const length_t tokens = output_tokens[m];
        feature_token[m] = cursor;
        bits |= static_cast<std::uint64_t>(tokens);
        if constexpr (Checked) {
          cursor = checked_add(cursor, tokens, "build_assembly: feature tokens");
        } else {
          cursor = static_cast<index_t>(static_cast<std::uint64_t>(cursor) +
                                        static_cast<std::uint64_t>(tokens));
        }
      }
    }
  }
  return bits;
}

/// The hash of an assembly map's segments, as the step hash absorbs it: one word_hash chain
/// per field (source, source token, target token, tokens), each absorbing that field of every
/// segment in order, then the four chains' values in that order. Four independent chains run
/// side by side, where one chain over every field in turn would wait on each multiply.
class segment_hasher {
public:
  void add(std::int64_t source, std::int64_t source_token, std::int64_t target_token,
           std::int64_t tokens) noexcept {
    h_[0] = word_hash::absorb(h_[0], static_cast<std::uint64_t>(source));
    h_[1] = word_hash::absorb(h_[1], static_cast<std::uint64_t>(source_token));
    h_[2] = word_hash::absorb(h_[2], static_cast<std::uint64_t>(target_token));
    h_[3] = word_hash::absorb(h_[3], static_cast<std::uint64_t>(tokens));
  }
  /// The hash once each of `segments` segments has been added (once).
  [[nodiscard]] std::uint64_t value(std::size_t segments) const noexcept {
    word_hash h;
    for (const std::uint64_t f : h_) {
      h.add(word_hash::finish(f, segments));
    }
    return h.value();
  }

private:
  std::array<std::uint64_t, 4> h_{word_hash::initial, word_hash::initial, word_hash::initial,
                                  word_hash::initial};
};

/// The segments and sequences of build_assembly, given every media item's feature offset.
/// Checked: every token sum is checked (the first overflow in rank and slot order throws).
/// Unchecked: plain sums, for inputs whose sums build_assembly bounded up front.
/// Hashed: also writes the segments' hash (segment_hasher) to `*hash`; its multiply chains
/// run in the shadow of the segment writes instead of in a second pass over 48-byte records.
template <bool Checked, bool Hashed = false>
[[nodiscard]] inline assembly_map
place_segments(const item_table& table, const layout& llm,
               std::span<const std::int32_t> media_encoder, std::span<const length_t> output_tokens,
               const index_t* feature_token, std::uint64_t* hash = nullptr) {
  const auto ranks = static_cast<std::size_t>(llm.ranks());
  const auto examples = static_cast<std::size_t>(table.examples());
  const length_t* const text_of = table.text_lengths().data();
  const length_t* const position_of = table.media_text_positions().data();
  const index_t* const media_first = table.media_offsets().data();
  const length_t* const tokens_of = output_tokens.data();
  const std::int32_t* const encoder_of = media_encoder.data();
  const index_t* const order = llm.order().data();
  const index_t* const first = llm.first_on().data();
  assembly_map a;
  a.rank_begin.assign(ranks + 1, 0);
  a.sequence_offset.assign(examples, 0);
  a.sequence_length.assign(examples, 0);
  a.sequence_tokens.assign(ranks, 0);
  // At most a text run before every media item, the item, and the text after the last one.
  a.segments.reserve(examples + 2 * output_tokens.size());
  index_t* const sequence_offset = a.sequence_offset.data();
  length_t* const sequence_length = a.sequence_length.data();
  segment_hasher fields;
  for (std::size_t r = 0; r < ranks; ++r) {
    index_t text_cursor = 0; // position in the rank's text buffer
    index_t target = 0;      // position in the rank's sequence buffer
    // Appending writes each segment's 48 bytes once: sizing the vector first and writing
    // through a pointer saved 1 M instructions but wrote every segment twice (~25 % slower).
    // In this form g++ 12 -O2 inlines the push_back; with a push_back at each of the three
    // sites it did not (~25 % more instructions).
    const auto emit = [&](std::int32_t source, index_t source_token, length_t tokens,
                          index_t example, index_t media) {
      if (tokens > 0) {
        a.segments.push_back({source, source_token, target, tokens, example, media});
        if constexpr (Hashed) {
          fields.add(source, source_token, target, tokens);
        }
        target = assembly_add<Checked>(target, tokens, "build_assembly: sequence tokens");
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
        emit(encoder_of[mu], feature_token[mu], tokens_of[mu], x, static_cast<index_t>(mu));
      }
      const length_t text = text_of[xu];
      emit(text_source, text_cursor + consumed, text - consumed, x, -1);
      text_cursor = assembly_add<Checked>(text_cursor, text, "build_assembly: text tokens");
      sequence_offset[xu] = begin;
      sequence_length[xu] = target - begin;
    }
    a.sequence_tokens[r] = target;
    a.rank_begin[r + 1] = static_cast<index_t>(a.segments.size());
  }
  if constexpr (Hashed) {
    *hash = fields.value(a.segments.size());
  }
  return a;
}

/// build_assembly (below); Hashed: also writes the segments' hash (segment_hasher) to `*hash`.
template <bool Hashed>
[[nodiscard]] inline assembly_map
assemble_sequences(const item_table& table, const layout& llm,
                   std::span<const layout> feature_layouts,
                   std::span<const std::vector<index_t>> encoder_media,
                   std::span<const std::int32_t> media_encoder,
                   std::span<const length_t> output_tokens, std::uint64_t* hash) {
  // Every entry is written by the feature offset pass (no zero-fill).
  uninit_vector<index_t> feature_token(output_tokens.size());
  std::uint64_t bits = feature_token_offsets<false>(feature_layouts, encoder_media, output_tokens,
                                                    feature_token.data());
  for (const length_t text : table.text_lengths()) {
    bits |= static_cast<std::uint64_t>(text); // non-negative (item_table checks)
  }
  const std::size_t values = table.text_lengths().size() + output_tokens.size();
  if (std::bit_width(bits) + std::bit_width(values) <= 63) {
    return place_segments<false, Hashed>(table, llm, media_encoder, output_tokens,
                                         feature_token.data(), hash);
  }
  static_cast<void>(feature_token_offsets<true>(feature_layouts, encoder_media, output_tokens,
                                                feature_token.data()));
  return place_segments<true, Hashed>(table, llm, media_encoder, output_tokens,
                                      feature_token.data(), hash);
}

} // namespace detail

/// Builds the assembly map.
///
/// `llm` places examples; `feature_layouts[e]` places the media items of encoder e
/// (`encoder_media[e][i]` is the table index of its item i) on the LLM rank of their example;
/// `media_encoder[m]` is the encoder of table media item m and `output_tokens[m]` its output.
///
/// Every token offset is a sum of some of the n = examples + media text lengths and output
/// token counts. When all of them are below 2^b and n · 2^b ≤ 2^63, no sum can leave int64
/// and the walk over the sequences runs without a check per token; otherwise (huge or
/// negative counts) both walks run with every sum checked, so the errors are exactly those of
/// a fully checked build.
/// Complexity: O(examples + media + ranks).
/// Throws: orch::overflow when a token offset does not fit.
[[nodiscard]] inline assembly_map
build_assembly(const item_table& table, const layout& llm, std::span<const layout> feature_layouts,
               std::span<const std::vector<index_t>> encoder_media,
               std::span<const std::int32_t> media_encoder,
               std::span<const length_t> output_tokens) {
  return detail::assemble_sequences<false>(table, llm, feature_layouts, encoder_media,
                                           media_encoder, output_tokens, nullptr);
}

} // namespace orch
