// SPDX-License-Identifier: Apache-2.0
/// The integer types orch uses for ranks, item indices, lengths, costs and bytes.
#pragma once

#include <cstdint>
#include <limits>

namespace orch {

/// A data-parallel rank, a bin of a partition, or a node. 2^31 ranks is far beyond any job.
using rank_t = std::int32_t;
/// An index into an item table or a position inside a rank's buffer.
using index_t = std::int64_t;
/// A length in the unit of its field (tokens, patches, frames). Never negative.
using length_t = std::int64_t;
/// Integer cost units: the only quantity that decides a partition. Never negative.
using cost_t = std::int64_t;
/// A byte count or byte offset. Never negative.
using bytes_t = std::int64_t;

/// Largest representable cost; sums of costs are checked against it.
inline constexpr cost_t max_cost = std::numeric_limits<cost_t>::max();

} // namespace orch
