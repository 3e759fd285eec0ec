// SPDX-License-Identifier: Apache-2.0
/// Forwarding header (old path, kept for one release): orch/orchestrate/model.hpp.
#pragma once

#include <orch/orchestrate/model.hpp>
