// SPDX-License-Identifier: Apache-2.0
/// The arrays behind an exchange plan (orch/exchange/plan.hpp), in a header of their own so that
/// the builders (detail/exchange/plan_pairs.hpp) need not include the plan class.
#pragma once

#include <orch/exchange/layout.hpp>
#include <orch/types.hpp>

#include <cstdint>
#include <memory>
#include <vector>

namespace orch::detail {

/// The arrays of an exchange plan; immutable once built and shared between copies.
struct plan_data {
  layout from;
  layout to;
  std::shared_ptr<const std::vector<bytes_t>> bytes = std::make_shared<std::vector<bytes_t>>();
  bytes_t total = 0;
  std::vector<bytes_t> source_total{0}; // per rank
  std::vector<bytes_t> destination_total{0};
  std::vector<bytes_t> self{0};
  // Communicating pairs, CSR by source rank, destinations ascending.
  std::vector<index_t> pair_first{0, 0};
  std::vector<rank_t> pair_peer;
  std::vector<index_t> pair_items;
  std::vector<bytes_t> pair_bytes;
  // hash() of the plan when the builder computed it alongside the pass over the items (it
  // runs in the shadow of that pass); computed on request otherwise.
  bool hash_known = false;
  std::uint64_t hash = 0;
};

} // namespace orch::detail
