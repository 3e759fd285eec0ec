// SPDX-License-Identifier: Apache-2.0
// Large inputs (docs/limits.md): each is planned, with the plan's invariants checked, or
// rejected up front with a clear error. Times and peak memory are measured by the commands in
// docs/limits.md, not asserted here (a loaded CI machine would make a time bound flaky).
#include <orch/orchestrate/orchestrate.hpp>

#include <support/generators.hpp>

#include <doctest/doctest.h>

#include <chrono>
#include <cstdint>
#include <numeric>
#include <string>
#include <vector>

namespace {

using orch::bytes_t;
using orch::index_t;
using orch::length_t;
using orch::rank_t;

orch::model_description vision_audio() {
  orch::model_description m;
  orch::encoder_model v;
  v.name = "vision";
  v.fields = {"image"};
  v.cost = {.linear = 2, .quadratic = 1, .per_item = 0};
  v.output_divisor = 4;
  v.input_bytes_per_unit = 1176;
  v.feature_bytes_per_token = 7168;
  orch::encoder_model a;
  a.name = "audio";
  a.fields = {{"audio", 3000}};
  a.cost = {.linear = 3, .quadratic = 0, .per_item = 0};
  a.output_divisor = 2;
  a.input_bytes_per_unit = 256;
  a.feature_bytes_per_token = 7168;
  m.encoders = {v, a};
  m.llm.cost = {.linear = 16, .quadratic = 1, .per_item = 0};
  return m;
}

/// Every phase places each item once; loads add up; the hash is reproducible.
void check_plan(const orch::step_plan& sp, const orch::item_table& t, rank_t ranks) {
  CHECK(sp.llm.placement.items() == t.examples());
  for (const orch::phase_result& ph : sp.phases()) {
    REQUIRE(ph.loads.size() == static_cast<std::size_t>(ranks));
    const auto total = std::accumulate(ph.costs.begin(), ph.costs.end(), orch::cost_t{0});
    CHECK(std::accumulate(ph.loads.begin(), ph.loads.end(), orch::cost_t{0}) == total);
    CHECK(ph.balance.max_load >= ph.balance.lower_bound);
  }
  for (const orch::exchange_result& x : sp.exchanges()) {
    CHECK(x.backward.total_bytes() == x.forward.total_bytes());
  }
}

double seconds_since(std::chrono::steady_clock::time_point t0) {
  return std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
}

} // namespace

TEST_CASE("limits: 1,000,000 examples on 2,560 ranks are planned") {
  std::mt19937_64 rng(1);
  orch::item_table t(vision_audio());
  const rank_t ranks = 2560;
  const index_t per_rank = 1'000'000 / ranks + 1; // 391, 1,000,960 examples
  for (rank_t r = 0; r < ranks; ++r) {
    for (index_t j = 0; j < per_rank; ++j) {
      const length_t text = orch::test::uniform_int(rng, 16, 2048);
      const auto kind = orch::test::uniform_int(rng, 0, 7);
      const orch::media_spec image{"image", orch::test::uniform_int(rng, 64, 4096), 0};
      const orch::media_spec audio{"audio", orch::test::uniform_int(rng, 100, 9000), text};
      t.add_example(r, j, text,
                    kind == 0   ? std::span(&image, 1)
                    : kind == 1 ? std::span(&audio, 1)
                                : std::span<const orch::media_spec>{});
    }
  }
  REQUIRE(t.examples() >= 1'000'000);
  const auto t0 = std::chrono::steady_clock::now();
  const auto sp = orch::orchestrate(t, vision_audio(), orch::topology::uniform(ranks, 8));
  MESSAGE("1,000,960 examples, 2,560 ranks: planned in " << seconds_since(t0) << " s");
  check_plan(sp, t, ranks);
}

TEST_CASE("limits: 100,000 ranks are planned") {
  std::mt19937_64 rng(2);
  orch::item_table t(vision_audio());
  const rank_t ranks = 100'000;
  for (rank_t r = 0; r < ranks; ++r) {
    const orch::media_spec image{"image", orch::test::uniform_int(rng, 64, 4096), 0};
    t.add_example(r, 0, orch::test::uniform_int(rng, 16, 2048),
                  r % 2 == 0 ? std::span(&image, 1) : std::span<const orch::media_spec>{});
  }
  const auto t0 = std::chrono::steady_clock::now();
  const auto sp = orch::orchestrate(t, vision_audio(), orch::topology::uniform(ranks, 8));
  MESSAGE("100,000 ranks x 1 example: planned in " << seconds_since(t0) << " s");
  check_plan(sp, t, ranks);
}

TEST_CASE("limits: an item of 2^40 bytes is planned (byte counts are int64; nothing allocated)") {
  auto m = vision_audio();
  m.encoders[0].input_bytes_per_unit = 1024;
  orch::item_table t(m);
  const orch::media_spec huge{"image", length_t{1} << 30, 0}; // 2^30 patches x 1 KiB = 2^40 B
  t.add_example(0, 0, 100, std::span(&huge, 1));
  t.add_example(1, 0, 100);
  const auto sp = orch::orchestrate(t, m, orch::topology::uniform(2, 1));
  check_plan(sp, t, 2);
  CHECK(sp.encoder("vision").inputs.forward.item_bytes()[0] == bytes_t{1} << 40);
  // The features of 2^28 output tokens x 7,168 B = 1.75 TiB are planned the same way.
  CHECK(sp.encoder("vision").features.forward.total_bytes() == (bytes_t{1} << 28) * 7168);
}

TEST_CASE("limits: byte counts beyond int64 are rejected up front, naming the example") {
  auto m = vision_audio();
  m.encoders[0].input_bytes_per_unit = bytes_t{1} << 40;
  orch::item_table t(m);
  const orch::media_spec huge{"image", length_t{1} << 30, 0}; // 2^70 bytes
  t.add_example(0, 0, 100, std::span(&huge, 1));
  CHECK_THROWS_AS(static_cast<void>(orch::orchestrate(t, m, orch::topology::uniform(1, 1))),
                  orch::overflow);
}

TEST_CASE("limits: an item cut into more than 2^24 chunks is rejected up front") {
  auto m = vision_audio();
  m.encoders[0].fields = {{"image", 40}};
  orch::item_table t(m);
  const orch::media_spec huge{"image", length_t{1} << 40, 0}; // 2^35 chunks of 40 patches
  t.add_example(0, 0, 100, std::span(&huge, 1));
  const auto t0 = std::chrono::steady_clock::now();
  CHECK_THROWS_AS(static_cast<void>(orch::orchestrate(t, m, orch::topology::uniform(1, 1))),
                  orch::invalid_argument);
  CHECK(seconds_since(t0) < 10.0); // microseconds in fact; minutes before the limit existed
  CHECK(orch::media_chunks::max_chunks == orch::index_t{1} << 24);
}

TEST_CASE("limits: a model with 16 encoders is planned") {
  orch::model_description m;
  std::vector<std::string> fields;
  for (int e = 0; e < 16; ++e) {
    orch::encoder_model enc;
    enc.name = "enc" + std::to_string(e);
    fields.push_back("field" + std::to_string(e));
    enc.fields = {{fields.back(), e % 3 == 0 ? 64 : 0}};
    enc.cost = {.linear = 1 + e, .quadratic = e % 2, .per_item = 1};
    enc.output_divisor = 1 + e % 4;
    enc.input_bytes_per_unit = 4;
    enc.feature_bytes_per_token = 16;
    m.encoders.push_back(enc);
  }
  m.llm.cost = {.linear = 16, .quadratic = 1, .per_item = 0};
  std::mt19937_64 rng(3);
  orch::item_table t(m);
  const rank_t ranks = 256;
  for (rank_t r = 0; r < ranks; ++r) {
    for (index_t j = 0; j < 32; ++j) {
      const length_t text = orch::test::uniform_int(rng, 0, 512);
      std::vector<orch::media_spec> media;
      for (std::int64_t k = orch::test::uniform_int(rng, 0, 4); k > 0; --k) {
        media.push_back({fields[static_cast<std::size_t>(orch::test::uniform_int(rng, 0, 15))],
                         orch::test::uniform_int(rng, 1, 300), 0});
      }
      t.add_example(r, j, text, media);
    }
  }
  const auto t0 = std::chrono::steady_clock::now();
  const auto sp = orch::orchestrate(t, m, orch::topology::uniform(ranks, 8));
  MESSAGE("16 encoders, 256 ranks x 32 examples: planned in " << seconds_since(t0) << " s");
  REQUIRE(sp.encoders.size() == 16);
  REQUIRE(sp.exchanges().size() == 33);
  check_plan(sp, t, ranks);
}
