// SPDX-License-Identifier: Apache-2.0
// Soak: many random steps through orchestrate and the reference executor, byte for byte
// (support/step_bytes.hpp), over random topologies (1-256 ranks, uneven nodes), models (0-4
// encoders, chunked fields), tables (empty ranks, media-heavy, long audio), strategies and
// options (LLM limits, groups, algorithms, budgets, threads 1-4). ORCH_SOAK_STEPS sets the
// number of steps (default 200; CI runs 1,000 under ASan, the full soak is 10,000: docs/limits.md),
// ORCH_SOAK_SEED the first seed.
#include <orch/orchestrate/orchestrate.hpp>

#include <support/generators.hpp>
#include <support/step_bytes.hpp>

#include <doctest/doctest.h>

#include <array>
#include <cstdint>
#include <cstdlib>
#include <random>
#include <string>
#include <vector>

namespace {

using orch::index_t;
using orch::length_t;
using orch::rank_t;
using orch::test::uniform_int;

std::int64_t env_or(const char* name, std::int64_t fallback) {
  const char* v = std::getenv(name);
  return v != nullptr && *v != '\0' ? std::strtoll(v, nullptr, 10) : fallback;
}

orch::model_description random_model(std::mt19937_64& rng) {
  orch::model_description m;
  constexpr std::array<const char*, 5> fields{"image", "video", "audio", "speech", "depth"};
  const auto encoders = uniform_int(rng, 0, 4);
  std::size_t next = 0;
  for (std::int64_t e = 0; e < encoders; ++e) {
    orch::encoder_model enc;
    enc.name = "enc" + std::to_string(e);
    const auto n_fields =
        e == encoders - 1 ? 5 - static_cast<std::int64_t>(next) : uniform_int(rng, 1, 2);
    for (std::int64_t f = 0; f < n_fields && next < fields.size(); ++f) {
      const length_t chunk = uniform_int(rng, 0, 2) == 0 ? uniform_int(rng, 8, 64) : 0;
      enc.fields.emplace_back(fields[next++], chunk);
    }
    if (enc.fields.empty()) {
      break;
    }
    enc.cost = {uniform_int(rng, 0, 5), uniform_int(rng, 0, 2), uniform_int(rng, 0, 3)};
    enc.output_divisor = uniform_int(rng, 1, 4);
    enc.output_extra = uniform_int(rng, 0, 2);
    enc.input_bytes_per_unit = uniform_int(rng, 0, 3);
    enc.feature_bytes_per_token = uniform_int(rng, 1, 6);
    m.encoders.push_back(enc);
  }
  m.llm.cost = {uniform_int(rng, 1, 16), uniform_int(rng, 0, 1), uniform_int(rng, 0, 2)};
  m.llm.text_bytes_per_token = uniform_int(rng, 1, 4);
  return m;
}

struct random_step {
  orch::model_description model;
  orch::item_table table;
  orch::topology topo;
  orch::orchestrate_options options;
  std::vector<index_t> groups;
};

random_step make_step(std::uint64_t seed) {
  std::mt19937_64 rng(seed);
  random_step s;
  s.model = random_model(rng);
  constexpr std::array<rank_t, 12> counts{1, 2, 3, 4, 5, 8, 12, 16, 24, 32, 64, 256};
  const rank_t ranks =
      counts[static_cast<std::size_t>(uniform_int(rng, 0, uniform_int(rng, 0, 9) == 0 ? 11 : 10))];
  const auto per_node = static_cast<rank_t>(uniform_int(rng, 1, 8));
  std::vector<rank_t> node_of(static_cast<std::size_t>(ranks));
  for (rank_t r = 0; r < ranks; ++r) {
    node_of[static_cast<std::size_t>(r)] = r / per_node;
  }
  s.topo = orch::topology::from_node_of_rank(node_of);
  std::vector<std::string> fields;
  for (const auto& e : s.model.encoders) {
    for (const auto& f : e.fields) {
      fields.push_back(f.name);
    }
  }
  const auto shape =
      uniform_int(rng, 0, 4); // 0 mixed, 1 text only, 2 media heavy, 3 sparse, 4 long media
  for (rank_t r = 0; r < ranks; ++r) {
    const auto count =
        shape == 3 && uniform_int(rng, 0, 2) != 0 ? 0 : uniform_int(rng, 0, ranks > 64 ? 3 : 6);
    for (std::int64_t j = 0; j < count; ++j) {
      const length_t text = uniform_int(rng, 0, 80);
      std::vector<orch::media_spec> media;
      const auto n_media = fields.empty() || shape == 1
                               ? 0
                               : uniform_int(rng, shape == 2 ? 2 : 0, shape == 2 ? 6 : 2);
      length_t position = 0;
      for (std::int64_t k = 0; k < n_media; ++k) {
        position = uniform_int(rng, position, text);
        const auto& f = fields[static_cast<std::size_t>(
            uniform_int(rng, 0, static_cast<std::int64_t>(fields.size()) - 1))];
        const length_t len = shape == 4                    ? uniform_int(rng, 1, 400)
                             : uniform_int(rng, 0, 3) == 0 ? 0
                                                           : uniform_int(rng, 1, 60);
        media.push_back({f, len, position});
      }
      s.table.add_example(r, count - 1 - j, text, media);
    }
  }
  auto& o = s.options;
  o.strategy = orch::all_strategies[static_cast<std::size_t>(uniform_int(rng, 0, 3))];
  o.threads = static_cast<int>(uniform_int(rng, 1, 4));
  o.partition.algorithm = static_cast<orch::partition_algorithm>(uniform_int(rng, 0, 6));
  o.partition.work_budget = uniform_int(rng, 0, 2) == 0 ? uniform_int(rng, 0, 5000) : 500'000;
  o.locality.slack_ppm = uniform_int(rng, 0, 3) == 0 ? uniform_int(rng, 0, 100'000) : 1000;
  const auto limits = uniform_int(rng, 0, 5);
  if (limits <= 2 && o.partition.algorithm > orch::partition_algorithm::lpt_ls) {
    // The LLM limits become partition constraints, which only auto, lpt and lpt+ls take:
    // orchestrate rejects the other algorithms then (invalid_argument from partition).
    o.partition.algorithm = orch::partition_algorithm::lpt_ls;
  }
  if (limits == 0) {
    o.llm.max_examples_per_rank = static_cast<index_t>(uniform_int(rng, 1, 8));
  } else if (limits == 1) {
    o.llm.max_tokens_per_rank = uniform_int(rng, 200, 3000);
  } else if (limits == 2) {
    s.groups.resize(static_cast<std::size_t>(s.table.examples()));
    for (auto& g : s.groups) {
      g = uniform_int(rng, 0, 2) == 0 ? orch::no_group
                                      : static_cast<index_t>(uniform_int(rng, 0, ranks));
    }
  }
  return s;
}

} // namespace

TEST_CASE("soak: random steps through orchestrate and the reference executor, byte for byte") {
  const std::int64_t steps = env_or("ORCH_SOAK_STEPS", 200);
  const auto first = static_cast<std::uint64_t>(env_or("ORCH_SOAK_SEED", 1));
  std::int64_t planned = 0;
  std::int64_t infeasible = 0;
  orch::bytes_t moved = 0;
  for (std::int64_t k = 0; k < steps; ++k) {
    const std::uint64_t seed = first + static_cast<std::uint64_t>(k);
    auto s = make_step(seed);
    s.options.llm.groups = s.groups;
    CAPTURE(seed);
    CAPTURE(s.topo.ranks());
    CAPTURE(s.table.examples());
    CAPTURE(orch::to_string(s.options.strategy));
    orch::step_plan sp;
    try {
      sp = orch::orchestrate(s.table, s.model, s.topo, s.options);
    } catch (const orch::infeasible&) {
      // Only the LLM limits can make a generated step infeasible.
      CHECK(s.options.llm.any());
      ++infeasible;
      continue;
    }
    ++planned;
    auto single = s.options;
    single.threads = 1;
    REQUIRE(orch::orchestrate(s.table, s.model, s.topo, single).hash == sp.hash);
    const auto report = orch::test::check_step_bytes(s.table, s.model, s.topo, sp);
    REQUIRE_MESSAGE(report.ok(), report.first_error);
    moved += report.bytes_moved;
  }
  MESSAGE(planned << " steps planned and moved byte for byte (" << moved << " bytes), "
                  << infeasible << " rejected as infeasible by their LLM limits");
  CHECK(planned > steps / 2);
}
