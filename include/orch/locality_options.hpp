// SPDX-License-Identifier: Apache-2.0
/// Forwarding header (old path, kept for one release): orch/placement/options.hpp.
#pragma once

#include <orch/placement/options.hpp>
