// SPDX-License-Identifier: Apache-2.0
/// Chunked media: items longer than their field's encoder window (media_field::chunk_length)
/// cut into windows that the encoder processes, and orch balances, independently.
#pragma once

#include <orch/config.hpp>
#include <orch/detail/primitives/checked.hpp>
#include <orch/orchestrate/item_table.hpp>
#include <orch/orchestrate/model.hpp>
#include <orch/types.hpp>

#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <string_view>
#include <vector>

namespace orch {

/// How a step's media items are cut into encoder forwards ("chunks").
///
/// Chunk c of table media item m covers input units [offset(c), offset(c) + length(c)) of
/// m; the chunks of m are [first_chunk(m), first_chunk(m) + chunk_count(m)), consecutive and
/// in input order, and chunks are numbered in table media order. An item of a field without
/// a window, or not longer than it, is one chunk (an item of length 0 too). When no item is
/// cut the chunks are the media items themselves (chunk c is media item c) and the arrays
/// stay empty (`cut()` is false): that costs nothing on steps that need no chunking. Either
/// way the accessors check their index against the table `make` was given (a
/// default-constructed media_chunks describes a table without media).
///
/// Payload: an item's raw input is laid out unit after unit, so chunk c's input bytes are
/// bytes [offset(c) · b, (offset(c) + length(c)) · b) of its media item's input, b the
/// encoder's input_bytes_per_unit; its encoder output comes after the previous chunk's in the
/// example's LLM sequence.
class media_chunks {
public:
  /// No media item is cut, of a table without media (every accessor throws).
  media_chunks() = default;

  /// Whether any media item was cut (else chunk c is media item c). Complexity: O(1).
  [[nodiscard]] bool cut() const noexcept { return !media_.empty(); }
  /// Number of chunks, given the table's media item count. Complexity: O(1).
  [[nodiscard]] index_t chunks(index_t media_items) const noexcept {
    return cut() ? static_cast<index_t>(media_.size()) : media_items;
  }
  /// The table media item chunk `c` belongs to. Complexity: O(1).
  /// Throws: orch::invalid_argument (c outside [0, chunks), cut or not).
  [[nodiscard]] index_t media_of(index_t c) const {
    const std::size_t i = chunk_at(c, "media_chunks::media_of");
    return cut() ? media_[i] : c;
  }
  /// First input unit of chunk `c` inside its media item. Complexity: O(1). Throws: as media_of.
  [[nodiscard]] length_t offset(index_t c) const {
    const std::size_t i = chunk_at(c, "media_chunks::offset");
    return cut() ? offset_[i] : 0;
  }
  /// Input units of chunk `c` (`table` is the one the chunks were made from). Complexity: O(1).
  /// Throws: as media_of, or item_table's error for a chunk outside another `table`.
  [[nodiscard]] length_t length(index_t c, const item_table& table) const {
    const std::size_t i = chunk_at(c, "media_chunks::length");
    return cut() ? length_[i] : table.media_length(c);
  }
  /// The first chunk of table media item `m`. Complexity: O(1).
  /// Throws: orch::invalid_argument (m outside [0, media items), cut or not).
  [[nodiscard]] index_t first_chunk(index_t m) const {
    const std::size_t i = media_at(m, "media_chunks::first_chunk");
    return cut() ? first_[i] : m;
  }
  /// How many chunks table media item `m` was cut into (1 when it was not cut).
  /// Complexity: O(1). Throws: as first_chunk.
  [[nodiscard]] index_t chunk_count(index_t m) const {
    const std::size_t i = media_at(m, "media_chunks::chunk_count");
    return cut() ? first_[i + 1] - first_[i] : 1;
  }

  /// Most chunks one step may be cut into: 2^24 (16.8 million, 50 times the items of the
  /// paper's largest step). A step that would need more is rejected before anything is
  /// allocated: a length in the wrong unit must not cost minutes and then std::bad_alloc.
  static constexpr index_t max_chunks = index_t{1} << 24;

  /// Cuts every media item of `table` by its field's chunk_length in `model` (fields the
  /// model does not consume are left whole: orchestrate reports them).
  /// Complexity: O(media + fields · encoders).
  /// Throws: orch::invalid_argument naming the media item, its example, length and window
  /// when the step would exceed max_chunks chunks (the table's lengths are non-negative and
  /// chunk lengths are validated by the model).
  [[nodiscard]] static media_chunks make(const item_table& table, const model_description& model) {
    const auto& names = table.field_names();
    std::vector<length_t> window(names.size(), 0);
    media_chunks out;
    out.items_ = table.media_items();
    bool any_window = false;
    for (std::size_t f = 0; f < names.size(); ++f) {
      const media_field* field = model.find_field(names[f]);
      window[f] = field != nullptr && field->chunk_length > 0 ? field->chunk_length : 0;
      any_window = any_window || window[f] > 0;
    }
    if (!any_window) {
      return out;
    }
    const auto fields = table.media_fields();
    const auto lengths = table.media_lengths();
    const std::size_t media = lengths.size();
    std::size_t total = 0;
    for (std::size_t m = 0; m < media; ++m) {
      const length_t w = window[static_cast<std::size_t>(fields[m])];
      const length_t n = pieces(lengths[m], w);
      // total ≤ max_chunks here, so the comparison cannot overflow.
      if (n > max_chunks - static_cast<index_t>(total)) {
        throw_invalid_argument(
            "media_chunks: media item ", m, " (example ", table.media_examples()[m], ", field '",
            names[static_cast<std::size_t>(fields[m])], "') of length ", lengths[m],
            " in windows of ", w, " takes the step past ", max_chunks,
            " chunks (media_chunks::max_chunks; a length in "
            "the wrong unit?)");
      }
      total += static_cast<std::size_t>(n);
    }
    if (total == media) {
      return out; // nothing is longer than its window
    }
    out.media_.reserve(total);
    out.offset_.reserve(total);
    out.length_.reserve(total);
    out.first_.reserve(media + 1);
    for (std::size_t m = 0; m < media; ++m) {
      out.first_.push_back(static_cast<index_t>(out.media_.size()));
      const length_t w = window[static_cast<std::size_t>(fields[m])];
      const length_t l = lengths[m];
      const length_t n = pieces(l, w);
      for (length_t k = 0; k < n; ++k) {
        out.media_.push_back(static_cast<index_t>(m));
        out.offset_.push_back(k * (n == 1 ? 0 : w));
        out.length_.push_back(n == 1 ? l : std::min(w, l - k * w));
      }
    }
    out.first_.push_back(static_cast<index_t>(out.media_.size()));
    return out;
  }

  /// `table` with every media item replaced by its chunks (each a media item of the same
  /// field, example and text position): the table orchestrate plans, whose media index is
  /// the chunk index. Complexity: O(examples + chunks · fields).
  /// Throws: nothing new (the chunks of a valid table form a valid table).
  [[nodiscard]] item_table apply(const item_table& table) const {
    if (!cut()) {
      return table;
    }
    item_table out;
    const auto& names = table.field_names();
    std::vector<media_spec> media;
    for (index_t x = 0; x < table.examples(); ++x) {
      media.clear();
      for (index_t m = table.media_begin(x); m < table.media_end(x); ++m) {
        const std::string_view field = names[static_cast<std::size_t>(table.media_field(m))];
        for (index_t c = first_chunk(m); c < first_chunk(m) + chunk_count(m); ++c) {
          media.push_back(
              {field, length_[static_cast<std::size_t>(c)], table.media_text_position(m)});
        }
      }
      static_cast<void>(
          out.add_example(table.owner(x), table.local_index(x), table.text_tokens(x), media));
    }
    return out;
  }

private:
  [[nodiscard]] std::size_t chunk_at(index_t c, const char* where) const {
    const index_t n = cut() ? static_cast<index_t>(media_.size()) : items_;
    if (c < 0 || c >= n) {
      throw_invalid_argument(where, ": chunk ", c, " is outside [0, ", n, ")");
    }
    return static_cast<std::size_t>(c);
  }
  [[nodiscard]] std::size_t media_at(index_t m, const char* where) const {
    if (m < 0 || m >= items_) {
      throw_invalid_argument(where, ": media item ", m, " is outside [0, ", items_, ")");
    }
    return static_cast<std::size_t>(m);
  }

  /// Chunks of an item of length l under window w (0: no window).
  [[nodiscard]] static length_t pieces(length_t l, length_t w) noexcept {
    return w > 0 && l > w ? detail::ceil_div(l, w) : 1;
  }

  std::vector<index_t> media_;   // per chunk
  std::vector<length_t> offset_; // per chunk
  std::vector<length_t> length_; // per chunk
  std::vector<index_t> first_;   // per media item, + 1
  index_t items_ = 0;            // media items of the table (what the accessors check)
};

} // namespace orch
