// SPDX-License-Identifier: Apache-2.0
// The determinism matrix's corpus: ≥ 200 seeded orchestrate steps and ≥ 200 partition
// instances, generated from the case number by splitmix64 and integer arithmetic only, so that
// python/tests/test_determinism.py can generate the identical inputs (it mirrors this file line
// by line; docs/determinism.md states the recipe). Change both together, then regenerate the
// golden file.
#pragma once

#include <orch/orch.hpp>

#include <array>
#include <cstdint>
#include <string>
#include <vector>

namespace orch::determinism {

/// splitmix64 (Steele, Lea, Flood 2014): a fully specified 64-bit generator.
class splitmix64 {
public:
  explicit splitmix64(std::uint64_t seed) : state_(seed) {}
  std::uint64_t next() {
    state_ += 0x9E3779B97F4A7C15ULL;
    std::uint64_t z = state_;
    z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ULL;
    z = (z ^ (z >> 27)) * 0x94D049BB133111EBULL;
    return z ^ (z >> 31);
  }
  /// lo + next() mod (hi − lo + 1), lo ≤ hi. The modulo bias is irrelevant: only the inputs
  /// come from here, and both languages compute the same value.
  std::int64_t uniform(std::int64_t lo, std::int64_t hi) {
    return lo + static_cast<std::int64_t>(next() % static_cast<std::uint64_t>(hi - lo + 1));
  }

private:
  std::uint64_t state_;
};

/// Word hash of a partition result (FNV-1a over 64-bit words, then splitmix64's finaliser).
class word_hash {
public:
  void add(std::int64_t v) { h_ = (h_ ^ static_cast<std::uint64_t>(v)) * 0x100000001B3ULL; }
  [[nodiscard]] std::uint64_t value() const {
    std::uint64_t z = h_;
    z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ULL;
    z = (z ^ (z >> 27)) * 0x94D049BB133111EBULL;
    return z ^ (z >> 31);
  }

private:
  std::uint64_t h_ = 0xCBF29CE484222325ULL;
};

inline constexpr int step_cases = 240;
inline constexpr int partition_cases = 240;

/// The three models of the step cases: 0 vision (image, video) + chunked audio (64 frames),
/// 1 vision over images only, 2 text only.
inline model_description step_model(int id) {
  model_description m;
  if (id == 0) {
    encoder_model vision;
    vision.name = "vision";
    vision.fields = {"image", "video"};
    vision.cost = {.linear = 3, .quadratic = 1, .per_item = 2};
    vision.output_divisor = 4;
    vision.output_extra = 1;
    vision.input_bytes_per_unit = 3;
    vision.feature_bytes_per_token = 5;
    encoder_model audio;
    audio.name = "audio";
    audio.fields = {{"audio", 64}};
    audio.cost = {.linear = 2, .quadratic = 0, .per_item = 1};
    audio.output_divisor = 2;
    audio.output_extra = 2;
    audio.input_bytes_per_unit = 2;
    audio.feature_bytes_per_token = 7;
    m.encoders = {vision, audio};
    m.llm.cost = {.linear = 16, .quadratic = 1, .per_item = 0};
    m.llm.text_bytes_per_token = 2;
  } else if (id == 1) {
    encoder_model vision;
    vision.name = "vision";
    vision.fields = {"image"};
    vision.cost = {.linear = 1, .quadratic = 0, .per_item = 5};
    vision.input_bytes_per_unit = 4;
    vision.feature_bytes_per_token = 4;
    m.encoders = {vision};
    m.llm.cost = {.linear = 1, .quadratic = 0, .per_item = 0};
    m.llm.text_bytes_per_token = 8;
  } else {
    m.llm.cost = {.linear = 4, .quadratic = 1, .per_item = 1};
  }
  return m;
}

/// One step case: the table as columns, the model, the topology and the options.
struct step_case {
  int model = 0;
  std::vector<rank_t> node_of_rank;
  std::vector<std::string> field_names;
  std::vector<rank_t> owner;
  std::vector<index_t> local_index;
  std::vector<length_t> text;
  std::vector<index_t> media_example;
  std::vector<std::int32_t> media_field;
  std::vector<length_t> media_length;
  std::vector<length_t> media_position;
  strategy strat = strategy::orch;
  int option_set = 0; ///< 0 default, 1 LLM limits, 2 groups + lpt+ls, 3 kk, small budget, no slack
  index_t max_examples_per_rank = 0;
  length_t max_tokens_per_rank = 0;
  std::vector<index_t> groups;
};

/// Step case i ∈ [0, step_cases). kind = i mod 5: 0 mixed, 1 no media, 2 many media,
/// 3 chunked audio, 4 mostly empty ranks (case 4 mod 40: every rank empty). Every 40th case
/// (i mod 40 = 39) is large: 256, 1,024 or 2,560 ranks.
inline step_case make_step_case(int i) {
  splitmix64 rng(1000 + static_cast<std::uint64_t>(i));
  step_case c;
  const int kind = i % 5;
  c.strat = all_strategies[static_cast<std::size_t>((i / 5) % 4)];
  c.model = (i / 20) % 3;
  c.option_set = (i / 60) % 4;
  constexpr std::array<rank_t, 10> small{1, 2, 3, 4, 6, 8, 12, 16, 32, 64};
  constexpr std::array<rank_t, 3> large{256, 1024, 2560};
  const bool is_large = i % 40 == 39;
  const rank_t ranks = is_large ? large[static_cast<std::size_t>((i / 40) % 3)]
                                : small[static_cast<std::size_t>(rng.uniform(0, 9))];
  const auto per_node = static_cast<rank_t>(rng.uniform(1, 8));
  for (rank_t r = 0; r < ranks; ++r) {
    c.node_of_rank.push_back(r / per_node);
  }
  if (c.model == 0) {
    c.field_names = {"image", "video", "audio"};
  } else if (c.model == 1) {
    c.field_names = {"image"};
  }
  const auto fields = static_cast<std::int64_t>(c.field_names.size());
  const bool all_empty = i % 40 == 4;
  for (rank_t r = 0; r < ranks; ++r) {
    std::int64_t count = 0;
    if (kind == 4) {
      const std::int64_t keep = rng.uniform(0, 2);
      count = keep == 0 ? rng.uniform(0, 6) : 0;
    } else {
      count = rng.uniform(0, 6);
    }
    if (all_empty) {
      count = 0;
    }
    const bool reversed = (r + i) % 3 == 0;
    for (std::int64_t j = 0; j < count; ++j) {
      const auto example = static_cast<index_t>(c.owner.size());
      c.owner.push_back(r);
      c.local_index.push_back(reversed ? count - 1 - j : j);
      const length_t text = kind == 2 ? rng.uniform(0, 40) : rng.uniform(0, 200);
      c.text.push_back(text);
      std::int64_t n_media = 0;
      if (fields > 0 && kind != 1) {
        n_media = kind == 2 ? rng.uniform(3, 8) : rng.uniform(0, 2);
      }
      length_t position = 0;
      for (std::int64_t m = 0; m < n_media; ++m) {
        position = rng.uniform(position, text);
        const auto f = static_cast<std::int32_t>(rng.uniform(0, fields - 1));
        length_t length = 0;
        if (kind == 3 && c.field_names[static_cast<std::size_t>(f)] == "audio") {
          length = rng.uniform(1, 600);
        } else {
          const std::int64_t zero = rng.uniform(0, 3);
          length = zero == 0 ? 0 : rng.uniform(1, 120);
        }
        c.media_example.push_back(example);
        c.media_field.push_back(f);
        c.media_length.push_back(length);
        c.media_position.push_back(position);
      }
    }
  }
  const auto n = static_cast<std::int64_t>(c.owner.size());
  if (c.option_set == 1) {
    c.max_examples_per_rank = (n + ranks - 1) / ranks + 1;
    c.max_tokens_per_rank = rng.uniform(1000, 6000);
  } else if (c.option_set == 2) {
    for (std::int64_t e = 0; e < n; ++e) {
      const std::int64_t alone = rng.uniform(0, 2);
      c.groups.push_back(alone == 0 ? no_group : e / 3);
    }
  }
  return c;
}

/// One partition case: costs, bins and options (the spans point into the case).
struct partition_case {
  std::vector<cost_t> costs;
  rank_t bins = 1;
  partition_algorithm algorithm = partition_algorithm::automatic;
  std::int64_t work_budget = 0;
  index_t max_items_per_bin = 0;
  bool equal_counts = false;
  std::vector<cost_t> second_resource;
  cost_t second_capacity = 0;
  std::vector<cost_t> speeds;
  std::vector<index_t> groups;
};

/// Partition case j ∈ [0, partition_cases): algorithm j mod 7, costs by (j / 7) mod 4 (uniform,
/// bimodal, a quarter zeros, equal with one giant), constraints by (j / 28) mod 5 for the
/// algorithms that take them (none + groups on odd j, items per bin, equal counts, a second
/// resource, speeds); every 20th case large (500–3,000 items, 8–128 bins).
inline partition_case make_partition_case(int j) {
  splitmix64 rng(2000 + static_cast<std::uint64_t>(j));
  partition_case c;
  constexpr std::array<partition_algorithm, 7> algorithms{
      partition_algorithm::automatic, partition_algorithm::lpt,
      partition_algorithm::lpt_ls,    partition_algorithm::kk,
      partition_algorithm::multifit,  partition_algorithm::subset_sum,
      partition_algorithm::exact};
  constexpr std::array<std::int64_t, 3> budgets{2000, 20000, 100000};
  c.algorithm = algorithms[static_cast<std::size_t>(j % 7)];
  c.work_budget = budgets[static_cast<std::size_t>((j / 7) % 3)];
  const bool is_large = j % 20 == 19;
  const std::int64_t n = is_large ? rng.uniform(500, 3000) : rng.uniform(0, 40);
  c.bins = static_cast<rank_t>(is_large ? rng.uniform(8, 128) : rng.uniform(1, 12));
  const int dist = (j / 7) % 4;
  for (std::int64_t i = 0; i < n; ++i) {
    cost_t cost = 7;
    if (dist == 0) {
      cost = rng.uniform(1, 1000);
    } else if (dist == 1) {
      const std::int64_t big = rng.uniform(0, 3);
      cost = big == 0 ? rng.uniform(5000, 20000) : rng.uniform(1, 100);
    } else if (dist == 2) {
      const std::int64_t zero = rng.uniform(0, 3);
      cost = zero == 0 ? 0 : rng.uniform(1, 50);
    } else if (i == 0) {
      cost = 1000;
    }
    c.costs.push_back(cost);
  }
  const bool takes_constraints = j % 7 <= 2;
  const int constraint = (j / 28) % 5;
  if (takes_constraints) {
    if (constraint == 0 && j % 2 == 1) {
      for (std::int64_t i = 0; i < n; ++i) {
        const std::int64_t alone = rng.uniform(0, 2);
        c.groups.push_back(alone == 0 ? no_group : i / 2);
      }
    } else if (constraint == 1) {
      c.max_items_per_bin = (n + c.bins - 1) / c.bins + rng.uniform(0, 1);
      if (c.max_items_per_bin == 0) {
        c.max_items_per_bin = 1;
      }
    } else if (constraint == 2) {
      c.equal_counts = true;
    } else if (constraint == 3) {
      cost_t total = 0;
      for (std::int64_t i = 0; i < n; ++i) {
        c.second_resource.push_back(rng.uniform(1, 100));
        total += c.second_resource.back();
      }
      c.second_capacity = (total + c.bins - 1) / c.bins + rng.uniform(0, 200);
    } else if (constraint == 4) {
      for (rank_t b = 0; b < c.bins; ++b) {
        c.speeds.push_back(rng.uniform(1, 4));
      }
    }
  }
  return c;
}

} // namespace orch::determinism
