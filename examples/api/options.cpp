// SPDX-License-Identifier: Apache-2.0
// orchestrate_options as docs/api quotes them: strategies, the partitioner options, per-rank
// LLM limits, and the errors for limits no placement meets and options orchestrate rejects.
// 4 ranks on 1 node; rank 0 sampled the long examples.
#include <orch/orchestrate/orchestrate.hpp>

#include <cstdio>
#include <string>
#include <vector>

namespace {

orch::item_table make_table(const orch::model_description& model) {
  orch::item_table table(model);
  const std::vector<orch::length_t> text{3000, 2500, 2000, 1800, 300, 200, 250, 100,
                                         400,  150,  350,  120,  90,  80,  60,  50};
  for (std::size_t x = 0; x < text.size(); ++x) {
    const auto owner = static_cast<orch::rank_t>(x / 4);
    const std::vector<orch::media_spec> media{{"image", x % 3 == 0 ? 1024 : 0, 0}};
    table.add_example(owner, static_cast<orch::index_t>(x % 4), text[x], media);
  }
  return table;
}

void print_llm(const char* what, const orch::step_plan& sp) {
  std::printf("%-28s llm max/bound %.3f, examples per rank", what,
              sp.llm.balance.max_over_lower_bound);
  for (orch::rank_t r = 0; r < sp.llm.placement.ranks(); ++r) {
    std::printf(" %lld", static_cast<long long>(sp.llm.placement.count_on(r)));
  }
  orch::length_t most = 0;
  for (orch::rank_t r = 0; r < sp.llm.placement.ranks(); ++r) {
    orch::length_t tokens = 0;
    for (const orch::index_t x : sp.llm.placement.items_on(r)) {
      tokens += sp.sequence_length[static_cast<std::size_t>(x)];
    }
    most = tokens > most ? tokens : most;
  }
  std::printf(", most LLM tokens on a rank %lld\n", static_cast<long long>(most));
}

} // namespace

int main() {
  const orch::model_description model{.encoders = {{.name = "vision",
                                                    .fields = {"image"},
                                                    .cost = {.linear = 40, .quadratic = 1},
                                                    .output_divisor = 4,
                                                    .input_bytes_per_unit = 1176,
                                                    .feature_bytes_per_token = 2048}},
                                      .llm = {.cost = {.linear = 200, .quadratic = 1}}};
  const orch::item_table table = make_table(model);
  const auto topo = orch::topology::uniform(4, 4);

  // [doc:strategies]
  for (const orch::strategy s : orch::all_strategies) {
    const auto sp = orch::orchestrate(table, model, topo, {.strategy = s});
    print_llm(std::string(orch::to_string(s)).c_str(), sp);
  }
  // [/doc:strategies]

  // [doc:options]
  orch::orchestrate_options options;
  options.strategy = orch::parse_strategy("orch"); // from a command line
  options.partition.algorithm = orch::partition_algorithm::automatic;
  options.partition.work_budget = 100'000;
  options.locality.slack_ppm = 1'000; // balance within 0.1 % of the lower bound
  options.llm = {.max_examples_per_rank = 5, .max_tokens_per_rank = 4'000};
  options.threads = 2;
  print_llm("orch, at most 5 x 4000", orch::orchestrate(table, model, topo, options));
  // [/doc:options]

  // [doc:groups]
  // Examples 2k and 2k + 1 (two responses to one prompt) share an LLM rank.
  std::vector<orch::index_t> prompt(16);
  for (std::size_t x = 0; x < prompt.size(); ++x) {
    prompt[x] = static_cast<orch::index_t>(x / 2);
  }
  orch::orchestrate_options grouped;
  grouped.llm.groups = prompt;
  const auto sp = orch::orchestrate(table, model, topo, grouped);
  std::printf("LLM rank of each example:");
  for (const orch::rank_t r : sp.llm.placement.rank_of_items()) {
    std::printf(" %d", r);
  }
  std::printf("\n");
  // [/doc:groups]

  // [doc:infeasible]
  options.llm = {.max_examples_per_rank = 0, .max_tokens_per_rank = 3'000};
  try {
    static_cast<void>(orch::orchestrate(table, model, topo, options));
  } catch (const orch::infeasible& e) {
    std::printf("%s\n", e.what());
  }
  // [/doc:infeasible]

  // [doc:rejected]
  orch::orchestrate_options bad;
  bad.partition.max_items_per_bin = 4; // a per-bin limit of every phase: not supported
  try {
    static_cast<void>(orch::orchestrate(table, model, topo, bad));
  } catch (const orch::invalid_argument& e) {
    std::printf("%s\n", e.what());
  }
  // [/doc:rejected]
  return 0;
}
