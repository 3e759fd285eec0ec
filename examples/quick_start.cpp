// SPDX-License-Identifier: Apache-2.0
// README's "Using the library": the whole path of one step in a few lines, the reference
// executor standing in for the transport (MPI, NCCL, torch.distributed).
#include <orch/orch.hpp>

#include <cstdio>
#include <span>
#include <vector>

int main() {
  // [doc:quick_start]
  const auto model = orch::model_preset("omni-7b"); // ViT + Whisper-style audio + 7B LLM
  const auto topo = orch::topology::uniform(/*ranks=*/4, /*ranks_per_node=*/2);

  // 1. Each rank serialises its examples' lengths; all-gather the buffers (any transport).
  std::vector<std::vector<std::int64_t>> gathered;
  for (orch::rank_t r = 0; r < 4; ++r) {
    orch::local_batch batch;
    batch.add(/*text_tokens=*/300 + 500 * r);
    const orch::media_spec clip[] = {{"audio", /*frames=*/9000 * r, /*text_position=*/0}};
    batch.add(/*text_tokens=*/50, clip);
    gathered.push_back(batch.serialize(r));
  }
  // 2. Every rank builds the same table and plan (compare plan.hash across ranks).
  orch::item_table table(model);
  orch::append_metadata(table, gathered);
  const orch::step_plan plan = orch::orchestrate(table, model, topo);

  // 3. Move the text tokens (8 bytes each) owner → LLM rank: execute = pack, exchange, unpack
  // for every rank at once (a real rank packs and unpacks its own view(rank): docs/api).
  const orch::exchange_plan& text = plan.text.forward;
  orch::rank_buffers source(4); // rank r's text tokens, its examples in local-index order
  unsigned next = 0;
  for (orch::rank_t r = 0; r < 4; ++r) {
    for (orch::bytes_t b = 0; b < text.source_bytes(r); ++b) {
      source[static_cast<std::size_t>(r)].push_back(static_cast<std::byte>(next++ % 251));
    }
  }
  const orch::rank_buffers at_llm = orch::execute(text, source);
  // 4. Backward: gradients return along the inverse plan.
  const orch::rank_buffers back = orch::execute(plan.text.backward, at_llm);
  // [/doc:quick_start]
  std::printf("llm max/mean %.3f -> %.3f; audio chunks: %lld; round trip: %s\n",
              orch::orchestrate(table, model, topo, {.strategy = orch::strategy::none})
                  .llm.balance.max_over_mean,
              plan.llm.balance.max_over_mean,
              static_cast<long long>(plan.encoder("audio").phase.items.size()),
              back == source ? "exact" : "WRONG");
  return back == source ? 0 : 1;
}
