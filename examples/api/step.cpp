// SPDX-License-Identifier: Apache-2.0
// The trainer's path through one step, as docs/api quotes it: a model, the step's item table,
// orchestrate, and what a rank reads from the step plan (phases, exchanges, an encoder's
// layouts, chunks, the assembly map). 4 ranks on 2 nodes, 8 examples.
#include <orch/orchestrate/orchestrate.hpp>

#include <cstdio>
#include <string>
#include <vector>

namespace {

orch::model_description make_model() {
  // [doc:model]
  const orch::model_description model{
      .encoders = {{.name = "vision",
                    .fields = {"image"},
                    .cost = {.linear = 40, .quadratic = 1},
                    .output_divisor = 4, // 2×2 patch merge
                    .output_extra = 2,   // begin / end markers
                    .input_bytes_per_unit = 1176,
                    .feature_bytes_per_token = 2048},
                   {.name = "audio",
                    .fields = {{"audio", 3000}}, // 30-s windows of 3,000 frames
                    .cost = {.linear = 9, .quadratic = 1},
                    .output_divisor = 4,
                    .output_extra = 2,
                    .input_bytes_per_unit = 256,
                    .feature_bytes_per_token = 2048}},
      .llm = {.name = "llm", .cost = {.linear = 200, .quadratic = 1}, .text_bytes_per_token = 8}};
  // [/doc:model]
  return model;
}

orch::item_table make_table(const orch::model_description& model) {
  // [doc:table]
  // Every rank adds the same examples in the same order: rank 0's in local-index order, then
  // rank 1's, ... (what orch::table_from_metadata builds from the gathered metadata).
  orch::item_table table(model); // accepts only "image" and "audio"
  using media = std::vector<orch::media_spec>;
  table.add_example(0, 0, 300, media{{"image", 1024, 0}}); // image, then 300 text tokens
  table.add_example(0, 1, 120);
  table.add_example(1, 0, 80, media{{"audio", 7000, 40}}); // 7,000 frames: 3 windows
  table.add_example(1, 1, 200);
  table.add_example(2, 0, 900);
  table.add_example(2, 1, 60, media{{"image", 2304, 0}});
  table.add_example(3, 0, 50, media{{"image", 576, 0}, {"audio", 2400, 50}});
  table.add_example(3, 1, 400);
  // [/doc:table]
  return table;
}

} // namespace

int main() {
  const orch::model_description model = make_model();
  const orch::item_table table = make_table(model);

  // [doc:orchestrate]
  const auto topo = orch::topology::uniform(/*ranks=*/4, /*ranks_per_node=*/2);
  const orch::step_plan sp =
      orch::orchestrate(table, model, topo, {.strategy = orch::strategy::orch, .threads = 2});
  std::printf("plan %016llx: %zu phases, %zu exchanges\n", static_cast<unsigned long long>(sp.hash),
              sp.phases().size(), sp.exchanges().size());
  // [/doc:orchestrate]

  // [doc:phases]
  for (const orch::phase_result& ph : sp.phases()) {
    std::printf("%-6s %zu items, loads", ph.name.c_str(), ph.costs.size());
    for (const orch::cost_t load : ph.loads) {
      std::printf(" %lld", static_cast<long long>(load));
    }
    std::printf(", max/bound %.3f%s\n", ph.balance.max_over_lower_bound,
                ph.proven_optimal ? " (optimal)" : "");
  }
  // [/doc:phases]

  // [doc:exchanges]
  for (const orch::exchange_result& x : sp.exchanges()) {
    std::printf("%-15s %8lld bytes: self %lld, intra-node %lld, inter-node %lld\n", x.name.c_str(),
                static_cast<long long>(x.forward.total_bytes()),
                static_cast<long long>(x.bytes.self), static_cast<long long>(x.bytes.intra_node),
                static_cast<long long>(x.bytes.inter_node));
  }
  // [/doc:exchanges]

  // [doc:encoder]
  // Each rank's part of the audio encoder: which chunks it encodes, in which order, and
  // which LLM rank their features go to.
  const orch::encoder_step& audio = sp.encoder("audio");
  for (orch::rank_t r = 0; r < topo.ranks(); ++r) {
    for (const orch::index_t i : audio.phase.placement.items_on(r)) {
      const orch::index_t chunk = audio.phase.items[static_cast<std::size_t>(i)];
      std::printf("rank %d encodes audio item %lld = chunk %lld (media item %lld, frames "
                  "[%lld, +%lld)), features to rank %d\n",
                  r, static_cast<long long>(i), static_cast<long long>(chunk),
                  static_cast<long long>(sp.chunks.media_of(chunk)),
                  static_cast<long long>(sp.chunks.offset(chunk)),
                  static_cast<long long>(sp.chunks.length(chunk, table)),
                  audio.feature_layout.rank_of(i));
    }
  }
  // [/doc:encoder]

  // [doc:assembly]
  // Rank 0's LLM sequences, as copies from its text buffer and its feature buffers.
  for (const orch::assembly_segment& s : sp.assembly.on_rank(0)) {
    const std::string from = s.source == orch::text_source
                                 ? std::string("text")
                                 : sp.encoders[static_cast<std::size_t>(s.source)].phase.name;
    std::printf("rank 0 sequence [%lld, +%lld) <- %s [%lld, ...) of example %lld\n",
                static_cast<long long>(s.target_token), static_cast<long long>(s.tokens),
                from.c_str(), static_cast<long long>(s.source_token),
                static_cast<long long>(s.example));
  }
  // [/doc:assembly]

  // [doc:lookup]
  try {
    static_cast<void>(sp.exchange("video.inputs"));
  } catch (const orch::invalid_argument& e) {
    std::printf("%s\n", e.what());
  }
  // [/doc:lookup]
  return 0;
}
