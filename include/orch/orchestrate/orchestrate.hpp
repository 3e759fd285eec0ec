// SPDX-License-Identifier: Apache-2.0
/// The MLLM global orchestrator: one balanced layout per phase (each encoder, the LLM), the
/// exchange plans between phases composed into single hops, their inverses, the assembly map.
///
/// Header-only by default: the definition (orch/detail/orchestrate/orchestrate_impl.hpp) is
/// included at the end, inline. In compiled mode (ORCH_COMPILED, set by linking orch::compiled)
/// this header only declares orchestrate(), the library defines it once, and a TU that includes
/// this header parses the step-plan types, not the partitioners and placers behind them.
#pragma once

#include <orch/config.hpp>
#include <orch/orchestrate/item_table.hpp>
#include <orch/orchestrate/model.hpp>
#include <orch/orchestrate/step_plan.hpp>
#include <orch/topology.hpp>

namespace orch {

/// Plans one training step: balances every phase per `options.strategy`, places the bins on
/// ranks, and builds the exchanges between phases, their inverses and the assembly map.
///
/// Phases: one per encoder (over its media chunks, cost `encoder.cost(length)`: an item
/// longer than its field's chunk_length is cut into chunks, each its own phase item, see
/// media_chunks), then the LLM (over examples, cost `llm.cost(text + Σ encoder outputs)`).
/// Exchanges: per encoder `<name>.inputs` (raw inputs, owner → encoder rank) and
/// `<name>.features` (encoder rank → LLM rank of the parent example, one hop), then `text`
/// (owner → LLM rank). Ranks without items in a phase take part in every exchange with zero
/// counts.
///
/// Under strategy::orch every phase keeps its items where they are unless balance needs them
/// elsewhere (detail::balance_phase): the LLM keeps examples on their owner, weighing each
/// one's text and feature bytes; then each encoder keeps items on their owner, weighing the
/// raw input plus, when the LLM kept the example there, the features. options.llm's per-rank
/// limits are honoured by every strategy (llm_limits).
///
/// The work runs as a graph of tasks, each starting once what it reads is done: the owner
/// layouts; the LLM phase (beside per_phase's encoder phases); then, once the LLM placement is
/// known, orch's encoder phases, the LLM-side feature layouts, the assembly and the text
/// exchange; each encoder's two exchanges as soon as its phase is placed. With
/// `options.threads` > 1 ready tasks run concurrently, and the result is the same.
/// Complexity: O(n log n) in the items plus the partitioner's budgeted search where one runs;
/// measured in docs/benchmarks.md ("Orchestrator": 2,560 ranks × 32 examples).
/// Determinism: a function of (table, model, topology, options) only — not of
/// options.threads or thread timing; `hash` lets ranks check.
/// Throws: orch::invalid_argument (a media field no encoder consumes — listing the model's
/// fields —, an encoder output above its limit, an inconsistent table or model, naming the
/// example by index, owner rank and local index; an option orchestrate cannot honour, naming
/// it), orch::infeasible (options.llm limits no placement meets, naming the limit),
/// orch::overflow (naming the phase and the example).
[[nodiscard]] ORCH_INLINE step_plan orchestrate(const item_table& user_table,
                                                const model_description& model,
                                                const topology& topo,
                                                const orchestrate_options& options = {});

} // namespace orch

// Last, so that the definition follows the declaration above (the pattern of fmt's
// format-inl.h); in compiled mode orch::compiled holds the definition instead.
#ifndef ORCH_COMPILED
#include <orch/detail/orchestrate/orchestrate_impl.hpp>
#endif
