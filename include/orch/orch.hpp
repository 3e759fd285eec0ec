// SPDX-License-Identifier: Apache-2.0
/// Umbrella header for the orch core (never includes the CUDA module).
#pragma once

#include <orch/config.hpp>
#include <orch/cost.hpp>
#include <orch/exchange.hpp>
#include <orch/layout.hpp>
#include <orch/locality.hpp>
#include <orch/metadata.hpp>
#include <orch/partition/bounds.hpp>
#include <orch/partition/budget.hpp>
#include <orch/partition/constraints.hpp>
#include <orch/partition/exact.hpp>
#include <orch/partition/kk.hpp>
#include <orch/partition/local_search.hpp>
#include <orch/partition/lpt.hpp>
#include <orch/partition/lpt_speeds.hpp>
#include <orch/partition/microbatch.hpp>
#include <orch/partition/multifit.hpp>
#include <orch/partition/order.hpp>
#include <orch/partition/padded.hpp>
#include <orch/partition/partition.hpp>
#include <orch/partition/result.hpp>
#include <orch/partition/subset_sum.hpp>
#include <orch/payload.hpp>
#include <orch/plan.hpp>
#include <orch/quality.hpp>
#include <orch/schedule.hpp>
#include <orch/topology.hpp>
#include <orch/traffic.hpp>
#include <orch/types.hpp>
