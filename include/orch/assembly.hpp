// SPDX-License-Identifier: Apache-2.0
/// Forwarding header (old path, kept for one release): orch/orchestrate/assembly.hpp.
#pragma once

#include <orch/orchestrate/assembly.hpp>
