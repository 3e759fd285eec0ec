// SPDX-License-Identifier: Apache-2.0
// Fuzz target: the metadata all-gather's decoding (orch/orchestrate/metadata.hpp). Buffers are
// either raw fuzzed words or valid local_batch::serialize output with fuzzed edits (any word set to
// a small, huge — 2^62 — or negative value, truncation, extra words), the checksum recomputed or
// not. Decoding through every entry point (spans, vectors, concatenated + counts, padded)
// either throws orch::invalid_argument or gives a table that validates for the rank count, and
// all entry points agree; unedited buffers give back exactly the batches. No allocation may be
// sized by an unchecked count: a bad_alloc (or ASan's allocation limit) is a failure.
#define ORCH_FUZZ_NAME "metadata"
#include "../fuzz_input.hpp"

#include <orch/orchestrate/metadata.hpp>

#include <algorithm>
#include <cstdint>
#include <optional>
#include <span>
#include <string>
#include <vector>

namespace {

using words = std::vector<std::int64_t>;

/// The table, or nothing when the buffers are rejected.
template <class Decode>
std::optional<orch::item_table> decode(Decode&& run) {
  try {
    return run();
  } catch (const orch::invalid_argument&) {
    return std::nullopt;
  }
}

bool same(const orch::item_table& a, const orch::item_table& b) {
  return a.field_names() == b.field_names() && std::ranges::equal(a.owners(), b.owners()) &&
         std::ranges::equal(a.local_indices(), b.local_indices()) &&
         std::ranges::equal(a.text_lengths(), b.text_lengths()) &&
         std::ranges::equal(a.media_offsets(), b.media_offsets()) &&
         std::ranges::equal(a.media_fields(), b.media_fields()) &&
         std::ranges::equal(a.media_lengths(), b.media_lengths()) &&
         std::ranges::equal(a.media_text_positions(), b.media_text_positions());
}

} // namespace

int orch_fuzz_metadata(const std::uint8_t* data, std::size_t size) {
  orch::fuzz::input in(data, size);
  const auto ranks = static_cast<orch::rank_t>(in.uniform(1, 4));
  const bool raw = in.uniform(0, 3) == 0;
  std::vector<words> buffers(static_cast<std::size_t>(ranks));
  std::optional<orch::item_table> expected;
  if (raw) {
    for (auto& b : buffers) {
      b.resize(static_cast<std::size_t>(in.uniform(0, 24)));
      for (std::size_t w = 0; w < b.size(); ++w) {
        // Mostly plausible headers, so the decoder gets past the magic word.
        b[w] = w == 0 && in.boolean()   ? orch::metadata_magic
               : w == 1 && in.boolean() ? orch::metadata_version
                                        : static_cast<std::int64_t>(in.raw(8));
      }
    }
  } else {
    constexpr const char* names[] = {"image", "audio", "video", "a-much-longer-field-name", "x"};
    orch::item_table reference;
    for (orch::rank_t r = 0; r < ranks; ++r) {
      orch::local_batch batch;
      const auto examples = in.uniform(0, 5);
      for (std::int64_t e = 0; e < examples; ++e) {
        const orch::length_t text = in.uniform(0, 50);
        std::vector<orch::media_spec> media(static_cast<std::size_t>(in.uniform(0, 3)));
        orch::length_t position = 0;
        for (auto& m : media) {
          position = in.uniform(position, text);
          m = {names[in.uniform(0, 4)], in.uniform(0, 1000), position};
        }
        batch.add(text, media);
        reference.add_example(r, e, text, media);
      }
      buffers[static_cast<std::size_t>(r)] = batch.serialize(r);
    }
    expected = reference;
    const auto edits = in.uniform(0, 3);
    for (std::int64_t k = 0; k < edits; ++k) {
      auto& b = buffers[static_cast<std::size_t>(in.uniform(0, ranks - 1))];
      switch (in.uniform(0, 3)) {
      case 0:
        b.resize(static_cast<std::size_t>(in.uniform(0, static_cast<std::int64_t>(b.size()))));
        break;
      case 1:
        b.push_back(static_cast<std::int64_t>(in.raw(8)));
        break;
      default:
        if (!b.empty()) {
          b[static_cast<std::size_t>(in.uniform(0, static_cast<std::int64_t>(b.size()) - 1))] =
              in.boolean() ? in.length(64) : static_cast<std::int64_t>(in.raw(8));
        }
      }
      if (!b.empty() && in.boolean()) {
        b.back() =
            orch::local_batch::checksum(std::span<const std::int64_t>(b).first(b.size() - 1));
      }
      expected.reset(); // an edit may or may not change the table
    }
  }

  const std::vector<std::span<const std::int64_t>> spans(buffers.begin(), buffers.end());
  const auto by_spans = decode([&] { return orch::table_from_metadata(spans); });
  const auto by_vectors = decode([&] {
    orch::item_table t;
    orch::append_metadata(t, std::span<const words>(buffers));
    return t;
  });
  words concatenated;
  words counts;
  std::size_t widest = 0;
  for (const auto& b : buffers) {
    concatenated.insert(concatenated.end(), b.begin(), b.end());
    counts.push_back(static_cast<std::int64_t>(b.size()));
    widest = std::max(widest, b.size());
  }
  const auto by_counts = decode([&] { return orch::table_from_metadata(concatenated, counts); });
  words padded(widest * buffers.size(), 0);
  for (std::size_t r = 0; r < buffers.size(); ++r) {
    std::copy(buffers[r].begin(), buffers[r].end(),
              padded.begin() + static_cast<std::ptrdiff_t>(r * widest));
  }
  const auto by_padding = decode([&] { return orch::table_from_metadata_padded(padded, ranks); });

  ORCH_FUZZ_CHECK(by_spans.has_value() == by_vectors.has_value());
  ORCH_FUZZ_CHECK(by_spans.has_value() == by_counts.has_value());
  if (expected) {
    ORCH_FUZZ_CHECK(by_spans.has_value() && same(*by_spans, *expected));
  }
  if (by_spans) {
    by_spans->validate(ranks);
    ORCH_FUZZ_CHECK(same(*by_spans, *by_vectors) && same(*by_spans, *by_counts));
    // Padding cannot turn a valid buffer set into an invalid one: its slots hold the same
    // buffers, each followed by zeros it ignores.
    ORCH_FUZZ_CHECK(by_padding.has_value() && same(*by_spans, *by_padding));
  }

  // A count at an allocation-sized extreme in an otherwise valid buffer is an error, not an
  // allocation: examples (word 4), media (5) or fields (6) set to 2^62, checksum recomputed.
  if (!buffers.empty() && buffers[0].size() >= 8 && in.boolean()) {
    auto b = buffers[0];
    b[static_cast<std::size_t>(in.uniform(4, 6))] = std::int64_t{1} << 62;
    b.back() = orch::local_batch::checksum(std::span<const std::int64_t>(b).first(b.size() - 1));
    const std::vector<std::span<const std::int64_t>> one{b};
    ORCH_FUZZ_CHECK(!decode([&] { return orch::table_from_metadata(one); }).has_value());
  }
  return 0;
}
