// SPDX-License-Identifier: Apache-2.0
#include <orch/orchestrate/item_table.hpp>
#include <orch/orchestrate/model.hpp>
#include <orch/orchestrate/strategy.hpp>

#include <doctest/doctest.h>

#include <string>
#include <vector>

namespace {

orch::model_description two_encoders() {
  orch::model_description m;
  m.encoders.push_back({"vision", {"image", "video"}, {10, 1, 0}, 4, 2, 0, 1176, 2048});
  m.encoders.push_back({"audio", {"audio"}, {5, 0, 0}, 2, 0, 1500, 256, 2048});
  m.llm.cost = {100, 1, 0};
  return m;
}

bool message_has(const orch::error& e, const std::string& part) {
  return std::string(e.what()).find(part) != std::string::npos;
}

} // namespace

TEST_CASE("encoder_model output tokens: ceil(l / divisor) + extra") {
  const auto m = two_encoders();
  CHECK(m.encoders[0].output_tokens(0) == 2);
  CHECK(m.encoders[0].output_tokens(1) == 3);
  CHECK(m.encoders[0].output_tokens(16) == 6);
  CHECK(m.encoders[1].output_tokens(301) == 151);
  CHECK_THROWS_AS((void)m.encoders[0].output_tokens(-1), orch::invalid_argument);
}

TEST_CASE("model_description finds encoders by field and validates") {
  auto m = two_encoders();
  CHECK_NOTHROW(m.validate());
  CHECK(m.encoder_of_field("image") == 0);
  CHECK(m.encoder_of_field("video") == 0);
  CHECK(m.encoder_of_field("audio") == 1);
  CHECK(m.encoder_of_field("depth") == -1);

  auto twice = m;
  twice.encoders[1].fields.push_back("image");
  try {
    twice.validate();
    FAIL("expected throw");
  } catch (const orch::invalid_argument& e) {
    CHECK(message_has(e, "'image'"));
  }
  auto divisor = m;
  divisor.encoders[1].output_divisor = 0;
  CHECK_THROWS_AS(divisor.validate(), orch::invalid_argument);
  auto text = m;
  text.encoders[0].fields = {"text"};
  CHECK_THROWS_AS(text.validate(), orch::invalid_argument);
  auto negative = m;
  negative.encoders[0].feature_bytes_per_token = -1;
  CHECK_THROWS_AS(negative.validate(), orch::invalid_argument);
  auto same = m;
  same.encoders[1].name = "vision";
  CHECK_THROWS_AS(same.validate(), orch::invalid_argument);
}

TEST_CASE("item_table stores examples and media in rows") {
  orch::item_table t;
  const std::vector<orch::media_spec> m0{{"image", 100, 0}, {"audio", 300, 5}};
  CHECK(t.add_example(1, 0, 10, m0) == 0);
  CHECK(t.add_example(0, 0, 7) == 1);
  const std::vector<orch::media_spec> m2{{"image", 50, 3}};
  CHECK(t.add_example(1, 1, 3, m2) == 2);
  CHECK(t.examples() == 3);
  CHECK(t.media_items() == 3);
  CHECK(t.media_begin(0) == 0);
  CHECK(t.media_end(0) == 2);
  CHECK(t.media_begin(1) == 2);
  CHECK(t.media_end(1) == 2);
  CHECK(t.media_end(2) == 3);
  CHECK(t.field_names() == std::vector<std::string>{"image", "audio"});
  CHECK(t.media_field(2) == 0);
  CHECK(t.media_length(1) == 300);
  CHECK(t.media_text_position(1) == 5);
  CHECK(t.media_example(2) == 2);
  CHECK(t.owner(2) == 1);
  CHECK(t.local_index(2) == 1);
  CHECK_NOTHROW(t.validate(2));
  CHECK_THROWS_AS(t.validate(0), orch::invalid_argument);
  CHECK_THROWS_AS((void)t.owner(3), orch::invalid_argument);
}

TEST_CASE("item_table rejects inconsistent input, naming the example") {
  orch::item_table t;
  CHECK_THROWS_AS(t.add_example(-1, 0, 1), orch::invalid_argument);
  CHECK_THROWS_AS(t.add_example(0, -1, 1), orch::invalid_argument);
  CHECK_THROWS_AS(t.add_example(0, 0, -1), orch::invalid_argument);
  const std::vector<orch::media_spec> bad_len{{"image", -4, 0}};
  CHECK_THROWS_AS(t.add_example(0, 0, 1, bad_len), orch::invalid_argument);
  const std::vector<orch::media_spec> bad_pos{{"image", 4, 2}, {"image", 4, 1}};
  CHECK_THROWS_AS(t.add_example(0, 0, 5, bad_pos), orch::invalid_argument);
  const std::vector<orch::media_spec> past_end{{"image", 4, 6}};
  CHECK_THROWS_AS(t.add_example(0, 0, 5, past_end), orch::invalid_argument);
  const std::vector<orch::media_spec> text{{"text", 4, 0}};
  CHECK_THROWS_AS(t.add_example(0, 0, 5, text), orch::invalid_argument);
  CHECK(t.examples() == 0); // nothing half-added

  t.add_example(0, 0, 1);
  t.add_example(0, 0, 1);
  try {
    t.validate(1);
    FAIL("expected throw");
  } catch (const orch::invalid_argument& e) {
    CHECK(message_has(e, "examples 0 and 1"));
  }
  orch::item_table gap;
  gap.add_example(0, 1, 1);
  CHECK_THROWS_AS(gap.validate(1), orch::invalid_argument);
  orch::item_table outside;
  outside.add_example(3, 0, 1);
  try {
    outside.validate(2);
    FAIL("expected throw");
  } catch (const orch::invalid_argument& e) {
    CHECK(message_has(e, "example 0"));
    CHECK(message_has(e, "rank 3"));
  }
}

TEST_CASE("strategies have the tool names") {
  CHECK(orch::to_string(orch::strategy::llm_only) == "llm_only");
  for (const auto s : orch::all_strategies) {
    CHECK(orch::parse_strategy(orch::to_string(s)) == s);
  }
  CHECK_THROWS_AS((void)orch::parse_strategy("balanced"), orch::invalid_argument);
}
