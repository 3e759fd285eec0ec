// SPDX-License-Identifier: Apache-2.0
// build_assembly against a plain reference that checks every sum, on token counts small enough
// for its unchecked walk, large enough for its checked one, and counts whose sums overflow
// (the same error, and feature offsets reported before sequence offsets).
#include <orch/config.hpp>
#include <orch/detail/primitives/checked.hpp>
#include <orch/exchange/layout.hpp>
#include <orch/orchestrate/assembly.hpp>
#include <orch/orchestrate/build_assembly.hpp>
#include <orch/orchestrate/item_table.hpp>

#include <support/generators.hpp>

#include <doctest/doctest.h>

#include <algorithm>
#include <bit>
#include <cstddef>
#include <cstdint>
#include <random>
#include <vector>

namespace {

using orch::index_t;
using orch::length_t;
using orch::rank_t;

// What build_assembly reads: the table, the LLM layout, per encoder its media (table order)
// and their layout on the LLM rank of their example, ordered by (slot of the example, media).
struct assembly_input {
  orch::item_table table;
  orch::layout llm;
  std::vector<orch::layout> feature_layouts;
  std::vector<std::vector<index_t>> encoder_media;
  std::vector<std::int32_t> media_encoder;
  std::vector<length_t> output_tokens;

  [[nodiscard]] orch::assembly_map build() const {
    return orch::build_assembly(table, llm, feature_layouts, encoder_media, media_encoder,
                                output_tokens);
  }
};

// `examples` examples on `ranks` ranks (LLM rank at random, or example x on rank x mod ranks
// with `spread`), text lengths in [0, text_max], 0..3 media ("image" → encoder 0, "audio" →
// encoder 1) with outputs in [output_min, output_max].
assembly_input random_input(std::uint64_t seed, rank_t ranks, index_t examples, length_t text_max,
                            length_t output_min, length_t output_max, bool spread = false) {
  std::mt19937_64 rng(seed);
  assembly_input in;
  std::vector<rank_t> llm_rank;
  std::vector<index_t> local(static_cast<std::size_t>(ranks), 0);
  for (index_t x = 0; x < examples; ++x) {
    const auto owner = static_cast<rank_t>(orch::test::uniform_int(rng, 0, ranks - 1));
    const length_t text = orch::test::uniform_int(rng, 0, text_max);
    const auto media = orch::test::uniform_int(rng, 0, 3);
    std::vector<length_t> positions;
    for (index_t k = 0; k < media; ++k) {
      positions.push_back(orch::test::uniform_int(rng, 0, text));
    }
    std::sort(positions.begin(), positions.end());
    std::vector<orch::media_spec> specs;
    for (const length_t p : positions) {
      const bool audio = orch::test::uniform_int(rng, 0, 2) == 0;
      specs.push_back({audio ? "audio" : "image", 1, p});
      in.media_encoder.push_back(audio ? 1 : 0);
      in.output_tokens.push_back(orch::test::uniform_int(rng, output_min, output_max));
    }
    in.table.add_example(owner, local[static_cast<std::size_t>(owner)]++, text, specs);
    const auto at = orch::test::uniform_int(rng, 0, ranks - 1);
    llm_rank.push_back(static_cast<rank_t>(spread ? x % ranks : at));
  }
  in.llm = orch::layout::from_assignment(llm_rank, ranks);
  in.encoder_media.resize(2);
  std::vector<std::vector<rank_t>> rank_of(2);
  std::vector<std::vector<index_t>> slot_key(2);
  const auto media_examples = in.table.media_examples();
  for (std::size_t m = 0; m < in.media_encoder.size(); ++m) {
    const auto e = static_cast<std::size_t>(in.media_encoder[m]);
    const auto x = static_cast<std::size_t>(media_examples[m]);
    in.encoder_media[e].push_back(static_cast<index_t>(m));
    rank_of[e].push_back(llm_rank[x]);
    slot_key[e].push_back(in.llm.slot_of(static_cast<index_t>(x)));
  }
  for (std::size_t e = 0; e < 2; ++e) {
    in.feature_layouts.push_back(
        orch::layout::from_keys(rank_of[e], ranks, slot_key[e], in.encoder_media[e]));
  }
  return in;
}

// The assembly map as the docs define it, every sum checked, in the order build_assembly
// reports overflows: feature offsets (per encoder, rank, slot), then the sequences (per rank,
// slot, media).
orch::assembly_map reference(const assembly_input& in) {
  using orch::detail::checked_add;
  std::vector<index_t> feature_token(in.output_tokens.size(), 0);
  for (std::size_t e = 0; e < in.feature_layouts.size(); ++e) {
    const auto& fl = in.feature_layouts[e];
    for (rank_t r = 0; r < fl.ranks(); ++r) {
      index_t cursor = 0;
      for (const index_t i : fl.items_on(r)) {
        const auto m = static_cast<std::size_t>(in.encoder_media[e][static_cast<std::size_t>(i)]);
        feature_token[m] = cursor;
        cursor = checked_add(cursor, in.output_tokens[m], "build_assembly: feature tokens");
      }
    }
  }
  const auto& t = in.table;
  orch::assembly_map a;
  a.rank_begin.push_back(0);
  a.sequence_offset.assign(static_cast<std::size_t>(t.examples()), 0);
  a.sequence_length.assign(static_cast<std::size_t>(t.examples()), 0);
  for (rank_t r = 0; r < in.llm.ranks(); ++r) {
    index_t text_cursor = 0;
    index_t target = 0;
    const auto emit = [&](std::int32_t source, index_t from, length_t tokens, index_t x,
                          index_t media) {
      if (tokens > 0) {
        a.segments.push_back({source, from, target, tokens, x, media});
        target = checked_add(target, tokens, "build_assembly: sequence tokens");
      }
    };
    for (const index_t x : in.llm.items_on(r)) {
      const auto xu = static_cast<std::size_t>(x);
      const index_t begin = target;
      length_t consumed = 0;
      for (auto m = t.media_offsets()[xu]; m < t.media_offsets()[xu + 1]; ++m) {
        const auto mu = static_cast<std::size_t>(m);
        const length_t position = t.media_text_positions()[mu];
        emit(orch::text_source, text_cursor + consumed, position - consumed, x, -1);
        consumed = position;
        emit(in.media_encoder[mu], feature_token[mu], in.output_tokens[mu], x, m);
      }
      emit(orch::text_source, text_cursor + consumed, t.text_lengths()[xu] - consumed, x, -1);
      text_cursor = checked_add(text_cursor, t.text_lengths()[xu], "build_assembly: text tokens");
      a.sequence_offset[xu] = begin;
      a.sequence_length[xu] = target - begin;
    }
    a.sequence_tokens.push_back(target);
    a.rank_begin.push_back(static_cast<index_t>(a.segments.size()));
  }
  return a;
}

void check_same(const orch::assembly_map& got, const orch::assembly_map& want) {
  CHECK(got.rank_begin == want.rank_begin);
  CHECK(got.sequence_offset == want.sequence_offset);
  CHECK(got.sequence_length == want.sequence_length);
  CHECK(got.sequence_tokens == want.sequence_tokens);
  REQUIRE(got.segments.size() == want.segments.size());
  for (std::size_t s = 0; s < got.segments.size(); ++s) {
    CAPTURE(s);
    const auto& g = got.segments[s];
    const auto& w = want.segments[s];
    CHECK(g.source == w.source);
    CHECK(g.source_token == w.source_token);
    CHECK(g.target_token == w.target_token);
    CHECK(g.tokens == w.tokens);
    CHECK(g.example == w.example);
    CHECK(g.media == w.media);
  }
}

} // namespace

TEST_CASE("build_assembly: small token counts (the unchecked walk) match the reference") {
  for (std::uint64_t seed = 1; seed <= 40; ++seed) {
    CAPTURE(seed);
    const auto ranks = static_cast<rank_t>(1 + seed % 7);
    // Zero outputs give no segment; positions at 0 or at the end give no empty text run.
    const auto in =
        random_input(seed, ranks, static_cast<index_t>(seed % 5 == 0 ? 0 : 60), 300, 0, 200);
    check_same(in.build(), reference(in));
  }
}

TEST_CASE("build_assembly: counts near 2^60 (the checked walk) match the reference") {
  // One example per rank, text and outputs up to 2^60: no sum reaches 2^63 (at most 2^62 on
  // a rank), but the bound n · 2^b ≤ 2^63 (n = examples + media) fails.
  for (std::uint64_t seed = 1; seed <= 40; ++seed) {
    CAPTURE(seed);
    const auto in = random_input(seed, 8, 8, length_t{1} << 60, 0, length_t{1} << 60, true);
    std::uint64_t bits = 0;
    for (const length_t v : in.table.text_lengths()) {
      bits |= static_cast<std::uint64_t>(v);
    }
    for (const length_t v : in.output_tokens) {
      bits |= static_cast<std::uint64_t>(v);
    }
    const std::size_t n = in.table.text_lengths().size() + in.output_tokens.size();
    REQUIRE(std::bit_width(bits) + std::bit_width(n) > 63);
    check_same(in.build(), reference(in));
  }
}

TEST_CASE("build_assembly: negative output counts take the checked walk and give no segment") {
  for (std::uint64_t seed = 1; seed <= 20; ++seed) {
    CAPTURE(seed);
    const auto in = random_input(seed, 3, 30, 100, -50, 50);
    check_same(in.build(), reference(in));
  }
}

TEST_CASE("build_assembly: sums that leave int64 throw the checked walk's first error") {
  const length_t big = length_t{1} << 62;
  SUBCASE("two sequences on one rank") {
    assembly_input in;
    in.table.add_example(0, 0, big);
    in.table.add_example(0, 1, big);
    in.llm = orch::layout::from_assignment(std::vector<rank_t>{0, 0}, 1);
    in.encoder_media.resize(1);
    in.feature_layouts.emplace_back();
    CHECK_THROWS_WITH_AS(static_cast<void>(in.build()),
                         doctest::Contains("build_assembly: sequence tokens"), orch::overflow);
  }
  SUBCASE("one sequence of text and an output") {
    assembly_input in;
    const std::vector<orch::media_spec> media{{"image", 1, 1}};
    in.table.add_example(0, 0, big + big / 2, media);
    in.llm = orch::layout::from_assignment(std::vector<rank_t>{0}, 1);
    in.encoder_media = {{0}};
    in.media_encoder = {0};
    in.output_tokens = {big};
    in.feature_layouts.push_back(orch::layout::from_assignment(std::vector<rank_t>{0}, 1));
    CHECK_THROWS_WITH_AS(static_cast<void>(in.build()),
                         doctest::Contains("build_assembly: sequence tokens"), orch::overflow);
  }
  SUBCASE("feature offsets are reported before sequences") {
    assembly_input in;
    const std::vector<orch::media_spec> media{{"audio", 1, 0}, {"audio", 1, 0}};
    in.table.add_example(0, 0, big, media);
    in.table.add_example(0, 1, big);
    in.llm = orch::layout::from_assignment(std::vector<rank_t>{0, 0}, 1);
    in.encoder_media = {{0, 1}};
    in.media_encoder = {0, 0};
    in.output_tokens = {big, big};
    in.feature_layouts.push_back(orch::layout::from_assignment(std::vector<rank_t>{0, 0}, 1));
    CHECK_THROWS_WITH_AS(static_cast<void>(in.build()),
                         doctest::Contains("build_assembly: feature tokens"), orch::overflow);
  }
  SUBCASE("the same sums on two ranks fit") {
    assembly_input in;
    in.table.add_example(0, 0, big);
    in.table.add_example(0, 1, big);
    in.llm = orch::layout::from_assignment(std::vector<rank_t>{0, 1}, 2);
    in.encoder_media.resize(1);
    in.feature_layouts.emplace_back();
    check_same(in.build(), reference(in));
  }
}
