// SPDX-License-Identifier: Apache-2.0
/// Radix sorts: items by cost (descending, ties by index), and packed 64-bit keys.
#pragma once

#include <orch/config.hpp>
#include <orch/types.hpp>

#include <algorithm>
#include <array>
#include <cstddef>
#include <cstdint>
#include <span>
#include <vector>

namespace orch::detail {

/// Item indices ordered by cost descending, then index ascending (the tie-break every orch
/// partitioner uses). Non-negative costs only (callers validate).
///
/// Why radix: the order is the hot part of LPT-like algorithms; a stable 8-bit LSD radix
/// sort over the complemented cost touches each item once per significant byte, skips bytes
/// that are equal for all items, and needs no comparison callbacks. Stability keeps ties in
/// index order, which makes the order total. orch::detail::visit_desc (partition/order.hpp)
/// uses it for costs spanning 2^32 or more, where its packed keys do not fit.
/// Complexity: O(n · significant bytes of max cost).
[[nodiscard]] inline std::vector<std::uint32_t> order_desc_wide(std::span<const cost_t> costs) {
  const std::size_t n = costs.size();
  struct entry {
    std::uint64_t key; // ~cost: ascending key order is descending cost
    std::uint32_t index;
  };
  std::vector<entry> a(n);
  std::vector<entry> b(n);
  std::uint64_t all_or = 0;
  std::uint64_t all_and = ~std::uint64_t{0};
  for (std::size_t i = 0; i < n; ++i) {
    const auto key = ~static_cast<std::uint64_t>(costs[i]);
    a[i] = {key, static_cast<std::uint32_t>(i)};
    all_or |= key;
    all_and &= key;
  }
  const std::uint64_t varying = all_or ^ all_and; // bits that differ between some items
  for (int shift = 0; shift < 64; shift += 8) {
    if (((varying >> shift) & 0xffu) == 0) {
      continue; // this byte is equal for all items: the pass would not move anything
    }
    std::array<std::size_t, 257> count{};
    for (const auto& e : a) {
      ++count[((e.key >> shift) & 0xffu) + 1];
    }
    for (std::size_t d = 0; d < 256; ++d) {
      count[d + 1] += count[d];
    }
    for (const auto& e : a) {
      b[count[(e.key >> shift) & 0xffu]++] = e;
    }
    a.swap(b);
  }
  std::vector<std::uint32_t> order(n);
  for (std::size_t i = 0; i < n; ++i) {
    order[i] = a[i].index;
  }
  return order;
}

/// Sorts `keys` ascending; `scratch` is grown to keys.size() when needed (callers keep it
/// across calls, so a sort allocates nothing once it has grown).
///
/// `sorted_bits` (0 to 63): the caller's promise that `keys` already ascend in their low
/// `sorted_bits` bits (as keys packed as `value << b | position`, written in position order,
/// do for b = sorted_bits). The passes then start at that bit: each pass is stable, so keys
/// equal above it keep their input order, which is their order below it. For such keys this
/// skips the one or two passes over the position bits (the lowest byte always varies there).
///
/// Why radix: callers sort a few hundred packed keys (a cost shifted left, an index below it)
/// at a time, thousands of times per plan; comparison sorts mispredict about a branch per
/// comparison on such data. An 8-bit LSD pass per byte that differs between keys costs
/// O(n + 256) without branches on the data. Small inputs, where the 256-entry counts
/// dominate, use std::sort. The result is the same either way: keys are plain integers.
/// Complexity: O(n · varying bytes + 256 · varying bytes), at most 8 passes.
inline void sort_keys(std::span<std::uint64_t> keys, std::vector<std::uint64_t>& scratch,
                      int sorted_bits = 0) {
  ORCH_ASSERT(sorted_bits >= 0 && sorted_bits < 64); // every caller's promise, checked
  const std::size_t n = keys.size();
  if (n < 64) {
    std::sort(keys.begin(), keys.end());
    return;
  }
  if (scratch.size() < n) {
    scratch.resize(n);
  }
  std::uint64_t all_or = 0;
  std::uint64_t all_and = ~std::uint64_t{0};
  for (const std::uint64_t k : keys) {
    all_or |= k;
    all_and &= k;
  }
  const std::uint64_t varying = all_or ^ all_and;
  std::uint64_t* from = keys.data();
  std::uint64_t* to = scratch.data();
  for (int shift = sorted_bits; shift < 64; shift += 8) {
    if (((varying >> shift) & 0xffu) == 0) {
      continue; // equal in every key: the pass would not move anything
    }
    std::array<std::size_t, 256> count{};
    for (std::size_t i = 0; i < n; ++i) {
      ++count[(from[i] >> shift) & 0xffu];
    }
    std::size_t sum = 0;
    for (auto& c : count) {
      const std::size_t here = c;
      c = sum;
      sum += here;
    }
    for (std::size_t i = 0; i < n; ++i) {
      to[count[(from[i] >> shift) & 0xffu]++] = from[i];
    }
    std::swap(from, to);
  }
  if (from != keys.data()) {
    std::copy(from, from + n, keys.data());
  }
}

} // namespace orch::detail
