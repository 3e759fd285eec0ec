// SPDX-License-Identifier: Apache-2.0
/// Forwarding header (old path, kept for one release): orch/orchestrate/orchestrate.hpp.
#pragma once

#include <orch/orchestrate/orchestrate.hpp>
