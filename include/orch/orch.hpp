// SPDX-License-Identifier: Apache-2.0
/// Umbrella header for the whole orch core: the item table and its metadata all-gather, the
/// model and its presets, orchestrate and the step plan, partitioners, placement, layouts,
/// plans, schedules, the reference executor, the backend-neutral exchange core (transport/) and
/// the payload helpers. It never includes the CUDA or MPI modules, nor orch/calibrate.hpp (which
/// needs Eigen).
#pragma once

#include <orch/assembly.hpp>
#include <orch/config.hpp>
#include <orch/cost.hpp>
#include <orch/exchange.hpp>
#include <orch/item_table.hpp>
#include <orch/layout.hpp>
#include <orch/locality.hpp>
#include <orch/locality_options.hpp>
#include <orch/media_chunks.hpp>
#include <orch/metadata.hpp>
#include <orch/model.hpp>
#include <orch/model_presets.hpp>
#include <orch/orchestrate.hpp>
#include <orch/orchestrate/build_assembly.hpp>
#include <orch/partition/algorithm.hpp>
#include <orch/partition/bin_order.hpp>
#include <orch/partition/bounds.hpp>
#include <orch/partition/budget.hpp>
#include <orch/partition/constraints.hpp>
#include <orch/partition/exact.hpp>
#include <orch/partition/groups.hpp>
#include <orch/partition/improver.hpp>
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
#include <orch/partition/result.hpp>
#include <orch/partition/subset_sum.hpp>
#include <orch/payload.hpp>
#include <orch/placement/bounds.hpp>
#include <orch/placement/engine.hpp>
#include <orch/placement/rearrange.hpp>
#include <orch/placement/traffic.hpp>
#include <orch/plan.hpp>
#include <orch/quality.hpp>
#include <orch/row_exchange.hpp>
#include <orch/schedule.hpp>
#include <orch/step_plan.hpp>
#include <orch/strategy.hpp>
#include <orch/topology.hpp>
#include <orch/traffic.hpp>
#include <orch/transport/copy_list.hpp>
#include <orch/transport/errors.hpp>
#include <orch/transport/hash_agreement.hpp>
#include <orch/transport/program.hpp>
#include <orch/transport/routes.hpp>
#include <orch/transport/transfers.hpp>
#include <orch/transport/watchdog.hpp>
#include <orch/transport/workspace.hpp>
#include <orch/types.hpp>
