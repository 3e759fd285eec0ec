// SPDX-License-Identifier: Apache-2.0
// The peer balancers of bench/peers/, for orch-bench's commands and the bench_tool tests
// (which see this directory on their include path, not bench/).
#pragma once

#include "../peers/peers.hpp"
