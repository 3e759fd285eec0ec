// SPDX-License-Identifier: Apache-2.0
// The metadata all-gather: local_batch buffers decode to exactly the table that add_example
// builds directly, in every gathered form; malformed, truncated or corrupted buffers throw.
#include <orch/orchestrate/item_table.hpp>
#include <orch/orchestrate/metadata.hpp>

#include <support/generators.hpp>

#include <doctest/doctest.h>

#include <chrono>
#include <cstdint>
#include <random>
#include <span>
#include <string>
#include <vector>

using orch::index_t;
using orch::length_t;
using orch::rank_t;

namespace {

using words = std::vector<std::int64_t>;

// Names of 1 to 23 bytes, so that the name table packs 1, 2 and 3 words per name (and one
// name a multiple of 8 bytes long).
const std::vector<std::string> field_pool{
    "image", "audio", "video_frames", "x", "depth_map_8bytes_", "abcdefgh"};

struct example {
  length_t text = 0;
  std::vector<orch::media_spec> media;
};

// Seeded examples of every rank; some ranks (chosen by the seed) hold none.
std::vector<std::vector<example>> random_batches(std::uint64_t seed, rank_t ranks) {
  std::mt19937_64 rng(seed);
  std::vector<std::vector<example>> out(static_cast<std::size_t>(ranks));
  for (auto& batch : out) {
    const auto n = orch::test::uniform_int(rng, 0, 3) == 0 ? 0 : orch::test::uniform_int(rng, 1, 9);
    for (std::int64_t e = 0; e < n; ++e) {
      example x;
      x.text = orch::test::uniform_int(rng, 0, 5) == 0 ? 0 : orch::test::uniform_int(rng, 1, 4000);
      const auto m = orch::test::uniform_int(rng, 0, 4);
      length_t position = 0;
      for (std::int64_t k = 0; k < m; ++k) {
        position = orch::test::uniform_int(rng, position, x.text);
        const auto f = static_cast<std::size_t>(
            orch::test::uniform_int(rng, 0, static_cast<std::int64_t>(field_pool.size()) - 1));
        x.media.push_back({field_pool[f], orch::test::uniform_int(rng, 0, 3000), position});
      }
      batch.push_back(std::move(x));
    }
  }
  return out;
}

std::vector<words> serialize_all(const std::vector<std::vector<example>>& batches) {
  std::vector<words> out;
  for (std::size_t r = 0; r < batches.size(); ++r) {
    orch::local_batch b;
    for (const auto& x : batches[r]) {
      const index_t local = b.add(x.text, x.media);
      CHECK(local == b.examples() - 1);
    }
    out.push_back(b.serialize(static_cast<rank_t>(r)));
  }
  return out;
}

orch::item_table direct_table(const std::vector<std::vector<example>>& batches) {
  orch::item_table t;
  for (std::size_t r = 0; r < batches.size(); ++r) {
    for (std::size_t e = 0; e < batches[r].size(); ++e) {
      (void)t.add_example(static_cast<rank_t>(r), static_cast<index_t>(e), batches[r][e].text,
                          batches[r][e].media);
    }
  }
  return t;
}

template <class T>
bool same(std::span<const T> a, std::span<const T> b) {
  return std::equal(a.begin(), a.end(), b.begin(), b.end());
}

void check_equal(const orch::item_table& a, const orch::item_table& b) {
  REQUIRE(a.examples() == b.examples());
  REQUIRE(a.media_items() == b.media_items());
  CHECK(same(a.owners(), b.owners()));
  CHECK(same(a.local_indices(), b.local_indices()));
  CHECK(same(a.text_lengths(), b.text_lengths()));
  CHECK(same(a.media_offsets(), b.media_offsets()));
  CHECK(same(a.media_fields(), b.media_fields()));
  CHECK(same(a.media_lengths(), b.media_lengths()));
  CHECK(same(a.media_text_positions(), b.media_text_positions()));
  CHECK(same(a.media_examples(), b.media_examples()));
  CHECK(a.field_names() == b.field_names());
}

std::vector<std::span<const std::int64_t>> spans_of(const std::vector<words>& buffers) {
  return {buffers.begin(), buffers.end()};
}

words concatenate(const std::vector<words>& buffers, std::vector<std::int64_t>* counts) {
  words out;
  for (const auto& b : buffers) {
    out.insert(out.end(), b.begin(), b.end());
    counts->push_back(static_cast<std::int64_t>(b.size()));
  }
  return out;
}

words pad(const std::vector<words>& buffers, std::int64_t filler) {
  std::size_t stride = 0;
  for (const auto& b : buffers) {
    stride = std::max(stride, b.size());
  }
  stride += 3; // padding even after the longest buffer
  words out(stride * buffers.size(), filler);
  for (std::size_t r = 0; r < buffers.size(); ++r) {
    std::copy(buffers[r].begin(), buffers[r].end(), out.begin() + static_cast<long>(r * stride));
  }
  return out;
}

// The message of the orch::invalid_argument that f throws ("" when it throws none).
template <class F>
std::string error_of(F&& f) {
  try {
    f();
  } catch (const orch::invalid_argument& e) {
    return e.what();
  }
  return "";
}

bool has(const std::string& message, const std::string& part) {
  return message.find(part) != std::string::npos;
}

// Recomputes the checksum after an edit, so the decoder's structural checks are reached.
void reseal(words& b) {
  b.back() = orch::local_batch::checksum(std::span<const std::int64_t>(b).first(b.size() - 1));
}

} // namespace

TEST_CASE("metadata: round trip gives the table add_example builds, in rank order") {
  for (std::uint64_t seed = 1; seed <= 40; ++seed) {
    CAPTURE(seed);
    const auto ranks = static_cast<rank_t>(1 + seed % 7);
    const auto batches = random_batches(seed, ranks);
    const auto buffers = serialize_all(batches);
    const auto table = orch::table_from_metadata(spans_of(buffers));
    check_equal(table, direct_table(batches));
    CHECK_NOTHROW(table.validate(ranks));
    // Global example index = Σ examples of lower ranks + local index.
    index_t first = 0;
    for (std::size_t r = 0; r < batches.size(); ++r) {
      for (std::size_t e = 0; e < batches[r].size(); ++e) {
        const index_t g = first + static_cast<index_t>(e);
        CHECK(table.owner(g) == static_cast<rank_t>(r));
        CHECK(table.local_index(g) == static_cast<index_t>(e));
        CHECK(table.text_tokens(g) == batches[r][e].text);
        REQUIRE(table.media_end(g) - table.media_begin(g) ==
                static_cast<index_t>(batches[r][e].media.size()));
        for (std::size_t k = 0; k < batches[r][e].media.size(); ++k) {
          const index_t m = table.media_begin(g) + static_cast<index_t>(k);
          CHECK(table.field_names()[static_cast<std::size_t>(table.media_field(m))] ==
                batches[r][e].media[k].field);
          CHECK(table.media_length(m) == batches[r][e].media[k].length);
          CHECK(table.media_text_position(m) == batches[r][e].media[k].text_position);
        }
      }
      first += static_cast<index_t>(batches[r].size());
    }
  }
}

TEST_CASE("metadata: per-rank, concatenated and padded forms give identical tables") {
  for (std::uint64_t seed = 100; seed < 130; ++seed) {
    CAPTURE(seed);
    const auto ranks = static_cast<rank_t>(1 + seed % 5);
    const auto buffers = serialize_all(random_batches(seed, ranks));
    const auto a = orch::table_from_metadata(spans_of(buffers));
    std::vector<std::int64_t> counts;
    const auto flat = concatenate(buffers, &counts);
    const auto b = orch::table_from_metadata(flat, counts);
    const auto c = orch::table_from_metadata_padded(pad(buffers, 0), ranks);
    const auto d = orch::table_from_metadata_padded(pad(buffers, -7), ranks);
    check_equal(a, b);
    check_equal(a, c);
    check_equal(a, d);
    check_equal(a, orch::table_from_metadata(spans_of(buffers))); // decoding twice
  }
}

TEST_CASE("metadata: append_metadata continues a table's example indices") {
  const auto batches = random_batches(7, 3);
  const auto buffers = serialize_all(batches);
  orch::item_table t;
  (void)t.add_example(0, 0, 11);
  const index_t before = t.examples();
  orch::append_metadata(t, spans_of(buffers));
  const auto fresh = orch::table_from_metadata(spans_of(buffers));
  REQUIRE(t.examples() == before + fresh.examples());
  for (index_t e = 0; e < fresh.examples(); ++e) {
    CHECK(t.owner(before + e) == fresh.owner(e));
    CHECK(t.local_index(before + e) == fresh.local_index(e));
    CHECK(t.text_tokens(before + e) == fresh.text_tokens(e));
  }
}

TEST_CASE("metadata: serialize is deterministic and writes the documented header") {
  const auto batches = random_batches(3, 2);
  const auto once = serialize_all(batches);
  CHECK(once == serialize_all(batches));
  for (std::size_t r = 0; r < once.size(); ++r) {
    const auto& b = once[r];
    REQUIRE(b.size() >= 8);
    CHECK(b[0] == orch::metadata_magic);
    CHECK(b[1] == orch::metadata_version);
    CHECK(b[2] == static_cast<std::int64_t>(b.size()));
    CHECK(b[3] == static_cast<std::int64_t>(r));
    CHECK(b[4] == static_cast<std::int64_t>(batches[r].size()));
  }
  // An empty batch is a header and a checksum: no field names, no columns.
  const auto empty = orch::local_batch{}.serialize(5);
  CHECK(empty.size() == 8);
  CHECK(empty[4] == 0);
  CHECK(empty[5] == 0);
  CHECK(empty[6] == 0);
  // Names pack little-endian into words: "ab" is 'a' + 256·'b'.
  orch::local_batch one;
  const std::vector<orch::media_spec> media{{"ab", 3, 0}};
  (void)one.add(4, media);
  const auto w = one.serialize(0);
  REQUIRE(w.size() == 7 + 2 + 2 + 3 + 1);
  CHECK(w[7] == 2);
  CHECK(w[8] == 'a' + 256 * 'b');
  CHECK(error_of([] { (void)orch::local_batch{}.serialize(-1); }) != "");
}

TEST_CASE("metadata: local_batch::add rejects what item_table rejects, naming the local index") {
  orch::local_batch b;
  (void)b.add(10);
  const std::vector<orch::media_spec> negative{{"image", -1, 0}};
  const std::vector<orch::media_spec> backwards{{"image", 1, 5}, {"image", 1, 4}};
  const std::vector<orch::media_spec> past_text{{"image", 1, 11}};
  const std::vector<orch::media_spec> unnamed{{"", 1, 0}};
  const std::vector<orch::media_spec> text{{"text", 1, 0}};
  CHECK(has(error_of([&] { (void)b.add(-3); }), "local example 1 has negative text length -3"));
  CHECK(has(error_of([&] { (void)b.add(10, negative); }), "local example 1 media 0"));
  CHECK(has(error_of([&] { (void)b.add(10, backwards); }), "media 1 has text position 4"));
  CHECK(has(error_of([&] { (void)b.add(10, past_text); }), "text position 11 outside [0, 10]"));
  CHECK(has(error_of([&] { (void)b.add(10, unnamed); }), "not a media field name"));
  CHECK(has(error_of([&] { (void)b.add(10, text); }), "field 'text'"));
  // Nothing was added by the failed calls.
  CHECK(b.examples() == 1);
  CHECK(b.media_items() == 0);
  CHECK(b.field_names().empty());
}

TEST_CASE("metadata: malformed buffers are errors naming the rank") {
  const auto buffers = serialize_all(random_batches(11, 3));
  const auto decode = [](std::vector<words> b) {
    return error_of([&] { (void)orch::table_from_metadata(spans_of(b)); });
  };
  CHECK(has(error_of([] { (void)orch::table_from_metadata({}); }), "need 1 to 2^31-1 ranks"));
  {
    auto b = buffers;
    b[1][0] = 12345;
    CHECK(has(decode(b), "buffer of rank 1 starts with 12345, not the metadata magic"));
  }
  {
    auto b = buffers;
    b[2][1] = 9;
    CHECK(has(decode(b), "rank 2 has format version 9"));
  }
  {
    auto b = buffers;
    std::swap(b[0], b[1]);
    CHECK(has(decode(b), "buffer 0 claims rank 1"));
  }
  {
    auto b = buffers;
    b[1].back() ^= 1;
    CHECK(has(decode(b), "rank 1 fails its checksum"));
  }
  {
    auto b = buffers;
    b[2].push_back(0);
    CHECK(has(decode(b), "rank 2 says it has"));
    CHECK(has(decode(b), "(wrong length)"));
  }
  {
    auto b = buffers;
    b[0].clear();
    CHECK(has(decode(b), "buffer of rank 0 is empty"));
  }
  {
    auto b = buffers;
    b[1][4] = -1; // examples
    reseal(b[1]);
    CHECK(has(decode(b), "rank 1 has negative counts"));
  }
  {
    // A text position above the text length, written past local_batch's own check.
    orch::local_batch one;
    const std::vector<orch::media_spec> media{{"image", 3, 2}};
    (void)one.add(4, media);
    auto w = one.serialize(0);
    w[w.size() - 2] = 5; // the position column is last before the checksum
    reseal(w);
    CHECK(has(decode({w}), "rank 0 local example 0 media 0 has text position 5 outside [0, 4]"));
    w[w.size() - 2] = 2;
    w[w.size() - 3] = -8; // length
    reseal(w);
    CHECK(has(decode({w}), "rank 0 local example 0 media 0 has negative length -8"));
    w[w.size() - 3] = 3;
    w[w.size() - 4] = 1; // field id, the buffer has one field
    reseal(w);
    CHECK(has(decode({w}), "has field 1 outside the buffer's [0, 1)"));
    w[w.size() - 4] = 0;
    reseal(w);
    CHECK(decode({w}).empty());
  }
  // Counts that do not match the concatenated words.
  std::vector<std::int64_t> counts;
  const auto flat = concatenate(buffers, &counts);
  auto more = counts;
  more[2] += 1;
  CHECK(has(error_of([&] { (void)orch::table_from_metadata(flat, more); }), "rank 2 has a count"));
  auto less = counts;
  less[2] -= 1;
  CHECK(has(error_of([&] { (void)orch::table_from_metadata(flat, less); }), "counts add up to"));
  auto negative = counts;
  negative[0] = -1;
  CHECK(has(error_of([&] { (void)orch::table_from_metadata(flat, negative); }),
            "rank 0 has a count of -1"));
  auto padded = pad(buffers, 0);
  padded.pop_back();
  CHECK(has(error_of([&] { (void)orch::table_from_metadata_padded(padded, 3); }),
            "do not split into 3 equal slots"));
  CHECK(has(error_of([&] { (void)orch::table_from_metadata_padded(padded, 0); }),
            "must be positive"));
}

TEST_CASE("metadata: a malformed buffer leaves the caller's table unchanged") {
  auto buffers = serialize_all(random_batches(21, 4));
  buffers[3][1] = 2; // the last rank's version: the first three are fine
  orch::item_table t;
  (void)t.add_example(0, 0, 5);
  CHECK(error_of([&] { orch::append_metadata(t, spans_of(buffers)); }) != "");
  CHECK(t.examples() == 1);
  CHECK(t.media_items() == 0);
}

TEST_CASE("metadata: every truncation of a valid multi-rank buffer throws") {
  const auto batches = random_batches(5, 4);
  const auto buffers = serialize_all(batches);
  std::size_t tried = 0;
  // Each rank's buffer cut at every length, the other ranks intact.
  for (std::size_t r = 0; r < buffers.size(); ++r) {
    for (std::size_t cut = 0; cut < buffers[r].size(); ++cut) {
      CAPTURE(r);
      CAPTURE(cut);
      auto b = buffers;
      b[r].resize(cut);
      CHECK_THROWS_AS((void)orch::table_from_metadata(spans_of(b)), orch::invalid_argument);
      ++tried;
    }
  }
  // The concatenation cut at every length, with counts that describe the words received: ranks
  // wholly inside keep theirs, the cut one gets the rest, later ones nothing.
  std::vector<std::int64_t> counts;
  const auto flat = concatenate(buffers, &counts);
  for (std::size_t cut = 0; cut < flat.size(); ++cut) {
    CAPTURE(cut);
    std::vector<std::int64_t> got;
    std::int64_t left = static_cast<std::int64_t>(cut);
    for (const auto c : counts) {
      got.push_back(std::min(c, left));
      left -= got.back();
    }
    const auto prefix = std::span<const std::int64_t>(flat).first(cut);
    CHECK_THROWS_AS((void)orch::table_from_metadata(prefix, got), orch::invalid_argument);
    ++tried;
  }
  CHECK(tried == 2 * flat.size());
  CHECK_NOTHROW((void)orch::table_from_metadata(flat, counts));
  // The padded form cut at every length: the slots no longer split evenly, or each is shorter
  // than its stride so slot 1 onwards starts inside slot 0.
  const auto padded = pad(buffers, 0);
  for (std::size_t cut = 0; cut < padded.size(); ++cut) {
    CAPTURE(cut);
    CHECK_THROWS_AS(
        (void)orch::table_from_metadata_padded(std::span<const std::int64_t>(padded).first(cut), 4),
        orch::invalid_argument);
  }
  CHECK_NOTHROW((void)orch::table_from_metadata_padded(padded, 4));
}

TEST_CASE("metadata: counts of 2^62 are rejected before anything is allocated") {
  // The first seed whose rank 1 has examples with media (and so field names).
  std::uint64_t seed = 1;
  while (serialize_all(random_batches(seed, 2))[1][5] == 0) {
    ++seed;
  }
  CAPTURE(seed);
  const auto buffers = serialize_all(random_batches(seed, 2));
  REQUIRE(buffers[1][6] > 0);
  constexpr std::int64_t huge = std::int64_t{1} << 62;
  const auto start = std::chrono::steady_clock::now();
  // Word index of: total words, examples, media, fields, the first name's length.
  for (const std::size_t at :
       {std::size_t{2}, std::size_t{4}, std::size_t{5}, std::size_t{6}, std::size_t{7}}) {
    for (const std::int64_t value : {huge, huge + 1, std::int64_t{INT64_MAX}}) {
      CAPTURE(at);
      CAPTURE(value);
      auto b = buffers;
      b[1][at] = value;
      reseal(b[1]);
      const auto message = error_of([&] { (void)orch::table_from_metadata(spans_of(b)); });
      CHECK(has(message, "rank 1"));
    }
  }
  // A per-example media count of 2^62 (the media-count column follows the text column).
  auto b = buffers;
  const auto examples = static_cast<std::size_t>(b[1][4]);
  REQUIRE(examples > 0);
  const std::size_t media_counts =
      b[1].size() - 1 - 3 * static_cast<std::size_t>(b[1][5]) - examples;
  b[1][media_counts] = huge;
  reseal(b[1]);
  CHECK(has(error_of([&] { (void)orch::table_from_metadata(spans_of(b)); }),
            "rank 1 local example 0 claims 4611686018427387904 media items"));
  // Concatenated counts of 2^62.
  std::vector<std::int64_t> counts;
  const auto flat = concatenate(buffers, &counts);
  counts[0] = huge;
  CHECK(has(error_of([&] { (void)orch::table_from_metadata(flat, counts); }),
            "rank 0 has a count of 4611686018427387904"));
  const auto seconds =
      std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  CHECK(seconds < 5.0); // a 2^62-word allocation would abort or take far longer
}

TEST_CASE("metadata: random word corruption decodes to a valid table or throws") {
  const rank_t ranks = 4;
  const auto buffers = serialize_all(random_batches(77, ranks));
  std::mt19937_64 rng(20260101);
  int decoded = 0;
  int rejected = 0;
  for (int trial = 0; trial < 4000; ++trial) {
    CAPTURE(trial);
    auto b = buffers;
    const auto r = static_cast<std::size_t>(orch::test::uniform_int(rng, 0, ranks - 1));
    const auto at = static_cast<std::size_t>(
        orch::test::uniform_int(rng, 0, static_cast<std::int64_t>(b[r].size()) - 1));
    const std::int64_t old = b[r][at];
    switch (orch::test::uniform_int(rng, 0, 4)) {
    case 0:
      b[r][at] = orch::test::uniform_int(rng, -3, 40);
      break;
    case 1:
      b[r][at] = old + orch::test::uniform_int(rng, -2, 2);
      break;
    case 2:
      b[r][at] = static_cast<std::int64_t>(rng());
      break;
    case 3:
      b[r][at] = std::int64_t{1} << orch::test::uniform_int(rng, 30, 62);
      break;
    default:
      b[r][at] = old ^ (std::int64_t{1} << orch::test::uniform_int(rng, 0, 62));
      break;
    }
    if (b[r][at] == old) {
      continue;
    }
    const bool sealed = orch::test::uniform_int(rng, 0, 3) != 0 && at + 1 != b[r].size();
    if (sealed) {
      reseal(b[r]);
    }
    try {
      const auto t = orch::table_from_metadata(spans_of(b));
      CHECK(sealed); // one changed word always breaks the checksum
      CHECK_NOTHROW(t.validate(ranks));
      ++decoded;
    } catch (const orch::error&) {
      ++rejected;
    }
  }
  // Both outcomes happen, so the test exercises the checks and the decoding.
  CHECK(decoded > 100);
  CHECK(rejected > 100);
}
