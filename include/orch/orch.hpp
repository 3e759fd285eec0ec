// SPDX-License-Identifier: Apache-2.0
/// Umbrella header for the whole orch core, grouped by stage in the order a step runs through
/// them: partitioners, placement, layouts, plans, schedules, the reference executor and the
/// payload helpers, the backend-neutral exchange core (transport/), then the item table and its
/// metadata all-gather, the model and its presets, orchestrate and the step plan. It never
/// includes the CUDA or MPI modules, nor orch/calibrate.hpp (which needs Eigen).
#pragma once

// Vocabulary: types, configuration, topology, cost models and quality metrics.
#include <orch/config.hpp>
#include <orch/cost.hpp>
#include <orch/quality.hpp>
#include <orch/topology.hpp>
#include <orch/types.hpp>

// Partition: balancing item costs into bins.
#include <orch/partition/algorithm.hpp>
#include <orch/partition/bin_completion.hpp>
#include <orch/partition/bin_order.hpp>
#include <orch/partition/bounds.hpp>
#include <orch/partition/budget.hpp>
#include <orch/partition/constrained_lpt.hpp>
#include <orch/partition/constraints.hpp>
#include <orch/partition/exact.hpp>
#include <orch/partition/groups.hpp>
#include <orch/partition/improver.hpp>
#include <orch/partition/improver_lists.hpp>
#include <orch/partition/improver_repartition.hpp>
#include <orch/partition/improver_state.hpp>
#include <orch/partition/improver_steps.hpp>
#include <orch/partition/kk.hpp>
#include <orch/partition/local_search.hpp>
#include <orch/partition/lpt.hpp>
#include <orch/partition/lpt_speeds.hpp>
#include <orch/partition/microbatch.hpp>
#include <orch/partition/multifit.hpp>
#include <orch/partition/options.hpp>
#include <orch/partition/order.hpp>
#include <orch/partition/padded.hpp>
#include <orch/partition/partition.hpp>
#include <orch/partition/portfolio.hpp>
#include <orch/partition/result.hpp>
#include <orch/partition/subset_sum.hpp>

// Placement: bins onto ranks and nodes, the inter-node bounds (orch/locality.hpp: all of it).
#include <orch/locality.hpp>
#include <orch/placement/bounds.hpp>
#include <orch/placement/engine.hpp>
#include <orch/placement/options.hpp>
#include <orch/placement/rearrange.hpp>
#include <orch/placement/result.hpp>
#include <orch/placement/traffic.hpp>

// Exchange: layouts, plans, node-wise schedules, the reference executor, payload helpers.
#include <orch/exchange/execute.hpp>
#include <orch/exchange/item_offsets.hpp>
#include <orch/exchange/layout.hpp>
#include <orch/exchange/payload.hpp>
#include <orch/exchange/plan.hpp>
#include <orch/exchange/received_items.hpp>
#include <orch/exchange/row_exchange.hpp>
#include <orch/exchange/schedule.hpp>

// Transport: the backend-neutral exchange core the NCCL and MPI modules run.
#include <orch/transport/copy_list.hpp>
#include <orch/transport/errors.hpp>
#include <orch/transport/hash_agreement.hpp>
#include <orch/transport/program.hpp>
#include <orch/transport/routes.hpp>
#include <orch/transport/transfers.hpp>
#include <orch/transport/watchdog.hpp>
#include <orch/transport/workspace.hpp>

// Orchestrate: item table, model, metadata, the step plan and assembly.
#include <orch/orchestrate/assembly.hpp>
#include <orch/orchestrate/build_assembly.hpp>
#include <orch/orchestrate/item_table.hpp>
#include <orch/orchestrate/media_chunks.hpp>
#include <orch/orchestrate/metadata.hpp>
#include <orch/orchestrate/model.hpp>
#include <orch/orchestrate/model_presets.hpp>
#include <orch/orchestrate/orchestrate.hpp>
#include <orch/orchestrate/step_plan.hpp>
#include <orch/orchestrate/strategy.hpp>
