// SPDX-License-Identifier: Apache-2.0
// item_table::from_columns (the one-call table the Python bindings build from numpy arrays)
// and the golden plan hash that python/tests/test_bindings.py asserts for the same step.
#include <orch/orchestrate/item_table.hpp>
#include <orch/orchestrate/model.hpp>
#include <orch/orchestrate/orchestrate.hpp>
#include <orch/topology.hpp>

#include <support/generators.hpp>

#include <doctest/doctest.h>

#include <algorithm>
#include <cstdint>
#include <random>
#include <string>
#include <vector>

namespace {

/// Columns and the tables they must equal, kept together so the spans stay valid.
struct columns_case {
  std::vector<orch::rank_t> owner;
  std::vector<orch::index_t> local;
  std::vector<orch::length_t> text;
  std::vector<orch::index_t> media_example;
  std::vector<std::int32_t> media_field;
  std::vector<orch::length_t> media_length;
  std::vector<orch::length_t> media_position;

  [[nodiscard]] orch::item_columns columns() const {
    return {owner, local, text, media_example, media_field, media_length, media_position};
  }
};

bool same_table(const orch::item_table& a, const orch::item_table& b) {
  const auto eq = [](auto x, auto y) { return std::equal(x.begin(), x.end(), y.begin(), y.end()); };
  return a.field_names() == b.field_names() && eq(a.owners(), b.owners()) &&
         eq(a.local_indices(), b.local_indices()) && eq(a.text_lengths(), b.text_lengths()) &&
         eq(a.media_offsets(), b.media_offsets()) && eq(a.media_fields(), b.media_fields()) &&
         eq(a.media_lengths(), b.media_lengths()) &&
         eq(a.media_text_positions(), b.media_text_positions()) &&
         eq(a.media_examples(), b.media_examples());
}

bool message_has(const orch::error& e, const std::string& part) {
  return std::string(e.what()).find(part) != std::string::npos;
}

/// The model of examples/orchestrate_step.cpp.
orch::model_description golden_model() {
  orch::model_description m;
  m.encoders.push_back({"vision", {"image"}, {1300, 2, 0}, 4, 0, 0, 14 * 14 * 3 * 2, 4096 * 2});
  m.encoders.push_back({"audio", {"audio"}, {1300, 1, 0}, 2, 0, 0, 128 * 2, 4096 * 2});
  m.llm.cost = {14000, 1, 0};
  m.llm.text_bytes_per_token = 8;
  return m;
}

/// The 32 examples of examples/orchestrate_step.cpp (owner, text, image patches, audio frames;
/// audio after the text), as python/tests/test_bindings.py builds them too.
orch::item_table golden_table() {
  struct row {
    orch::rank_t owner;
    orch::length_t text, image, audio;
  };
  const std::vector<row> rows{
      {0, 310, 0, 0},     {0, 95, 1296, 0}, {0, 420, 0, 0},     {0, 60, 0, 480},
      {1, 120, 3600, 0},  {1, 80, 2304, 0}, {1, 64, 4096, 0},   {1, 150, 1024, 0},
      {2, 900, 0, 3000},  {2, 40, 0, 2400}, {2, 1600, 0, 0},    {2, 75, 0, 1800},
      {3, 200, 0, 0},     {3, 180, 0, 0},   {3, 260, 576, 0},   {3, 90, 0, 0},
      {4, 350, 0, 0},     {4, 45, 900, 0},  {4, 130, 0, 0},     {4, 520, 0, 0},
      {5, 70, 1600, 0},   {5, 240, 0, 0},   {5, 110, 0, 600},   {5, 300, 0, 0},
      {6, 2400, 2500, 0}, {6, 1200, 0, 0},  {6, 88, 3136, 900}, {6, 700, 1764, 0},
      {7, 150, 0, 0},     {7, 66, 784, 0},  {7, 210, 0, 0},     {7, 330, 0, 350},
  };
  orch::item_table t;
  std::vector<orch::index_t> next(8, 0);
  for (const auto& r : rows) {
    std::vector<orch::media_spec> media;
    if (r.image > 0) {
      media.push_back({"image", r.image, 0});
    }
    if (r.audio > 0) {
      media.push_back({"audio", r.audio, r.text});
    }
    static_cast<void>(
        t.add_example(r.owner, next[static_cast<std::size_t>(r.owner)]++, r.text, media));
  }
  return t;
}

} // namespace

TEST_CASE("from_columns equals add_example for every example (open and model tables)") {
  const std::vector<std::string> names{"audio", "image", "video"};
  for (std::uint64_t seed = 1; seed <= 20; ++seed) {
    CAPTURE(seed);
    std::mt19937_64 rng(seed);
    columns_case c;
    orch::item_table by_add;
    orch::item_table by_add_model(golden_model());
    const auto examples = orch::test::uniform_int(rng, 0, 40);
    for (orch::index_t e = 0; e < examples; ++e) {
      const auto owner = static_cast<orch::rank_t>(orch::test::uniform_int(rng, 0, 3));
      const auto text = orch::test::uniform_int(rng, 0, 500);
      c.owner.push_back(owner);
      c.local.push_back(e);
      c.text.push_back(text);
      std::vector<orch::media_spec> media;
      orch::length_t position = 0;
      for (auto k = orch::test::uniform_int(rng, 0, 3); k > 0; --k) {
        // "video" only in the open table: the model has no video field.
        const auto f = static_cast<std::int32_t>(orch::test::uniform_int(rng, 0, 1));
        position = orch::test::uniform_int(rng, position, text);
        const auto length = orch::test::uniform_int(rng, 0, 5000);
        c.media_example.push_back(e);
        c.media_field.push_back(f);
        c.media_length.push_back(length);
        c.media_position.push_back(position);
        media.push_back({names[static_cast<std::size_t>(f)], length, position});
      }
      static_cast<void>(by_add.add_example(owner, e, text, media));
      static_cast<void>(by_add_model.add_example(owner, e, text, media));
    }
    CHECK(same_table(orch::item_table::from_columns(c.columns(), names), by_add));
    CHECK(same_table(orch::item_table::from_columns(c.columns(), names, golden_model()),
                     by_add_model));
  }
}

TEST_CASE("from_columns names the column or item it rejects") {
  const std::vector<std::string> names{"image", "audio"};
  columns_case c{{0, 0}, {0, 1}, {10, 20}, {0, 1}, {0, 1}, {100, 200}, {0, 20}};
  CHECK_NOTHROW(static_cast<void>(orch::item_table::from_columns(c.columns(), names)));

  auto short_local = c;
  short_local.local.pop_back();
  CHECK_THROWS_WITH_AS(
      static_cast<void>(orch::item_table::from_columns(short_local.columns(), names)),
      "item_table::from_columns: 2 owners but 1 local indices and 2 text lengths",
      orch::invalid_argument);
  auto short_media = c;
  short_media.media_length.pop_back();
  CHECK_THROWS_AS(static_cast<void>(orch::item_table::from_columns(short_media.columns(), names)),
                  orch::invalid_argument);
  auto unordered = c;
  unordered.media_example = {1, 0};
  try {
    static_cast<void>(orch::item_table::from_columns(unordered.columns(), names));
    FAIL("no throw");
  } catch (const orch::invalid_argument& e) {
    CHECK(message_has(e, "media item 1 has example 0 after media of example 1"));
  }
  auto outside = c;
  outside.media_example = {0, 2};
  CHECK_THROWS_WITH_AS(static_cast<void>(orch::item_table::from_columns(outside.columns(), names)),
                       "item_table::from_columns: media item 1 has example 2, outside [0, 2)",
                       orch::invalid_argument);
  auto bad_field = c;
  bad_field.media_field = {0, 2};
  CHECK_THROWS_WITH_AS(
      static_cast<void>(orch::item_table::from_columns(bad_field.columns(), names)),
      "item_table::from_columns: media item 1 has field code 2, outside [0, 2) of the field names",
      orch::invalid_argument);
  // add_example's own checks apply, naming the example.
  auto negative = c;
  negative.text[1] = -5;
  try {
    static_cast<void>(orch::item_table::from_columns(negative.columns(), names));
    FAIL("no throw");
  } catch (const orch::invalid_argument& e) {
    CHECK(message_has(e, "example 1 (rank 0, local index 1) has negative text length -5"));
  }
  // A model table rejects a field the model does not consume.
  const std::vector<std::string> with_video{"image", "video"};
  CHECK_THROWS_AS(
      static_cast<void>(orch::item_table::from_columns(c.columns(), with_video, golden_model())),
      orch::invalid_argument);
}

// The golden plan hash of examples/orchestrate_step.cpp's step under strategy orch on 8 ranks
// in 2 nodes. python/tests/test_bindings.py asserts the same number for the same step built
// from Python (add_example and ItemTable.from_arrays), which ties the bindings to the C++.
TEST_CASE("golden plan hash of the orchestrate_step example (shared with the Python tests)") {
  const auto table = golden_table();
  const auto topo = orch::topology::uniform(8, 4);
  const auto plan = orch::orchestrate(table, golden_model(), topo, {});
  CHECK(plan.hash == 2521555356662069866ULL);
  orch::orchestrate_options none;
  none.strategy = orch::strategy::none;
  CHECK(orch::orchestrate(table, golden_model(), topo, none).hash == 14274743033688558961ULL);
}
