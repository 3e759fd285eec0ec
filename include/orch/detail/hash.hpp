// SPDX-License-Identifier: Apache-2.0
/// Forwarding header (old path, kept for one release): orch/detail/primitives/hash.hpp.
#pragma once

#include <orch/detail/primitives/hash.hpp>
