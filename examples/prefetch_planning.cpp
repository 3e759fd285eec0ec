// SPDX-License-Identifier: Apache-2.0
// Plans need only metadata, so step t+1 can be planned on a background thread while step t
// runs. This program runs 4 steps of 16 ranks on 2 nodes: step t's exchanges execute (the
// in-process reference transport stands in for the GPUs) while std::async plans step t+1;
// each plan's hash is what ranks would compare before moving payload.
#include <orch/orch.hpp>

#include <cstdint>
#include <cstdio>
#include <future>
#include <random>
#include <vector>

namespace {

orch::model_description prefetch_model() {
  orch::model_description m;
  m.encoders.push_back({"vision", {"image"}, {1300, 2, 0}, 4, 0, 0, 64, 128});
  m.llm.cost = {14000, 1, 0};
  return m;
}

/// The metadata of step `step`: what every rank's sampler drew (seeded, so every rank
/// gathers the same table).
orch::item_table sample_step(int step, orch::rank_t ranks) {
  std::mt19937_64 rng(static_cast<std::uint64_t>(1000 + step));
  orch::item_table t;
  for (orch::rank_t r = 0; r < ranks; ++r) {
    for (orch::index_t i = 0; i < 8; ++i) {
      const auto text = static_cast<orch::length_t>(32 + rng() % 2000);
      std::vector<orch::media_spec> media;
      if (rng() % 2 == 0) {
        media.push_back({"image", static_cast<orch::length_t>(256 + rng() % 3000), 0});
      }
      t.add_example(r, i, text, media);
    }
  }
  return t;
}

/// Stands in for the step's GPU work: executes every forward exchange with zeroed payload.
orch::bytes_t run_step(const orch::step_plan& plan) {
  orch::bytes_t moved = 0;
  for (const orch::exchange_result& x : plan.exchanges()) {
    orch::rank_buffers source(static_cast<std::size_t>(x.forward.ranks()));
    for (orch::rank_t r = 0; r < x.forward.ranks(); ++r) {
      source[static_cast<std::size_t>(r)].resize(
          static_cast<std::size_t>(x.forward.source_bytes(r)));
    }
    const auto destination = orch::execute(x.forward, source);
    moved += x.bytes.intra_node + x.bytes.inter_node;
    static_cast<void>(destination);
  }
  return moved;
}

} // namespace

int main() {
  constexpr orch::rank_t ranks = 16;
  const auto topo = orch::topology::uniform(ranks, 8);
  const auto model = prefetch_model();
  auto plan_step = [&](int step) {
    return orch::orchestrate(sample_step(step, ranks), model, topo);
  };

  auto next = std::async(std::launch::async, plan_step, 0);
  for (int step = 0; step < 4; ++step) {
    const orch::step_plan current = next.get();
    if (step + 1 < 4) {
      next = std::async(std::launch::async, plan_step, step + 1); // overlaps run_step below
    }
    const orch::bytes_t moved = run_step(current);
    // The same metadata planned again (as another rank would) gives the same hash.
    const bool agree = plan_step(step).hash == current.hash;
    std::printf("step %d: plan %016llx, %s, llm max/bound %.4f, %lld bytes moved between GPUs\n",
                step, static_cast<unsigned long long>(current.hash),
                agree ? "ranks agree" : "RANKS DISAGREE", current.llm.balance.max_over_lower_bound,
                static_cast<long long>(moved));
  }
  return 0;
}
