// SPDX-License-Identifier: Apache-2.0
// Walks one training step of a three-phase MLLM (vision encoder, audio encoder, LLM) on 8
// ranks in 2 nodes: every rank sampled 4 examples; orch plans the step with each strategy and
// prints the per-phase balance and the bytes each exchange moves, by locality class.
#include <orch/orch.hpp>

#include <cstdio>
#include <string>
#include <vector>

namespace {

orch::model_description example_model() {
  orch::model_description m;
  // A ViT over 14-px patches with a 2×2 merge, raw patches of 14·14·3 bf16 bytes, features of
  // a 4096-wide LLM in bf16; an audio encoder over 100 frames/s (128 mel bins) pooling by 2.
  m.encoders.push_back({"vision", {"image"}, {1300, 2, 0}, 4, 0, 0, 14 * 14 * 3 * 2, 4096 * 2});
  m.encoders.push_back({"audio", {"audio"}, {1300, 1, 0}, 2, 0, 0, 128 * 2, 4096 * 2});
  m.llm.cost = {14000, 1, 0};
  m.llm.text_bytes_per_token = 8;
  return m;
}

/// 32 examples: text-only chat, image-text pairs, speech clips, and a few long mixed ones,
/// dealt to the ranks as a random sampler would (heavy ones clump on ranks 1, 2 and 6).
orch::item_table example_table() {
  struct row {
    orch::rank_t owner;
    orch::length_t text;
    orch::length_t image; // patches, 0 = none
    orch::length_t audio; // frames, 0 = none
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
    t.add_example(r.owner, next[static_cast<std::size_t>(r.owner)]++, r.text, media);
  }
  return t;
}

double mib(orch::bytes_t b) {
  return static_cast<double>(b) / (1024.0 * 1024.0);
}

} // namespace

int main() {
  const auto model = example_model();
  const auto table = example_table();
  const auto topo = orch::topology::uniform(8, 4);
  std::printf("one step: %lld examples, %lld media items, 8 ranks on 2 nodes\n\n",
              static_cast<long long>(table.examples()),
              static_cast<long long>(table.media_items()));
  for (const auto strat : orch::all_strategies) {
    orch::orchestrate_options options;
    options.strategy = strat;
    const auto sp = orch::orchestrate(table, model, topo, options);
    std::printf("strategy %s\n", std::string(orch::to_string(strat)).c_str());
    std::printf("  %-8s %10s %12s %8s\n", "phase", "max/mean", "max/bound", "idle");
    for (const orch::phase_result& ph : sp.phases()) {
      std::printf("  %-8s %10.3f %12.3f %7.1f%%\n", ph.name.c_str(), ph.balance.max_over_mean,
                  ph.balance.max_over_lower_bound, 100.0 * ph.balance.idle_fraction);
    }
    std::printf("  %-16s %10s %10s %10s  (MiB)\n", "exchange", "self", "intra", "inter");
    for (const orch::exchange_result& x : sp.exchanges()) {
      std::printf("  %-16s %10.2f %10.2f %10.2f\n", x.name.c_str(), mib(x.bytes.self),
                  mib(x.bytes.intra_node), mib(x.bytes.inter_node));
    }
    std::printf(
        "  features leaving their GPU: %.2f MiB direct, %.2f MiB if routed via the owner\n\n",
        mib(sp.feature_bytes_direct), mib(sp.feature_bytes_two_hop));
  }
  return 0;
}
