// SPDX-License-Identifier: Apache-2.0
// orch-bench simulate: step sampling, the strategies' numbers (consistent with each other and
// with what was sampled), and the JSON and CSV outputs.
#include "model_presets.hpp"
#include "simulate.hpp"
#include "trace.hpp"

#include <orch/orchestrate/orchestrate.hpp>

#include <doctest/doctest.h>

#include <cmath>
#include <set>
#include <sstream>
#include <string>
#include <vector>

namespace {

using orch_bench::field;
using orch_bench::media_item;

// A small trace shaped like the omni recipe: text-only, image-text, ASR and long audio (one
// clip above the 30-s audio window, so it is cut into chunks).
orch_bench::trace small_trace() {
  orch_bench::trace t;
  for (int i = 0; i < 60; ++i) {
    const auto text = static_cast<orch::length_t>(20 + (i * 37) % 900);
    std::vector<media_item> media;
    switch (i % 5) {
    case 1:
      media.push_back({field::image, 1564});
      break;
    case 2:
      media.push_back({field::image, 16 + (i * 97) % 3000});
      media.push_back({field::image, 400});
      break;
    case 3:
      media.push_back({field::audio, 100 + (i * 131) % 2900});
      break;
    case 4:
      if (i % 3 == 0) {
        media.push_back({field::audio, 7'500});
      }
      break;
    default:
      break;
    }
    t.add_example("e" + std::to_string(i), text, media);
  }
  return t;
}

orch_bench::simulate_config small_config() {
  orch_bench::simulate_config c;
  c.trace_name = "small";
  c.ranks = 8;
  c.ranks_per_node = 4;
  c.examples_per_rank = 6;
  c.steps = 4;
  c.seed = 42;
  return c;
}

} // namespace

TEST_CASE("sample_step: R×B examples, owner = position / B; orchestrate cuts long media") {
  const auto t = small_trace();
  const auto model = orch_bench::default_model();
  const auto table = orch_bench::sample_step(t, model, 8, 6, 123);
  REQUIRE(table.examples() == 48);
  CHECK_NOTHROW(table.validate(8));
  for (orch::index_t e = 0; e < 48; ++e) {
    CAPTURE(e);
    CHECK(table.owner(e) == e / 6);
    CHECK(table.local_index(e) == e % 6);
  }
  // Media are added whole; the plan's chunks are within their field's chunk length and the
  // chunks of one item cover it.
  const auto plan = orch::orchestrate(table, model.model, orch::topology::uniform(8, 4));
  const auto& names = table.field_names();
  for (orch::index_t m = 0; m < table.media_items(); ++m) {
    const auto& f = names[static_cast<std::size_t>(table.media_field(m))];
    CAPTURE(f);
    orch::length_t covered = 0;
    for (orch::index_t c = plan.chunks.first_chunk(m);
         c < plan.chunks.first_chunk(m) + plan.chunks.chunk_count(m); ++c) {
      CHECK(plan.chunks.media_of(c) == m);
      CHECK(plan.chunks.offset(c) == covered);
      covered += plan.chunks.length(c, table);
      if (f == "audio") {
        CHECK(plan.chunks.length(c, table) <= 3000);
      }
    }
    CHECK(covered == table.media_length(m));
  }
  // The same seed gives the same table; another seed another one.
  const auto again = orch_bench::sample_step(t, model, 8, 6, 123);
  const auto other = orch_bench::sample_step(t, model, 8, 6, 124);
  CHECK(std::vector<orch::length_t>(again.text_lengths().begin(), again.text_lengths().end()) ==
        std::vector<orch::length_t>(table.text_lengths().begin(), table.text_lengths().end()));
  CHECK(std::vector<orch::length_t>(other.text_lengths().begin(), other.text_lengths().end()) !=
        std::vector<orch::length_t>(table.text_lengths().begin(), table.text_lengths().end()));

  // A 7,500-frame clip is one media item; the plan cuts it into 3,000 + 3,000 + 1,500.
  orch_bench::trace one;
  const std::vector<media_item> clip{{field::audio, 7'500}};
  one.add_example("x", 5, clip);
  const auto whole = orch_bench::sample_step(one, model, 1, 1, 1);
  REQUIRE(whole.media_items() == 1);
  const auto cut = orch::orchestrate(whole, model.model, orch::topology::uniform(1, 1));
  REQUIRE(cut.chunks.chunks(1) == 3);
  CHECK(cut.chunks.length(0, whole) == 3000);
  CHECK(cut.chunks.length(1, whole) == 3000);
  CHECK(cut.chunks.length(2, whole) == 1500);
  CHECK(cut.encoder("audio").phase.items.size() == 3);
}

TEST_CASE("restrict_to_trace keeps only the encoders the trace feeds") {
  orch_bench::trace text_only;
  text_only.add_example("a", 10, {});
  const auto m = orch_bench::restrict_to_trace(orch_bench::default_model(), text_only);
  CHECK(m.model.encoders.empty());
  const auto full = orch_bench::restrict_to_trace(orch_bench::default_model(), small_trace());
  CHECK(full.model.encoders.size() == 2);
}

TEST_CASE("simulate: every strategy places every example; none moves nothing; "
          "strategies agree where they must") {
  const auto t = small_trace();
  const auto config = small_config();
  int calls = 0;
  const auto r =
      orch_bench::simulate(t, orch_bench::default_model(), config, [&](int done, int total) {
        ++calls;
        CHECK(done <= total);
      });
  CHECK(calls == config.steps * 4);
  REQUIRE(r.strategies.size() == 4);
  REQUIRE(r.phase_names == std::vector<std::string>{"vision", "audio", "llm"});
  const auto& none = r.strategies[0];
  const auto& llm_only = r.strategies[1];
  const auto& per_phase = r.strategies[2];
  const auto& orch = r.strategies[3];
  CHECK(none.name == "none");
  CHECK(orch.name == "orch");

  const double total_bytes = none.bytes.self + none.bytes.intra_node + none.bytes.inter_node;
  CHECK(total_bytes > 0.0);
  for (const auto& s : r.strategies) {
    CAPTURE(s.name);
    CHECK(s.sampled_examples == config.steps * config.ranks * config.examples_per_rank);
    CHECK(s.placed_examples == s.sampled_examples);
    CHECK(s.placed_media == s.sampled_media);
    CHECK(s.sampled_media > 0);
    CHECK(s.step_time_s == doctest::Approx(s.compute_s + s.exchange_s));
    CHECK(s.idle_fraction >= 0.0);
    CHECK(s.idle_fraction < 1.0);
    CHECK(s.plan_ms >= 0.0);
    // The payload is the same whichever way it is routed.
    CHECK(s.bytes.self + s.bytes.intra_node + s.bytes.inter_node == doctest::Approx(total_bytes));
    CHECK(s.bytes.inter_node_lower_bound <= s.bytes.inter_node + 0.5);
    REQUIRE(s.phases.size() == 3);
    for (const auto& p : s.phases) {
      CAPTURE(p.name);
      CHECK(p.max_over_mean >= 1.0 - 1e-12);
      CHECK(p.max_over_lower_bound >= 1.0 - 1e-12);
      CHECK(p.max_over_mean >= p.max_over_lower_bound - 1e-12);
    }
  }
  // none: nothing leaves its rank, no exchange time, speed-up 1.
  CHECK(none.bytes.intra_node == 0.0);
  CHECK(none.bytes.inter_node == 0.0);
  CHECK(none.exchange_s == 0.0);
  CHECK(none.feature_bytes_direct == 0.0);
  CHECK(none.speedup_vs_none == doctest::Approx(1.0));
  // llm_only and per_phase balance the LLM with the same partition: the same loads. orch
  // places the LLM near the owners within 0.1 % of the lower bound of that partition's
  // largest load (orch::locality_options::slack_ppm), so its max/mean is at most 0.1 %
  // higher; its encoders map per_phase's bins onto other ranks: the same balance.
  CHECK(llm_only.phases[2].max_over_mean == doctest::Approx(per_phase.phases[2].max_over_mean));
  CHECK(orch.phases[2].max_over_mean <= per_phase.phases[2].max_over_mean * 1.001 + 1e-12);
  for (std::size_t p = 0; p < 2; ++p) {
    CHECK(orch.phases[p].max_over_mean == doctest::Approx(per_phase.phases[p].max_over_mean));
  }
  // Balanced phases are within LPT's 4/3 of the lower bound (orch's LLM: plus its slack).
  for (const auto* s : {&per_phase, &orch}) {
    for (const auto& p : s->phases) {
      CAPTURE(p.name);
      CHECK(p.max_over_lower_bound <= 4.0 / 3.0 + 0.001 + 1e-9);
    }
  }
  // Balancing beats the sampled layout in the LLM phase and in the modelled step.
  CHECK(per_phase.phases[2].max_over_mean < none.phases[2].max_over_mean);
  CHECK(orch.speedup_vs_none > 1.0);
  // One CSV row per step and strategy, plus the header.
  std::ostringstream csv;
  orch_bench::write_csv(csv, r);
  const auto text = csv.str();
  CHECK(std::count(text.begin(), text.end(), '\n') == 1 + config.steps * 4);
  CHECK(text.rfind("step,strategy,step_time_s,compute_s,exchange_s,idle_fraction,plan_ms,"
                   "vision_max_over_mean,",
                   0) == 0);
}

TEST_CASE("simulate is deterministic in everything but the plan time") {
  const auto t = small_trace();
  auto config = small_config();
  config.strategies = {orch::strategy::orch, orch::strategy::llm_only};
  const auto a = orch_bench::simulate(t, orch_bench::default_model(), config);
  const auto b = orch_bench::simulate(t, orch_bench::default_model(), config);
  REQUIRE(a.strategies.size() == 2);
  CHECK(a.strategies[0].name == "orch"); // reported in the order asked
  CHECK(a.strategies[1].name == "llm_only");
  REQUIRE(a.steps.size() == b.steps.size());
  CHECK(a.steps.size() == 8); // none ran as the baseline but is not reported
  for (std::size_t i = 0; i < a.steps.size(); ++i) {
    CHECK(a.steps[i].plan_hash == b.steps[i].plan_hash);
    CHECK(a.steps[i].step_time_s == b.steps[i].step_time_s);
  }
  CHECK(a.strategies[0].speedup_vs_none > 0.0);
}

TEST_CASE("simulate --json shape: config and per-strategy keys") {
  const auto r = orch_bench::simulate(small_trace(), orch_bench::default_model(), small_config());
  const auto j = orch_bench::to_json(r);
  REQUIRE(j.is_object());
  CHECK(j.size() == 2);
  const auto& c = j.at("config");
  for (const char* key : {"trace", "model", "ranks", "ranks_per_node", "examples_per_rank", "steps",
                          "seed", "strategies", "achieved_flops", "nvlink_bytes_per_s",
                          "network_bytes_per_s", "cost_unit_flops", "backward_factor"}) {
    CAPTURE(key);
    CHECK(c.contains(key));
  }
  CHECK(c.at("ranks") == 8);
  const auto& s = j.at("strategies");
  REQUIRE(s.is_array());
  REQUIRE(s.size() == 4);
  std::vector<std::string> names;
  for (const auto& x : s) {
    names.push_back(x.at("name").get<std::string>());
    for (const char* key : {"step_time_s", "speedup_vs_none", "idle_fraction", "plan_ms"}) {
      CAPTURE(key);
      CHECK(x.at(key).is_number());
    }
    REQUIRE(x.at("phases").is_array());
    REQUIRE(x.at("phases").size() == 3);
    for (const auto& p : x.at("phases")) {
      CHECK(p.at("name").is_string());
      CHECK(p.at("max_over_mean").is_number());
      CHECK(p.at("max_over_lower_bound").is_number());
    }
    CHECK(x.at("phases")[2].at("name") == "llm");
    for (const char* key : {"self", "intra_node", "inter_node", "inter_node_lower_bound"}) {
      CAPTURE(key);
      CHECK(x.at("bytes").at(key).is_number());
    }
  }
  CHECK(names == std::vector<std::string>{"none", "llm_only", "per_phase", "orch"});
}
