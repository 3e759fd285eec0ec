// SPDX-License-Identifier: Apache-2.0
/// The metadata all-gather: a rank's examples as a flat int64 buffer (local_batch::serialize),
/// and the identical item_table rebuilt on every rank from all ranks' gathered buffers.
#pragma once

#include <orch/config.hpp>
#include <orch/detail/orchestrate/metadata_decode.hpp>
#include <orch/orchestrate/item_table.hpp>
#include <orch/types.hpp>

#include <cstddef>
#include <cstdint>
#include <span>
#include <string>
#include <string_view>
#include <vector>

namespace orch {

/// One rank's sampled examples (text tokens, media), in the order that defines their local
/// indices: the e-th example added has local index e. serialize() turns the batch into the
/// buffer that the metadata all-gather moves (format: docs/api/metadata.md); field names
/// travel inside the buffer, so ranks need not agree on any field list beforehand.
///
/// Complexity: add is amortised O(media of the example · fields of the batch).
class local_batch {
public:
  /// Appends an example and returns its local index. The media are in the order they take in
  /// the example's LLM sequence (what item_table::add_example takes); names are copied.
  /// Throws: orch::invalid_argument naming the local index and media item (negative text or
  /// media length; a text position below the previous one or above the text length; an empty
  /// field name or the name "text"). The batch is unchanged when it throws.
  index_t add(length_t text_tokens, std::span<const media_spec> media = {}) {
    const index_t e = examples();
    if (text_tokens < 0) {
      throw_invalid_argument("local_batch::add: local example ", e, " has negative text length ",
                             text_tokens);
    }
    for (std::size_t m = 0; m < media.size(); ++m) {
      if (media[m].length < 0) {
        throw_invalid_argument("local_batch::add: local example ", e, " media ", m, " ('",
                               media[m].field, "') has negative length ", media[m].length);
      }
      const length_t previous = m == 0 ? 0 : media[m - 1].text_position;
      if (media[m].text_position < previous || media[m].text_position > text_tokens) {
        throw_invalid_argument("local_batch::add: local example ", e, " media ", m,
                               " has text position ", media[m].text_position, " outside [",
                               previous, ", ", text_tokens,
                               "] (positions are non-decreasing, at most the text length)");
      }
      if (media[m].field.empty() || media[m].field == "text") {
        throw_invalid_argument("local_batch::add: local example ", e, " media ", m, " has field '",
                               media[m].field, "', not a media field name");
      }
    }
    text_.push_back(text_tokens);
    for (const auto& m : media) {
      field_.push_back(intern(m.field));
      length_.push_back(m.length);
      position_.push_back(m.text_position);
    }
    media_end_.push_back(static_cast<index_t>(field_.size()));
    return e;
  }

  /// Number of examples added. Complexity: O(1).
  [[nodiscard]] index_t examples() const noexcept { return static_cast<index_t>(text_.size()); }
  /// Number of media items over all examples. Complexity: O(1).
  [[nodiscard]] index_t media_items() const noexcept { return static_cast<index_t>(field_.size()); }
  /// Field names in order of first appearance. Complexity: O(1).
  [[nodiscard]] const std::vector<std::string>& field_names() const noexcept { return fields_; }

  /// The buffer rank `rank` contributes to the metadata all-gather: header, field-name table,
  /// the per-example and per-media columns, and a checksum (docs/api/metadata.md, "Format").
  /// The same batch always gives the same words, on every platform.
  /// Complexity: O(examples + media + bytes of field names).
  /// Throws: orch::invalid_argument (negative rank).
  [[nodiscard]] std::vector<std::int64_t> serialize(rank_t rank) const {
    if (rank < 0) {
      throw_invalid_argument("local_batch::serialize: rank ", rank, " is negative");
    }
    std::size_t name_words = 0;
    for (const auto& f : fields_) {
      name_words += 1 + (f.size() + 7) / 8;
    }
    const std::size_t words = static_cast<std::size_t>(metadata_header_words) + name_words +
                              2 * text_.size() + 3 * field_.size() + 1;
    std::vector<std::int64_t> out;
    out.reserve(words);
    out.insert(out.end(), {metadata_magic, metadata_version, static_cast<std::int64_t>(words), rank,
                           examples(), media_items(), static_cast<std::int64_t>(fields_.size())});
    for (const auto& f : fields_) {
      out.push_back(static_cast<std::int64_t>(f.size()));
      // Byte k of the name sits in bits 8·(k mod 8) of word k / 8: integer arithmetic, so the
      // words do not depend on the platform's byte order.
      for (std::size_t w = 0; w < f.size(); w += 8) {
        std::uint64_t packed = 0;
        for (std::size_t k = w; k < f.size() && k < w + 8; ++k) {
          packed |= std::uint64_t{static_cast<unsigned char>(f[k])} << (8 * (k - w));
        }
        out.push_back(static_cast<std::int64_t>(packed));
      }
    }
    out.insert(out.end(), text_.begin(), text_.end());
    for (std::size_t e = 0; e < text_.size(); ++e) {
      out.push_back(media_end_[e + 1] - media_end_[e]);
    }
    out.insert(out.end(), field_.begin(), field_.end());
    out.insert(out.end(), length_.begin(), length_.end());
    out.insert(out.end(), position_.begin(), position_.end());
    out.push_back(checksum(out));
    ORCH_ASSERT(out.size() == words);
    return out;
  }

  /// The checksum word of a buffer whose other words are `words` (all but the last one):
  /// detail::word_hash over them, as a signed 64-bit value.
  [[nodiscard]] static std::int64_t checksum(std::span<const std::int64_t> words) noexcept {
    return detail::metadata_checksum(words);
  }

private:
  std::int64_t intern(std::string_view field) {
    for (std::size_t f = 0; f < fields_.size(); ++f) {
      if (fields_[f] == field) {
        return static_cast<std::int64_t>(f);
      }
    }
    fields_.emplace_back(field);
    return static_cast<std::int64_t>(fields_.size() - 1);
  }

  std::vector<length_t> text_;
  std::vector<index_t> media_end_{0}; // examples + 1 offsets into the media columns
  std::vector<std::int64_t> field_;   // per media item: index into fields_
  std::vector<length_t> length_;
  std::vector<length_t> position_;
  std::vector<std::string> fields_;
};

/// Appends every rank's examples from the gathered metadata buffers, `buffers[r]` being
/// exactly what rank r's local_batch::serialize(r) returned (any transport: a list of
/// per-rank tensors, MPI receive buffers, ...).
///
/// **The order is the contract**: the examples of rank 0 in local-index order, then those of
/// rank 1, and so on, each added with owner = its rank and local index = its position in its
/// rank's batch. With `before` = table.examples() on entry, the example with local index l on
/// rank r gets the example index before + Σ_{q<r} examples(q) + l, on every rank. The table
/// assigns field ids from that same sequence, so they are identical on every rank too.
///
/// Every buffer is checked completely before the first example is appended; the examples
/// then go through item_table::add_example (so whatever it checks applies too) into a copy of
/// `table` that replaces it at the end: when anything throws, `table` is unchanged.
/// Complexity: O(total words + fields log fields per buffer + media · fields) (the last term
/// is item_table's field lookup), plus a copy of the examples already in `table`. No
/// allocation is sized by a count in a buffer before that count has been compared with the
/// words that remain.
/// Throws: orch::invalid_argument naming the rank and what is wrong: no buffers; an empty or
/// truncated buffer, or one with words after its end; a bad magic word, format version or
/// checksum; buffer r claiming another rank than r; negative or inconsistent counts; a field
/// name, field id, length or text position out of range; and whatever add_example throws.
inline void append_metadata(item_table& table,
                            std::span<const std::span<const std::int64_t>> buffers) {
  detail::append_buffers(table, buffers, false, "append_metadata");
}

/// append_metadata for buffers held as vectors (what a gather into per-rank vectors gives):
/// `gathered[r]` is rank r's buffer. Same order, table and checks.
/// Complexity: as above, plus O(ranks). Throws: as above.
inline void append_metadata(item_table& table,
                            std::span<const std::vector<std::int64_t>> gathered) {
  const std::vector<std::span<const std::int64_t>> buffers(gathered.begin(), gathered.end());
  detail::append_buffers(table, buffers, false, "append_metadata");
}

/// append_metadata for the buffers back to back in `concatenated`, rank r's taking counts[r]
/// words (what MPI_Allgatherv with per-rank counts produces). Same order, table and checks.
/// Complexity: as above, plus O(ranks).
/// Throws: as above, and orch::invalid_argument for a negative count or counts that do not add
/// up to the gathered size (naming the rank).
inline void append_metadata(item_table& table, std::span<const std::int64_t> concatenated,
                            std::span<const std::int64_t> counts) {
  const auto buffers = detail::split_by_counts(concatenated, counts, "append_metadata");
  detail::append_buffers(table, buffers, false, "append_metadata");
}

/// append_metadata for `ranks` equal slots of padded.size() / ranks words each, rank r's
/// buffer at the start of slot r and anything after its own length ignored (what an
/// all-gather of tensors padded to the largest buffer produces, e.g. torch's
/// all_gather_into_tensor). Every buffer records its length, so no counts are needed.
/// Complexity, Throws: as above, and orch::invalid_argument when ranks ≤ 0 or the size is not a
/// multiple of ranks.
inline void append_metadata_padded(item_table& table, std::span<const std::int64_t> padded,
                                   rank_t ranks) {
  const auto buffers = detail::split_padded(padded, ranks, "append_metadata_padded");
  detail::append_buffers(table, buffers, true, "append_metadata_padded");
}

/// A new table holding every rank's examples: append_metadata into an empty table. The
/// table passes validate(buffers.size()). Complexity, Throws: as append_metadata.
[[nodiscard]] inline item_table
table_from_metadata(std::span<const std::span<const std::int64_t>> buffers) {
  item_table table;
  append_metadata(table, buffers);
  return table;
}

/// table_from_metadata from concatenated buffers and per-rank word counts.
/// Complexity, Throws: as append_metadata.
[[nodiscard]] inline item_table table_from_metadata(std::span<const std::int64_t> concatenated,
                                                    std::span<const std::int64_t> counts) {
  item_table table;
  append_metadata(table, concatenated, counts);
  return table;
}

/// table_from_metadata from `ranks` equal padded slots (see append_metadata_padded).
/// Complexity, Throws: as append_metadata_padded.
[[nodiscard]] inline item_table table_from_metadata_padded(std::span<const std::int64_t> padded,
                                                           rank_t ranks) {
  item_table table;
  append_metadata_padded(table, padded, ranks);
  return table;
}

} // namespace orch
