// SPDX-License-Identifier: Apache-2.0
// The trainer-facing contract of orchestrate: chunked media, the LLM's per-rank limits under
// every strategy, options it cannot honour rejected by name, and its error messages.
#include <orch/orchestrate/model_presets.hpp>
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

using orch::index_t;
using orch::length_t;
using orch::rank_t;

orch::model_description small_model(length_t audio_window) {
  orch::model_description m;
  m.encoders.push_back({.name = "vision",
                        .fields = {"image"},
                        .cost = {.linear = 3, .quadratic = 1, .per_item = 2},
                        .output_divisor = 4,
                        .output_extra = 1,
                        .input_bytes_per_unit = 3,
                        .feature_bytes_per_token = 5});
  m.encoders.push_back({.name = "audio",
                        .fields = {{"audio", audio_window}},
                        .cost = {.linear = 2, .quadratic = 1, .per_item = 1},
                        .output_divisor = 2,
                        .output_extra = 2,
                        .input_bytes_per_unit = 2,
                        .feature_bytes_per_token = 7});
  m.llm = {.name = "llm",
           .cost = {.linear = 16, .quadratic = 1, .per_item = 0},
           .text_bytes_per_token = 2};
  return m;
}

/// A seeded step: `ranks` ranks × `per_rank` examples, some with images, some with audio
/// clips up to `longest_audio` frames.
orch::item_table random_table(std::uint64_t seed, rank_t ranks, index_t per_rank,
                              length_t longest_audio) {
  std::mt19937_64 rng(seed);
  orch::item_table t;
  for (rank_t r = 0; r < ranks; ++r) {
    for (index_t i = 0; i < per_rank; ++i) {
      const length_t text = orch::test::uniform_int(rng, 1, 300);
      std::vector<orch::media_spec> media;
      if (orch::test::uniform_int(rng, 0, 2) == 0) {
        media.push_back({"image", orch::test::uniform_int(rng, 0, 900), 0});
      }
      if (orch::test::uniform_int(rng, 0, 2) == 0) {
        media.push_back({"audio", orch::test::uniform_int(rng, 0, longest_audio), text});
      }
      t.add_example(r, i, text, media);
    }
  }
  return t;
}

std::string message_of(const orch::item_table& t, const orch::model_description& m,
                       const orch::topology& topo, const orch::orchestrate_options& o = {}) {
  try {
    (void)orch::orchestrate(t, m, topo, o);
  } catch (const orch::error& e) {
    return e.what();
  }
  return "no error";
}

bool has(const std::string& text, const std::string& part) {
  return text.find(part) != std::string::npos;
}

} // namespace

TEST_CASE("chunked media: the plan equals planning the pre-cut table, for every strategy") {
  // Cutting inside orchestrate must give exactly the plan of a table whose long items were
  // cut by hand into consecutive chunks (each its own media item at the same text position).
  constexpr length_t window = 300;
  const auto model = small_model(window);
  auto whole_model = model;
  whole_model.encoders[1].fields = {"audio"};
  for (std::uint64_t seed = 1; seed <= 12; ++seed) {
    CAPTURE(seed);
    const auto topo = orch::topology::uniform(8, 4);
    const auto t = random_table(seed, 8, 6, 1000);
    orch::item_table precut;
    const auto& names = t.field_names();
    for (index_t x = 0; x < t.examples(); ++x) {
      std::vector<orch::media_spec> media;
      for (index_t m = t.media_begin(x); m < t.media_end(x); ++m) {
        const auto& f = names[static_cast<std::size_t>(t.media_field(m))];
        const length_t l = t.media_length(m);
        if (f == "audio" && l > window) {
          for (length_t done = 0; done < l; done += window) {
            media.push_back({f, std::min(window, l - done), t.media_text_position(m)});
          }
        } else {
          media.push_back({f, l, t.media_text_position(m)});
        }
      }
      precut.add_example(t.owner(x), t.local_index(x), t.text_tokens(x), media);
    }
    for (const auto strat : orch::all_strategies) {
      CAPTURE(orch::to_string(strat));
      const auto cut = orch::orchestrate(t, model, topo, {.strategy = strat});
      const auto ref = orch::orchestrate(precut, whole_model, topo, {.strategy = strat});
      CHECK(cut.hash == ref.hash);
      CHECK(cut.sequence_length == ref.sequence_length);
      CHECK(cut.output_tokens == ref.output_tokens);
      REQUIRE(cut.chunks.chunks(t.media_items()) == precut.media_items());
      // The chunks cover their item in order, within the window.
      for (index_t m = 0; m < t.media_items(); ++m) {
        length_t covered = 0;
        for (index_t c = cut.chunks.first_chunk(m);
             c < cut.chunks.first_chunk(m) + cut.chunks.chunk_count(m); ++c) {
          CHECK(cut.chunks.media_of(c) == m);
          CHECK(cut.chunks.offset(c) == covered);
          CHECK(cut.chunks.length(c, t) == precut.media_length(c));
          covered += cut.chunks.length(c, t);
        }
        CHECK(covered == t.media_length(m));
      }
    }
  }
}

TEST_CASE("chunked media: a 10-minute recording is 20 windows of 30 s, each with its markers") {
  const auto model = orch::model_preset("omni-7b");
  orch::item_table t(model);
  const std::vector<orch::media_spec> recording{{"audio", 60'000, 0}}; // 100 frames/s
  t.add_example(0, 0, 40, recording);
  t.add_example(1, 0, 10);
  const auto sp = orch::orchestrate(t, model, orch::topology::uniform(2, 2));
  REQUIRE(sp.chunks.cut());
  CHECK(sp.chunks.chunk_count(0) == 20);
  const auto& audio = sp.encoder("audio");
  CHECK(audio.phase.items.size() == 20);
  CHECK(audio.inputs.forward.items() == 20);
  // Each window: ceil(3000 / 4) = 750 tokens plus its 2 markers.
  CHECK(sp.sequence_length[0] == 40 + 20 * (750 + 2));
  for (const auto& seg : sp.assembly.segments) {
    if (seg.source == 1) { // the audio encoder's feature buffer
      CHECK(seg.tokens == 752);
    }
  }
  // Balanced over both ranks: no rank runs more than half the windows plus one.
  CHECK(*std::max_element(audio.phase.loads.begin(), audio.phase.loads.end()) <=
        11 * audio.phase.costs[0]);
  // Without a window the recording is one forward.
  auto unchunked = model;
  unchunked.encoders[1].fields = {"audio"};
  const auto one = orch::orchestrate(t, unchunked, orch::topology::uniform(2, 2));
  CHECK_FALSE(one.chunks.cut());
  CHECK(one.encoder("audio").phase.items.size() == 1);
}

TEST_CASE("LLM limits: every strategy honours max_examples_per_rank and max_tokens_per_rank") {
  const auto model = small_model(0);
  for (std::uint64_t seed = 1; seed <= 6; ++seed) {
    CAPTURE(seed);
    const auto topo = orch::topology::uniform(8, 4);
    const auto t = random_table(seed, 8, 8, 600);
    const auto free = orch::orchestrate(t, model, topo, {.strategy = orch::strategy::per_phase});
    length_t longest = 0;
    length_t total = 0;
    for (const auto l : free.sequence_length) {
      longest = std::max(longest, l);
      total += l;
    }
    // A token cap the unconstrained balance breaks on some rank only if examples pile up.
    const orch::llm_limits limits{.max_examples_per_rank = 9,
                                  .max_tokens_per_rank = std::max(longest, total / 8 + longest)};
    for (const auto strat :
         {orch::strategy::llm_only, orch::strategy::per_phase, orch::strategy::orch}) {
      CAPTURE(orch::to_string(strat));
      const auto sp = orch::orchestrate(t, model, topo, {.strategy = strat, .llm = limits});
      std::vector<index_t> count(8, 0);
      std::vector<length_t> tokens(8, 0);
      for (index_t x = 0; x < t.examples(); ++x) {
        const auto r = static_cast<std::size_t>(sp.llm.placement.rank_of(x));
        ++count[r];
        tokens[r] += sp.sequence_length[static_cast<std::size_t>(x)];
      }
      for (std::size_t r = 0; r < 8; ++r) {
        CHECK(count[r] <= limits.max_examples_per_rank);
        CHECK(tokens[r] <= limits.max_tokens_per_rank);
      }
      CHECK(sp.llm.balance.max_over_lower_bound < 1.5);
      // The same limits, the same plan.
      CHECK(orch::orchestrate(t, model, topo, {.strategy = strat, .llm = limits}).hash == sp.hash);
    }
  }
}

TEST_CASE("LLM limits: tight count limits force equal counts; orch keeps bins whole") {
  const auto model = small_model(0);
  const auto topo = orch::topology::uniform(4, 2);
  orch::item_table t;
  // Ranks 1..3 sampled one huge example each, rank 0 twelve tiny ones: balance by cost alone
  // puts all twelve on the one rank without a huge example; 5 per rank forbids that.
  for (index_t i = 0; i < 12; ++i) {
    t.add_example(0, i, 1);
  }
  for (rank_t r = 1; r < 4; ++r) {
    t.add_example(r, 0, 2000);
  }
  const orch::llm_limits five{.max_examples_per_rank = 5};
  for (const auto strat : {orch::strategy::per_phase, orch::strategy::orch}) {
    const auto sp = orch::orchestrate(t, model, topo, {.strategy = strat, .llm = five});
    for (rank_t r = 0; r < 4; ++r) {
      CHECK(sp.llm.placement.count_on(r) <= 5);
    }
    // Each huge example still has a rank of its own.
    std::vector<rank_t> huge_on;
    for (index_t x = 12; x < 15; ++x) {
      huge_on.push_back(sp.llm.placement.rank_of(x));
    }
    std::sort(huge_on.begin(), huge_on.end());
    CHECK(std::unique(huge_on.begin(), huge_on.end()) == huge_on.end());
  }
  // Without the limit the unconstrained plan does put more than 5 on a rank.
  const auto free = orch::orchestrate(t, model, topo, {.strategy = orch::strategy::per_phase});
  index_t most = 0;
  for (rank_t r = 0; r < 4; ++r) {
    most = std::max(most, free.llm.placement.count_on(r));
  }
  CHECK(most == 12);
}

TEST_CASE("LLM limits: what no placement meets is orch::infeasible naming the limit") {
  const auto model = small_model(0);
  const auto topo = orch::topology::uniform(2, 2);
  orch::item_table t;
  t.add_example(0, 0, 50);
  t.add_example(0, 1, 60);
  t.add_example(0, 2, 70);
  t.add_example(1, 0, 10);

  // strategy none keeps examples on their owner: rank 0 holds 3.
  const auto none3 = message_of(
      t, model, topo, {.strategy = orch::strategy::none, .llm = {.max_examples_per_rank = 2}});
  CHECK(has(none3, "strategy none keeps examples on their owner, and rank 0 holds 3 examples, "
                   "above options.llm.max_examples_per_rank = 2"));
  const auto none_tokens = message_of(
      t, model, topo, {.strategy = orch::strategy::none, .llm = {.max_tokens_per_rank = 100}});
  CHECK(
      has(none_tokens, "rank 0 holds 180 LLM tokens, above options.llm.max_tokens_per_rank = 100"));
  // The same limits are met by a balanced strategy.
  CHECK_NOTHROW((void)orch::orchestrate(
      t, model, topo,
      {.strategy = orch::strategy::per_phase, .llm = {.max_examples_per_rank = 2}}));

  // One example above the token cap.
  const auto big = message_of(t, model, topo, {.llm = {.max_tokens_per_rank = 65}});
  CHECK(has(big, "example 2 (rank 0, local index 2) has 70 LLM tokens, above "
                 "options.llm.max_tokens_per_rank = 65"));
  // More examples than ranks × the count cap.
  const auto many = message_of(t, model, topo, {.llm = {.max_examples_per_rank = 1}});
  CHECK(has(many, "4 examples do not fit 2 ranks of options.llm.max_examples_per_rank = 1"));
  CHECK_THROWS_AS((void)orch::orchestrate(t, model, topo, {.llm = {.max_examples_per_rank = 1}}),
                  orch::infeasible);
  // Fits one by one, not together: 190 tokens over 2 ranks of 94.
  const auto tight = message_of(t, model, topo, {.llm = {.max_tokens_per_rank = 94}});
  CHECK(has(tight, "no placement of the LLM phase within options.llm (max_examples_per_rank = 0, "
                   "max_tokens_per_rank = 94) was found"));
}

TEST_CASE("orchestrate rejects options it cannot honour, naming the option") {
  const auto model = small_model(0);
  const auto topo = orch::topology::uniform(2, 2);
  const auto t = random_table(3, 2, 4, 100);
  const std::vector<orch::cost_t> per_item(static_cast<std::size_t>(t.examples()), 1);
  const std::vector<orch::cost_t> speeds{1, 2};
  const std::string unsupported = " is not supported: it would apply to every phase";
  for (const auto strat : orch::all_strategies) {
    CAPTURE(orch::to_string(strat));
    orch::orchestrate_options o{.strategy = strat};
    o.partition.max_items_per_bin = 4;
    CHECK(has(message_of(t, model, topo, o), "options.partition.max_items_per_bin" + unsupported));
    o = {.strategy = strat};
    o.partition.equal_counts = true;
    CHECK(has(message_of(t, model, topo, o), "options.partition.equal_counts" + unsupported));
    o = {.strategy = strat};
    o.partition.second_resource = per_item;
    o.partition.second_capacity = 10;
    CHECK(has(message_of(t, model, topo, o),
              "options.partition.second_resource / second_capacity" + unsupported));
    o = {.strategy = strat};
    o.partition.speeds = speeds;
    CHECK(has(message_of(t, model, topo, o), "options.partition.speeds" + unsupported));
    o = {.strategy = strat};
    o.partition.time_limit_ms = 5;
    CHECK(has(message_of(t, model, topo, o), "options.partition.time_limit_ms = 5 would make"));
    o = {.strategy = strat, .llm = {.max_examples_per_rank = -1}};
    CHECK(has(message_of(t, model, topo, o), "options.llm limits must be non-negative"));
    o = {.strategy = strat, .llm = {.max_examples_per_rank = 8}};
    o.partition.algorithm = orch::partition_algorithm::kk;
    if (strat == orch::strategy::none) { // strategy none partitions nothing under the limits
      CHECK_NOTHROW((void)orch::orchestrate(t, model, topo, o));
    } else {
      CHECK(has(message_of(t, model, topo, o),
                "options.partition.algorithm = \"kk\" cannot honour options.llm's limits"));
    }
    o.llm = {};
    CHECK_NOTHROW((void)orch::orchestrate(t, model, topo, o)); // kk without limits is fine
    o = {.strategy = strat, .threads = 0};
    CHECK(has(message_of(t, model, topo, o), "options.threads must be at least 1, got 0"));
    CHECK_THROWS_AS((void)orch::orchestrate(t, model, topo, o), orch::invalid_argument);
  }
}

TEST_CASE("errors at the public boundary name the example, the phase and the valid names") {
  const auto model = small_model(0);
  const auto topo = orch::topology::uniform(2, 2);

  // A table made for the model rejects an unknown field when it is added.
  orch::item_table typed(model);
  typed.add_example(0, 0, 3);
  const std::vector<orch::media_spec> typo{{"imgae", 10, 0}};
  try {
    typed.add_example(1, 0, 4, typo);
    FAIL("expected throw");
  } catch (const orch::invalid_argument& e) {
    CHECK(has(e.what(), "item_table: example 1 (rank 1, local index 0) media 0 has field "
                        "'imgae', which the model does not consume (its fields: 'image', "
                        "'audio')"));
  }
  CHECK(typed.examples() == 1);
  // Its field ids follow the model, whatever comes first.
  const std::vector<orch::media_spec> clip{{"audio", 10, 0}};
  typed.add_example(1, 0, 4, clip);
  CHECK(typed.field_names() == std::vector<std::string>{"image", "audio"});
  CHECK(typed.media_field(0) == 1);

  // An open table's unknown field is reported by orchestrate, listing the model's fields.
  orch::item_table open;
  open.add_example(0, 0, 4);
  open.add_example(1, 0, 4, typo);
  CHECK(has(message_of(open, model, topo),
            "orchestrate: example 1 (rank 1, local index 0) has a 'imgae' item, a field no "
            "encoder of the model consumes (its fields: 'image', 'audio')"));

  // A cost sum past 2^63 - 1 names the phase and the example where it overflows.
  auto steep = model;
  steep.llm.cost = {.linear = std::numeric_limits<orch::cost_t>::max() / 4, .quadratic = 0};
  orch::item_table heavy;
  heavy.add_example(0, 0, 3);
  heavy.add_example(0, 1, 3);
  const auto overflow = message_of(heavy, steep, topo);
  CHECK(has(overflow, "orchestrate: phase 'llm': the costs of its items sum past 2^63 - 1 at "
                      "example 1 (rank 0, local index 1), cost 6917529027641081853"));
  CHECK_THROWS_AS((void)orch::orchestrate(heavy, steep, topo), orch::overflow);
  // In an encoder phase the item is named by example and media item too.
  auto steep_vision = model;
  steep_vision.encoders[0].cost = {.linear = std::numeric_limits<orch::cost_t>::max() / 1000,
                                   .quadratic = 0};
  orch::item_table images;
  const std::vector<orch::media_spec> image{{"image", 600, 0}};
  images.add_example(0, 0, 3, image);
  images.add_example(1, 0, 3, image);
  CHECK(has(message_of(images, steep_vision, topo),
            "orchestrate: phase 'vision': the costs of its items sum past 2^63 - 1 at example 1 "
            "(rank 1, local index 0), media item 1"));

  // Lookups by name list what exists.
  const auto sp = orch::orchestrate(random_table(1, 2, 3, 50), model, topo);
  try {
    (void)sp.exchange("vision.input");
    FAIL("expected throw");
  } catch (const orch::invalid_argument& e) {
    CHECK(has(e.what(), "no exchange named 'vision.input' (exchanges: 'vision.inputs', "
                        "'vision.features', 'audio.inputs', 'audio.features', 'text')"));
  }
  CHECK_THROWS_WITH_AS((void)sp.phase("video"),
                       "step_plan: no phase named 'video' (phases: 'vision', 'audio', 'llm')",
                       orch::invalid_argument);
  CHECK_THROWS_WITH_AS((void)sp.encoder("llm"),
                       "step_plan: no encoder named 'llm' (encoders: 'vision', 'audio')",
                       orch::invalid_argument);
  CHECK(&sp.exchange("audio.features") == &sp.encoders[1].features);
  CHECK(&sp.phase("llm") == &sp.llm);
}

TEST_CASE("step_plan views list every phase and exchange in step order") {
  const auto model = small_model(0);
  const auto sp = orch::orchestrate(random_table(2, 4, 4, 50), model, orch::topology::uniform(4, 2),
                                    {.threads = 2});
  const auto phases = sp.phases();
  REQUIRE(phases.size() == 3);
  CHECK(&phases[0].get() == &sp.encoders[0].phase);
  CHECK(&phases[2].get() == &sp.llm);
  const auto exchanges = sp.exchanges();
  REQUIRE(exchanges.size() == 5);
  CHECK(exchanges[0].get().name == "vision.inputs");
  CHECK(exchanges[3].get().name == "audio.features");
  CHECK(&exchanges[4].get() == &sp.text);
  // The layouts an encoder step carries are its exchanges' ends.
  for (const auto& e : sp.encoders) {
    CHECK(e.owner_media == e.inputs.forward.from());
    CHECK(e.phase.placement == e.inputs.forward.to());
    CHECK(e.feature_layout == e.features.forward.to());
  }
}

TEST_CASE("model presets: names, chunked fields, and an unknown name") {
  const auto names = orch::model_preset_names();
  CHECK(names[0] == "omni-7b");
  CHECK(names[1] == "omni-72b");
  for (const auto n : names) {
    CAPTURE(n);
    const auto m = orch::model_preset(n);
    CHECK_NOTHROW(m.validate());
    CHECK(m.field_list() == "'image', 'video', 'audio'");
  }
  CHECK_THROWS_WITH_AS((void)orch::model_preset("gpt"),
                       "model_preset: unknown model 'gpt' (presets: omni-7b, omni-72b)",
                       orch::invalid_argument);
  auto bad = orch::model_preset("omni-7b");
  bad.encoders[1].fields[0].chunk_length = -5;
  CHECK_THROWS_WITH_AS(bad.validate(),
                       "model: encoder 'audio' field 'audio' has chunk_length -5 (must be "
                       "positive, or 0 for no chunking)",
                       orch::invalid_argument);
}

TEST_CASE("LLM groups: a prompt's responses share an LLM rank under every strategy") {
  const auto model = small_model(0);
  const auto topo = orch::topology::uniform(8, 4);
  const auto t = random_table(11, 8, 8, 400);
  // Groups of 4 consecutive examples (each group sampled on one rank, as RL rollouts are),
  // then two groups that span ranks, and a few examples on their own.
  std::vector<index_t> groups(static_cast<std::size_t>(t.examples()));
  for (std::size_t x = 0; x < groups.size(); ++x) {
    groups[x] = static_cast<index_t>(x / 4);
  }
  groups[5] = orch::no_group;
  const orch::llm_limits within{.groups = groups};
  CHECK_NOTHROW(
      (void)orch::orchestrate(t, model, topo, {.strategy = orch::strategy::none, .llm = within}));
  for (const auto strat :
       {orch::strategy::llm_only, orch::strategy::per_phase, orch::strategy::orch}) {
    CAPTURE(orch::to_string(strat));
    auto spanning = groups;
    spanning[6] = 100; // examples 6 (rank 0) and 60 (rank 7) form one group
    spanning[60] = 100;
    const auto sp = orch::orchestrate(
        t, model, topo,
        {.strategy = strat, .llm = {.max_examples_per_rank = 12, .groups = spanning}});
    for (std::size_t x = 0; x < spanning.size(); ++x) {
      for (std::size_t y = x + 1; y < spanning.size(); ++y) {
        if (spanning[x] >= 0 && spanning[x] == spanning[y]) {
          CHECK(sp.llm.placement.rank_of(static_cast<index_t>(x)) ==
                sp.llm.placement.rank_of(static_cast<index_t>(y)));
        }
      }
    }
    for (rank_t r = 0; r < 8; ++r) {
      CHECK(sp.llm.placement.count_on(r) <= 12);
    }
    CHECK(sp.llm.balance.max_over_lower_bound < 1.5);
  }
  // Strategy none cannot move a group that spans owners.
  auto spanning = groups;
  spanning[6] = 100;
  spanning[60] = 100;
  const auto none =
      message_of(t, model, topo, {.strategy = orch::strategy::none, .llm = {.groups = spanning}});
  CHECK(has(none, "strategy none keeps examples on their owner, and group 100 spans example 6 "
                  "(rank 0, local index 6) and example 60 (rank 7, local index 4)"));
  const std::vector<index_t> short_groups(3, 0);
  CHECK(has(message_of(t, model, topo, {.llm = {.groups = short_groups}}),
            "options.llm.groups has 3 entries for 64 examples"));
  // A group above the token cap cannot be placed.
  const std::vector<index_t> one_group(static_cast<std::size_t>(t.examples()), 0);
  CHECK_THROWS_AS((void)orch::orchestrate(
                      t, model, topo, {.llm = {.max_tokens_per_rank = 5000, .groups = one_group}}),
                  orch::infeasible);
}

TEST_CASE("accessors of chunks and the assembly name a bad index") {
  const auto model = small_model(100);
  orch::item_table t;
  const std::vector<orch::media_spec> clip{{"audio", 250, 0}};
  t.add_example(0, 0, 5, clip);
  const auto sp = orch::orchestrate(t, model, orch::topology::uniform(2, 2));
  REQUIRE(sp.chunks.cut());
  CHECK(sp.chunks.chunk_count(0) == 3);
  CHECK_THROWS_WITH_AS((void)sp.chunks.media_of(3),
                       "media_chunks::media_of: chunk 3 is outside [0, 3)", orch::invalid_argument);
  CHECK_THROWS_WITH_AS((void)sp.chunks.first_chunk(1),
                       "media_chunks::first_chunk: media item 1 is outside [0, 1)",
                       orch::invalid_argument);
  CHECK_THROWS_WITH_AS((void)sp.assembly.on_rank(2),
                       "assembly_map::on_rank: rank 2 is outside [0, 2)", orch::invalid_argument);
  orch::orchestrate_options grouped;
  const std::vector<index_t> groups{0};
  grouped.partition.groups = groups;
  CHECK(has(message_of(t, model, orch::topology::uniform(2, 2), grouped),
            "options.partition.groups is not supported"));
  CHECK(orch::flop_units(1499, 1000) == 1);
  CHECK(orch::flop_units(1500, 1000) == 2);
  CHECK_THROWS_AS((void)orch::flop_units(-1, 1000), orch::invalid_argument);
}
