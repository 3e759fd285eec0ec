// SPDX-License-Identifier: Apache-2.0
/// Locality, the placement stage: the node-wise rearrangement of balanced bins onto ranks
/// (orch/placement/rearrange.hpp), the bounds on bytes that must cross nodes
/// (orch/placement/bounds.hpp) and the placement engine behind locality_balance and
/// orchestrate's phases (orch/placement/engine.hpp), with traffic by class
/// (orch/placement/traffic.hpp). This header includes them all; it includes no plan header.
#pragma once

#include <orch/placement/bounds.hpp>
#include <orch/placement/engine.hpp>
#include <orch/placement/options.hpp>
#include <orch/placement/rearrange.hpp>
#include <orch/placement/result.hpp>
#include <orch/placement/traffic.hpp>
