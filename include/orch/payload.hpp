// SPDX-License-Identifier: Apache-2.0
/// Forwarding header (old path, kept for one release): orch/exchange/payload.hpp.
#pragma once

#include <orch/exchange/payload.hpp>
