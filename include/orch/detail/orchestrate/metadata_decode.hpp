// SPDX-License-Identifier: Apache-2.0
/// Decoding of metadata buffers (orch/orchestrate/metadata.hpp): the format constants, and the
/// checks of one rank's buffer word by word before anything is read from or allocated for it.
#pragma once

#include <orch/config.hpp>
#include <orch/detail/primitives/hash.hpp>
#include <orch/orchestrate/item_table.hpp>
#include <orch/types.hpp>

#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <limits>
#include <span>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

namespace orch {

/// First word of every metadata buffer: "orchmeta" in ASCII, read as a big-endian integer.
inline constexpr std::int64_t metadata_magic = 0x6F7263686D657461;
/// Second word: the format version this header writes and reads.
inline constexpr std::int64_t metadata_version = 1;
/// Words before the field table: magic, version, total words, rank, examples, media, fields.
inline constexpr std::int64_t metadata_header_words = 7;

namespace detail {

/// detail::word_hash over `words`, as a signed 64-bit value: a buffer's last word.
[[nodiscard]] inline std::int64_t metadata_checksum(std::span<const std::int64_t> words) noexcept {
  word_hash h;
  for (const std::int64_t w : words) {
    h.add_signed(w);
  }
  return static_cast<std::int64_t>(h.value());
}

/// One rank's buffer, checked word by word: the columns as spans into it, names decoded.
struct metadata_view {
  std::vector<std::string> fields;
  std::span<const std::int64_t> text;
  std::span<const std::int64_t> media_count;
  std::span<const std::int64_t> field;
  std::span<const std::int64_t> length;
  std::span<const std::int64_t> position;
};

/// Checks every word of `buffer` (which must claim rank `rank`) before anything is allocated
/// from a count in it: each count is compared with the words left first. `padded` accepts
/// words after the buffer's own length (the padding of an all-gather into equal slots).
/// Complexity: O(words + fields log fields).
/// Throws: orch::invalid_argument naming `where`, the rank and what is wrong.
[[nodiscard]] inline metadata_view check_metadata(std::span<const std::int64_t> buffer, rank_t rank,
                                                  bool padded, const char* where) {
  const auto n = static_cast<std::int64_t>(buffer.size());
  const auto word = [&](std::int64_t i) { return buffer[static_cast<std::size_t>(i)]; };
  if (n == 0) {
    throw_invalid_argument(where, ": the buffer of rank ", rank, " is empty");
  }
  if (word(0) != metadata_magic) {
    throw_invalid_argument(where, ": the buffer of rank ", rank, " starts with ", word(0),
                           ", not the metadata magic word ", metadata_magic,
                           " (not a local_batch::serialize buffer)");
  }
  if (n > 1 && word(1) != metadata_version) {
    throw_invalid_argument(where, ": the buffer of rank ", rank, " has format version ", word(1),
                           ", this orch reads version ", metadata_version);
  }
  if (n < metadata_header_words + 1) {
    throw_invalid_argument(where, ": the buffer of rank ", rank, " is truncated: ", n,
                           " words, a header and checksum need ", metadata_header_words + 1);
  }
  const std::int64_t words = word(2);
  if (words < metadata_header_words + 1 || words > n || (!padded && words != n)) {
    throw_invalid_argument(where, ": the buffer of rank ", rank, " says it has ", words,
                           " words but holds ", n,
                           words > n ? " (truncated)" : (padded ? "" : " (wrong length)"));
  }
  const auto body = buffer.first(static_cast<std::size_t>(words));
  if (metadata_checksum(body.first(body.size() - 1)) != body.back()) {
    throw_invalid_argument(where, ": the buffer of rank ", rank,
                           " fails its checksum (corrupted in transit, or not written by "
                           "local_batch::serialize)");
  }
  if (word(3) != rank) {
    throw_invalid_argument(where, ": buffer ", rank, " claims rank ", word(3),
                           " (buffers must be in rank order, one per rank)");
  }
  const std::int64_t examples = word(4);
  const std::int64_t media = word(5);
  const std::int64_t fields = word(6);
  std::int64_t at = metadata_header_words;
  const std::int64_t end = words - 1; // the checksum word
  const auto left = [&] { return end - at; };
  if (examples < 0 || media < 0 || fields < 0) {
    throw_invalid_argument(where, ": the buffer of rank ", rank, " has negative counts (", examples,
                           " examples, ", media, " media, ", fields, " fields)");
  }
  // Every field takes at least one word: compare with the words left before reserving.
  if (fields > left()) {
    throw_invalid_argument(where, ": the buffer of rank ", rank, " claims ", fields,
                           " field names but only ", left(), " words follow the header");
  }
  metadata_view v;
  v.fields.reserve(static_cast<std::size_t>(fields));
  for (std::int64_t f = 0; f < fields; ++f) {
    if (left() < 1) {
      throw_invalid_argument(where, ": the buffer of rank ", rank, " ends before the name of ",
                             "field ", f, " of ", fields);
    }
    const std::int64_t bytes = word(at);
    ++at;
    // bytes <= 8·left() before the (overflow-free) word count below.
    if (bytes <= 0 || bytes / 8 > left() || (bytes + 7) / 8 > left()) {
      throw_invalid_argument(where, ": the buffer of rank ", rank, " gives field ", f,
                             " a name of ", bytes, " bytes with ", left(),
                             " words left (a name has at least 1 byte, packed 8 per word)");
    }
    std::string name(static_cast<std::size_t>(bytes), '\0');
    for (std::int64_t k = 0; k < bytes; ++k) {
      const auto packed = static_cast<std::uint64_t>(word(at + k / 8));
      name[static_cast<std::size_t>(k)] = static_cast<char>((packed >> (8 * (k % 8))) & 0xFFU);
    }
    const std::int64_t name_words = (bytes + 7) / 8;
    const auto last = static_cast<std::uint64_t>(word(at + name_words - 1));
    if (bytes % 8 != 0 && (last >> (8 * (bytes % 8))) != 0) {
      throw_invalid_argument(where, ": the buffer of rank ", rank, " has non-zero padding after ",
                             "the ", bytes, " bytes of field name ", f, " in its last word");
    }
    at += name_words;
    if (name == "text") {
      throw_invalid_argument(where, ": the buffer of rank ", rank, " names field ", f,
                             " 'text', which is not a media field");
    }
    v.fields.push_back(std::move(name));
  }
  std::vector<std::string_view> sorted(v.fields.begin(), v.fields.end());
  std::sort(sorted.begin(), sorted.end());
  if (const auto dup = std::adjacent_find(sorted.begin(), sorted.end()); dup != sorted.end()) {
    throw_invalid_argument(where, ": the buffer of rank ", rank, " names field '", *dup,
                           "' twice (field names are distinct)");
  }
  // 2·examples + 3·media words must follow exactly; both counts are ≤ left() first, so the
  // sum cannot overflow.
  if (examples > left() || media > left() || 2 * examples + 3 * media != left()) {
    throw_invalid_argument(where, ": the buffer of rank ", rank, " claims ", examples,
                           " examples and ", media, " media items (", "2 and 3 words each) but ",
                           left(), " words follow its field names");
  }
  const auto column = [&](std::int64_t count) {
    const auto c = buffer.subspan(static_cast<std::size_t>(at), static_cast<std::size_t>(count));
    at += count;
    return c;
  };
  v.text = column(examples);
  v.media_count = column(examples);
  v.field = column(media);
  v.length = column(media);
  v.position = column(media);
  std::int64_t m = 0;
  for (std::int64_t e = 0; e < examples; ++e) {
    const auto u = static_cast<std::size_t>(e);
    const std::int64_t text = v.text[u];
    const std::int64_t count = v.media_count[u];
    if (text < 0) {
      throw_invalid_argument(where, ": rank ", rank, " local example ", e,
                             " has negative text length ", text);
    }
    if (count < 0 || count > media - m) {
      throw_invalid_argument(where, ": rank ", rank, " local example ", e, " claims ", count,
                             " media items, ", media - m, " of the buffer's ", media, " are left");
    }
    length_t previous = 0;
    for (std::int64_t k = 0; k < count; ++k, ++m) {
      const auto i = static_cast<std::size_t>(m);
      if (v.field[i] < 0 || v.field[i] >= fields) {
        throw_invalid_argument(where, ": rank ", rank, " local example ", e, " media ", k,
                               " has field ", v.field[i], " outside the buffer's [0, ", fields,
                               ")");
      }
      if (v.length[i] < 0) {
        throw_invalid_argument(where, ": rank ", rank, " local example ", e, " media ", k,
                               " has negative length ", v.length[i]);
      }
      if (v.position[i] < previous || v.position[i] > text) {
        throw_invalid_argument(where, ": rank ", rank, " local example ", e, " media ", k,
                               " has text position ", v.position[i], " outside [", previous, ", ",
                               text, "]");
      }
      previous = v.position[i];
    }
  }
  if (m != media) {
    throw_invalid_argument(where, ": the buffer of rank ", rank, " claims ", media,
                           " media items but its examples hold ", m);
  }
  return v;
}

/// Appends checked buffers, rank by rank, through item_table::add_example.
inline void append_checked(item_table& table, std::span<const metadata_view> views) {
  std::vector<media_spec> media;
  for (std::size_t r = 0; r < views.size(); ++r) {
    const auto& v = views[r];
    std::size_t m = 0;
    for (std::size_t e = 0; e < v.text.size(); ++e) {
      media.clear();
      for (std::int64_t k = 0; k < v.media_count[e]; ++k, ++m) {
        media.push_back(
            {v.fields[static_cast<std::size_t>(v.field[m])], v.length[m], v.position[m]});
      }
      (void)table.add_example(static_cast<rank_t>(r), static_cast<index_t>(e), v.text[e], media);
    }
  }
}

[[nodiscard]] inline rank_t checked_rank_count(std::size_t ranks, const char* where) {
  if (ranks == 0 || ranks > static_cast<std::size_t>(std::numeric_limits<rank_t>::max())) {
    throw_invalid_argument(where, ": need 1 to 2^31-1 ranks' buffers, got ", ranks);
  }
  return static_cast<rank_t>(ranks);
}

/// Checks all buffers (buffer r must claim rank r), then appends them: all or nothing.
inline void append_buffers(item_table& table,
                           std::span<const std::span<const std::int64_t>> buffers, bool padded,
                           const char* where) {
  (void)checked_rank_count(buffers.size(), where);
  std::vector<metadata_view> views;
  views.reserve(buffers.size());
  for (std::size_t r = 0; r < buffers.size(); ++r) {
    views.push_back(check_metadata(buffers[r], static_cast<rank_t>(r), padded, where));
  }
  // add_example may still refuse an example the buffers cannot judge (a table made for a
  // model rejects fields the model does not consume): append to a copy, then move it in.
  item_table grown = table;
  append_checked(grown, views);
  table = std::move(grown);
}

/// Splits `concatenated` into counts[r] words per rank, checked.
[[nodiscard]] inline std::vector<std::span<const std::int64_t>>
split_by_counts(std::span<const std::int64_t> concatenated, std::span<const std::int64_t> counts,
                const char* where) {
  (void)checked_rank_count(counts.size(), where);
  std::vector<std::span<const std::int64_t>> buffers;
  buffers.reserve(counts.size());
  std::size_t at = 0;
  for (std::size_t r = 0; r < counts.size(); ++r) {
    if (counts[r] < 0 || static_cast<std::uint64_t>(counts[r]) > concatenated.size() - at) {
      throw_invalid_argument(where, ": rank ", r, " has a count of ", counts[r], " words, ",
                             concatenated.size() - at, " of the ", concatenated.size(),
                             " gathered words are left");
    }
    buffers.push_back(concatenated.subspan(at, static_cast<std::size_t>(counts[r])));
    at += static_cast<std::size_t>(counts[r]);
  }
  if (at != concatenated.size()) {
    throw_invalid_argument(where, ": the counts add up to ", at, " words but ", concatenated.size(),
                           " were gathered");
  }
  return buffers;
}

/// Splits `padded` into `ranks` slots of equal size.
[[nodiscard]] inline std::vector<std::span<const std::int64_t>>
split_padded(std::span<const std::int64_t> padded, rank_t ranks, const char* where) {
  if (ranks <= 0) {
    throw_invalid_argument(where, ": number of ranks must be positive, got ", ranks);
  }
  const auto k = static_cast<std::size_t>(ranks);
  if (padded.size() % k != 0) {
    throw_invalid_argument(where, ": ", padded.size(), " gathered words do not split into ", ranks,
                           " equal slots");
  }
  const std::size_t stride = padded.size() / k;
  std::vector<std::span<const std::int64_t>> buffers;
  buffers.reserve(k);
  for (std::size_t r = 0; r < k; ++r) {
    buffers.push_back(padded.subspan(r * stride, stride));
  }
  return buffers;
}

} // namespace detail

} // namespace orch
