// SPDX-License-Identifier: Apache-2.0
/// Umbrella header for the orch core (never includes the CUDA module).
#pragma once

#include <orch/config.hpp>
#include <orch/cost.hpp>
#include <orch/partition/lpt.hpp>
#include <orch/partition/result.hpp>
#include <orch/quality.hpp>
#include <orch/types.hpp>
