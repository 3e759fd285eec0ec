// SPDX-License-Identifier: Apache-2.0
// The per-item quantities of a step (detail::resolve_inputs) against a reference that calls
// the model's checked functions item by item, the order in which bad input is reported, and
// the owner / media layouts against the public layout builders they stand for.
#include <orch/detail/orchestrate/step_inputs.hpp>
#include <orch/detail/orchestrate/step_layouts.hpp>
#include <orch/orchestrate/orchestrate.hpp>

#include <support/generators.hpp>

#include <doctest/doctest.h>

#include <algorithm>
#include <cstdint>
#include <limits>
#include <random>
#include <string>
#include <vector>

namespace {

using orch::bytes_t;
using orch::cost_t;
using orch::index_t;
using orch::length_t;
using orch::rank_t;

orch::model_description model_with(orch::attention_cost vision, orch::attention_cost audio,
                                   orch::attention_cost llm) {
  orch::model_description m;
  // name, fields, cost, divisor, extra, max output, input bytes/unit, feature bytes/token
  m.encoders.push_back({"vision", {"image", "video"}, vision, 4, 1, 0, 588, 7168});
  m.encoders.push_back({"audio", {"audio"}, audio, 2, 0, 0, 256, 7168});
  m.llm.cost = llm;
  m.llm.text_bytes_per_token = 8;
  return m;
}

// Examples with 0..3 media of random fields and lengths up to `longest` (some at the extreme).
orch::item_table random_table(std::uint64_t seed, rank_t ranks, length_t longest) {
  std::mt19937_64 rng(seed);
  orch::item_table t;
  const char* fields[] = {"image", "audio", "video"};
  std::vector<index_t> next(static_cast<std::size_t>(ranks), 0);
  const auto examples = orch::test::uniform_int(rng, 0, 40);
  for (index_t x = 0; x < examples; ++x) {
    const auto r = static_cast<rank_t>(orch::test::uniform_int(rng, 0, ranks - 1));
    const length_t text = orch::test::uniform_int(rng, 0, 300);
    std::vector<orch::media_spec> media;
    const auto count = orch::test::uniform_int(rng, 0, 3);
    length_t position = 0;
    for (index_t k = 0; k < count; ++k) {
      position = orch::test::uniform_int(rng, position, text);
      const length_t length = orch::test::uniform_int(rng, 0, 4) == 0
                                  ? longest - orch::test::uniform_int(rng, 0, 3)
                                  : orch::test::uniform_int(rng, 0, 5000);
      media.push_back({fields[orch::test::uniform_int(rng, 0, 2)], length, position});
    }
    t.add_example(r, next[static_cast<std::size_t>(r)]++, text, media);
  }
  return t;
}

// What resolve_inputs must compute, with the model's checked calls, item by item.
void check_against_reference(const orch::item_table& t, const orch::model_description& m) {
  const auto in = orch::detail::resolve_inputs(t, m);
  std::vector<index_t> count(m.encoders.size(), 0);
  for (index_t i = 0; i < t.media_items(); ++i) {
    const auto mi = static_cast<std::size_t>(i);
    const int e = m.encoder_of_field(t.field_names()[static_cast<std::size_t>(t.media_field(i))]);
    const auto eu = static_cast<std::size_t>(e);
    const auto& enc = m.encoders[eu];
    const auto at = static_cast<std::size_t>(count[eu]++);
    REQUIRE(in.media_encoder[mi] == e);
    REQUIRE(in.phase_index[mi] == static_cast<index_t>(at));
    const length_t out = enc.output_tokens(t.media_length(i));
    CHECK(in.output_tokens[mi] == out);
    CHECK(in.encoder_media[eu][at] == i);
    const auto& items = in.encoders[eu];
    CHECK(items.example[at] == t.media_example(i));
    CHECK(items.costs[at] == enc.cost(t.media_length(i)));
    CHECK(items.input_bytes[at] == t.media_length(i) * enc.input_bytes_per_unit);
    CHECK(items.feature_bytes[at] == out * enc.feature_bytes_per_token);
  }
  for (std::size_t e = 0; e < count.size(); ++e) {
    CHECK(in.encoders[e].costs.size() == static_cast<std::size_t>(count[e]));
  }
  for (index_t x = 0; x < t.examples(); ++x) {
    const auto xu = static_cast<std::size_t>(x);
    length_t l = t.text_tokens(x);
    bytes_t features = 0;
    for (index_t i = t.media_begin(x); i < t.media_end(x); ++i) {
      const auto mi = static_cast<std::size_t>(i);
      l += in.output_tokens[mi];
      features += in.encoders[static_cast<std::size_t>(in.media_encoder[mi])]
                      .feature_bytes[static_cast<std::size_t>(in.phase_index[mi])];
    }
    CHECK(in.sequence_length[xu] == l);
    CHECK(in.llm_costs[xu] == m.llm.cost(l));
    CHECK(in.text_bytes[xu] == t.text_tokens(x) * m.llm.text_bytes_per_token);
    CHECK(in.example_feature_bytes[xu] == features);
  }
}

std::string message_of(const orch::item_table& t, const orch::model_description& m,
                       int threads = 1) {
  try {
    (void)orch::detail::resolve_inputs(t, m, threads);
  } catch (const orch::error& e) {
    return e.what();
  }
  return "no error";
}

} // namespace

TEST_CASE("resolve_inputs: the model's checked values, in and beyond the 64-bit fast path") {
  // Coefficients from tiny to huge move the bound below which costs need no 128-bit product
  // (detail::cost_safe_length) across the lengths drawn; every value must match the model.
  // Lengths up to 5,000 with every cost; up to 2^31 + 9 with the first three (whose costs
  // there still fit: the fast path ends at 1,753,413,056 for {1, 1, 1}).
  const std::vector<orch::attention_cost> costs{{1, 1, 1},    {1, 0, 0},         {0, 0, 5},
                                                {1300, 2, 0}, {1LL << 40, 0, 7}, {3, 1LL << 20, 0}};
  for (std::uint64_t seed = 1; seed <= 60; ++seed) {
    const bool long_items = seed % 2 == 1;
    const std::size_t kinds = long_items ? 3 : costs.size();
    const auto& a = costs[seed % kinds];
    const auto& b = costs[(seed / 3) % kinds];
    const auto longest = long_items ? (length_t{1} << 31) + 9 : length_t{5000};
    CAPTURE(seed);
    // Long items make sequences past 2^31 tokens, beyond the LLM's fast path too.
    const auto model = model_with(
        a, b, long_items ? orch::attention_cost{2, 0, 1} : orch::attention_cost{15000, 1, 0});
    check_against_reference(random_table(seed, 4, longest), model);
  }
  // An LLM cost beyond 64-bit intermediates but within range: l = 2^32 (l² = 2^64).
  orch::item_table t;
  t.add_example(0, 0, length_t{1} << 32);
  const auto model = model_with({1, 0, 0}, {1, 0, 0}, {1, 0, 0});
  check_against_reference(t, model);
  CHECK(orch::detail::resolve_inputs(t, model).llm_costs[0] == length_t{1} << 32);
}

TEST_CASE("cost_safe_length: every length up to it evaluates without overflow") {
  const std::vector<orch::attention_cost> costs{{0, 0, 0},
                                                {1, 0, 0},
                                                {0, 1, 0},
                                                {7, 3, 11},
                                                {1LL << 61, 0, 0},
                                                {0, 1LL << 62, 0},
                                                {1, 1, orch::max_cost / 3}};
  for (const auto& c : costs) {
    const length_t safe = orch::detail::cost_safe_length(c);
    CAPTURE(c.linear);
    CAPTURE(c.quadratic);
    REQUIRE(safe >= 0);
    CHECK(safe <= length_t{1} << 31);
    // At the bound, the 128-bit value fits and each term is at most a third of max_cost.
    const orch::detail::int128 l = safe;
    CHECK(orch::detail::int128{c.quadratic} * l * l <= orch::max_cost / 3);
    CHECK(orch::detail::int128{c.linear} * l <= orch::max_cost / 3);
  }
  CHECK(orch::detail::cost_safe_length({-1, 0, 0}) == -1);
  CHECK(orch::detail::cost_safe_length({0, 0, orch::max_cost}) == -1);
  CHECK(orch::detail::cost_safe_length({0, 1, 0}) == 1753413056); // ⌊√⌊(2^63 - 1) / 3⌋⌋
}

TEST_CASE("resolve_inputs: errors come in the order of a media pass, then an example pass") {
  auto model = model_with({1, 0, 0}, {1, 0, 0}, {1, 0, 0});
  model.encoders[0].max_output_tokens = 10;
  const std::vector<orch::media_spec> over{{"image", 400, 0}};
  const std::vector<orch::media_spec> depth{{"depth", 1, 0}};
  const std::vector<orch::media_spec> fine{{"image", 4, 0}};
  const length_t huge = std::numeric_limits<length_t>::max() - 1;

  // An unconsumed field is reported before an earlier item over its limit.
  orch::item_table fields;
  fields.add_example(0, 0, 4, over);
  fields.add_example(0, 1, 4, depth);
  const auto m1 = message_of(fields, model);
  CHECK(m1.find("'depth'") != std::string::npos);
  CHECK(m1.find("example 1") != std::string::npos);

  // A later media item over its limit is reported before an earlier sequence overflow.
  orch::item_table sums;
  sums.add_example(0, 0, huge, fine);
  sums.add_example(0, 1, 4, over);
  const auto m2 = message_of(sums, model);
  CHECK(m2.find("limit of 10") != std::string::npos);
  CHECK(m2.find("example 1") != std::string::npos);

  // Without media errors, the first example out of range is named.
  orch::item_table examples;
  examples.add_example(0, 0, 4, fine);
  examples.add_example(0, 1, huge, fine);
  examples.add_example(0, 2, huge, fine);
  const auto m3 = message_of(examples, model);
  CHECK(m3.find("orchestrate: example 1 (rank 0, local index 1): sequence tokens") !=
        std::string::npos);
  CHECK_THROWS_AS((void)orch::detail::resolve_inputs(examples, model), orch::overflow);

  // The LLM cost out of range names its example and sequence length.
  auto square = model;
  square.llm.cost = {0, 1, 0};
  orch::item_table llm;
  llm.add_example(0, 0, 5);
  llm.add_example(0, 1, length_t{1} << 32);
  const auto m4 = message_of(llm, square);
  CHECK(m4.find("example 1 (rank 0, local index 1), LLM sequence of 4294967296 tokens") !=
        std::string::npos);

  // A media cost out of range names its example and encoder.
  auto steep = model;
  steep.encoders[1].cost = {0, 1, 0};
  orch::item_table audio;
  audio.add_example(0, 0, 5);
  const std::vector<orch::media_spec> long_audio{{"audio", length_t{1} << 32, 0}};
  audio.add_example(0, 1, 5, long_audio);
  const auto m5 = message_of(audio, steep);
  CHECK(m5.find("example 1 (rank 0, local index 1), encoder 'audio'") != std::string::npos);

  // Byte sizes out of range.
  auto heavy = model;
  heavy.encoders[1].input_bytes_per_unit = std::numeric_limits<bytes_t>::max() / 2;
  const std::vector<orch::media_spec> clip{{"audio", 5, 0}};
  orch::item_table bytes;
  bytes.add_example(0, 0, 5, clip);
  CHECK(message_of(bytes, heavy)
            .find("example 0 (rank 0, local index 0), encoder 'audio': input bytes") !=
        std::string::npos);
}

TEST_CASE("owner_layout and media_layouts_following match the public layout builders") {
  const auto model = model_with({1300, 2, 0}, {1300, 1, 0}, {15000, 1, 0});
  for (std::uint64_t seed = 1; seed <= 40; ++seed) {
    CAPTURE(seed);
    const rank_t ranks = static_cast<rank_t>(1 + seed % 5);
    const auto t = random_table(seed, ranks, 5000);
    const auto in = orch::detail::resolve_inputs(t, model);
    const auto owners = orch::detail::owner_layout(t, ranks);
    const auto owners_owned = t.owners();
    const auto local = t.local_indices();
    CHECK(owners == orch::layout::from_placements(
                        ranks, std::vector<rank_t>(owners_owned.begin(), owners_owned.end()),
                        std::vector<index_t>(local.begin(), local.end())));
    // Examples on random ranks, in item order there; their media follow them.
    std::mt19937_64 rng(seed);
    std::vector<rank_t> where(static_cast<std::size_t>(t.examples()));
    for (auto& r : where) {
      r = static_cast<rank_t>(orch::test::uniform_int(rng, 0, ranks - 1));
    }
    const auto examples = orch::layout::from_assignment(where, ranks);
    for (const auto* placed : {&owners, &examples}) {
      const auto media = orch::detail::media_layouts_following(t, in, *placed);
      REQUIRE(media.size() == model.encoders.size());
      for (std::size_t e = 0; e < media.size(); ++e) {
        // Reference: rank of the example, then (slot of the example, position in it).
        std::vector<rank_t> rank;
        std::vector<index_t> slot;
        std::vector<index_t> position;
        for (const index_t m : in.encoder_media[e]) {
          const index_t x = t.media_example(m);
          rank.push_back(placed->rank_of(x));
          slot.push_back(placed->slot_of(x));
          position.push_back(m - t.media_begin(x));
        }
        CHECK(media[e] == orch::layout::from_keys(rank, ranks, slot, position));
        const auto first = media[e].first_on();
        const auto order = media[e].order();
        for (rank_t r = 0; r < ranks; ++r) {
          const auto on = media[e].items_on(r);
          CHECK(std::vector<index_t>(on.begin(), on.end()) ==
                std::vector<index_t>(order.begin() + first[static_cast<std::size_t>(r)],
                                     order.begin() + first[static_cast<std::size_t>(r) + 1]));
        }
      }
    }
  }
}

TEST_CASE("resolve_inputs: ranges of examples on several threads give the same values and errors") {
  // 40,000 examples: enough for several ranges of the concurrent walk.
  const auto model = model_with({1300, 2, 0}, {1300, 1, 0}, {15000, 1, 0});
  std::mt19937_64 rng(91);
  orch::item_table t;
  const char* fields[] = {"image", "audio", "video"};
  constexpr rank_t ranks = 50;
  constexpr index_t per_rank = 800;
  for (rank_t r = 0; r < ranks; ++r) {
    for (index_t i = 0; i < per_rank; ++i) {
      std::vector<orch::media_spec> media;
      const length_t text = orch::test::uniform_int(rng, 0, 500);
      for (auto k = orch::test::uniform_int(rng, 0, 3); k > 0; --k) {
        media.push_back(
            {fields[orch::test::uniform_int(rng, 0, 2)], orch::test::uniform_int(rng, 0, 4000), 0});
      }
      t.add_example(r, i, text, media);
    }
  }
  const auto one = orch::detail::resolve_inputs(t, model, 1);
  for (const int threads : {2, 3, 8}) {
    CAPTURE(threads);
    const auto many = orch::detail::resolve_inputs(t, model, threads);
    CHECK(many.media_encoder == one.media_encoder);
    CHECK(many.output_tokens == one.output_tokens);
    CHECK(std::equal(many.phase_index.begin(), many.phase_index.end(), one.phase_index.begin(),
                     one.phase_index.end()));
    CHECK(many.encoder_media == one.encoder_media);
    for (std::size_t e = 0; e < one.encoders.size(); ++e) {
      CHECK(many.encoders[e].example == one.encoders[e].example);
      CHECK(many.encoders[e].costs == one.encoders[e].costs);
      CHECK(many.encoders[e].input_bytes == one.encoders[e].input_bytes);
      CHECK(many.encoders[e].feature_bytes == one.encoders[e].feature_bytes);
    }
    CHECK(many.sequence_length == one.sequence_length);
    CHECK(many.llm_costs == one.llm_costs);
    CHECK(std::equal(many.text_bytes.begin(), many.text_bytes.end(), one.text_bytes.begin(),
                     one.text_bytes.end()));
    CHECK(std::equal(many.example_feature_bytes.begin(), many.example_feature_bytes.end(),
                     one.example_feature_bytes.begin(), one.example_feature_bytes.end()));
  }

  // Errors: an example out of range early (first range) and a media item over its limit late
  // (last range): the media error wins, as in one walk; without it, the early example is named.
  auto limited = model;
  limited.encoders[1].max_output_tokens = 1000; // audio: lengths above 2,000
  const length_t huge = std::numeric_limits<length_t>::max() - 1;
  orch::item_table bad;
  for (index_t i = 0; i < 40000; ++i) {
    std::vector<orch::media_spec> media{{"image", 16, 0}};
    if (i == 39000) {
      media.push_back({"audio", 3000, 0});
    }
    bad.add_example(0, i, i == 1000 || i == 30000 ? huge : 10, media);
  }
  const auto media_error = message_of(bad, limited, 1);
  CHECK(media_error.find("example 39000") != std::string::npos);
  CHECK(media_error.find("limit of 1000") != std::string::npos);
  const auto sums_error = message_of(bad, model, 1);
  CAPTURE(sums_error);
  CHECK(sums_error.find("example 1000") != std::string::npos);
  for (const int threads : {2, 4}) {
    CAPTURE(threads);
    CHECK(message_of(bad, limited, threads) == media_error);
    CHECK(message_of(bad, model, threads) == sums_error);
  }
}
