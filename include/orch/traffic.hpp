// SPDX-License-Identifier: Apache-2.0
/// Forwarding header (old path, kept for one release): traffic by locality class now lives in
/// orch/placement/traffic.hpp; measure_traffic of an exchange plan in orch/exchange/plan.hpp.
#pragma once

#include <orch/placement/traffic.hpp>
