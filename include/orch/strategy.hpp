// SPDX-License-Identifier: Apache-2.0
/// Forwarding header (old path, kept for one release): orch/orchestrate/strategy.hpp.
#pragma once

#include <orch/orchestrate/strategy.hpp>
