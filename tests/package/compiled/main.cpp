// SPDX-License-Identifier: Apache-2.0
// A consumer of orch's compiled mode: plans a step through orch::compiled and checks that its
// TU saw the declaration of orch::orchestrate only, not the implementation behind it.
#include <orch/orchestrate/model_presets.hpp>
#include <orch/orchestrate/orchestrate.hpp>

#include <cstdio>
#include <vector>

#ifndef ORCH_COMPILED
#error "linking orch::compiled must define ORCH_COMPILED"
#endif

// Compiled mode keeps the partitioners, placers and orchestrate's internals out of this TU:
// each name below would clash with a function of orch (a compile error) had
// <orch/orchestrate/orchestrate.hpp> pulled in the header that declares it.
namespace orch {
[[maybe_unused]] constexpr int partition = 0;        // orch/partition/partition.hpp
[[maybe_unused]] constexpr int locality_balance = 0; // orch/locality.hpp
namespace detail {
[[maybe_unused]] constexpr int resolve_inputs = 0; // orch/detail/orchestrate/step_inputs.hpp
[[maybe_unused]] constexpr int balance_phase = 0;  // orch/detail/orchestrate/step_phases.hpp
[[maybe_unused]] constexpr int media_layouts_following =
    0; // orch/detail/orchestrate/step_layouts.hpp
} // namespace detail
} // namespace orch

int main() {
  const orch::model_description model = orch::model_preset("omni-7b");
  orch::item_table table(model);
  for (orch::rank_t r = 0; r < 4; ++r) {
    for (orch::index_t i = 0; i < 3; ++i) {
      std::vector<orch::media_spec> media;
      if ((r + i) % 2 == 0) {
        media.push_back({"image", 256 + 128 * r, 0});
      }
      table.add_example(r, i, 100 + 50 * i + 7 * r, media);
    }
  }
  const auto sp = orch::orchestrate(table, model, orch::topology::uniform(4, 2));
  if (sp.llm.placement.items() != 12 || sp.phases().size() != model.encoders.size() + 1 ||
      sp.hash == 0) {
    std::puts("orch compiled consumer: wrong step plan");
    return 1;
  }
  std::printf("orch::compiled: %zu phases, plan hash %016llx\n", sp.phases().size(),
              static_cast<unsigned long long>(sp.hash));
  return 0;
}
