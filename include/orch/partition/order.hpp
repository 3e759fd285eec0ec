// SPDX-License-Identifier: Apache-2.0
/// The order every partitioner starts from: items by cost descending, ties by index ascending.
#pragma once

#include <orch/config.hpp>
#include <orch/detail/primitives/radix_sort.hpp>
#include <orch/types.hpp>

#include <algorithm>
#include <array>
#include <bit>
#include <cstddef>
#include <cstdint>
#include <memory>
#include <span>
#include <vector>

namespace orch::detail {

/// Digits of visit_desc's radix sort: 11 bits, three of them cover a 32-bit key.
inline constexpr int radix_digit_bits = 11;
inline constexpr std::size_t radix_buckets = std::size_t{1} << radix_digit_bits;
using radix_counts = std::array<std::array<std::uint32_t, radix_buckets>, 3>;
/// Up to this many items visit_desc sorts the packed keys by comparison instead (measured with
/// callgrind and wall time: the radix sort's fixed cost pays off from about a thousand items).
inline constexpr std::size_t visit_desc_sort_max = 512;

/// Writes the packed keys ((hi − cost) << 32 | index) and counts the first `Passes` digits.
template <int Passes>
void fill_keys(std::span<const cost_t> costs, std::uint64_t hi, std::uint64_t* keys,
               radix_counts& count) {
  for (std::size_t i = 0; i < costs.size(); ++i) {
    const std::uint64_t key = hi - static_cast<std::uint64_t>(costs[i]);
    keys[i] = (key << 32) | i;
    for (int p = 0; p < Passes; ++p) {
      ++count[static_cast<std::size_t>(p)][(key >> (p * radix_digit_bits)) & (radix_buckets - 1)];
    }
  }
}

/// Calls `visit(index, cost)` for every item by cost descending, then index ascending (the
/// total tie-break of every orch partitioner). Non-negative costs, fewer than 2^32 items
/// (callers validate).
///
/// Why not just order_desc_wide (radix_sort.hpp): when the costs span less than 2^32 (max − min),
/// the key (max − cost) and the index pack into one 64-bit word, and an LSD radix sort needs passes
/// only over the bits of max − cost that vary (11-bit digits, all histograms counted in one
/// read). Input in index order plus a stable sort leaves ties in index order without sorting
/// the index bits. The visitor gets the cost from the key, so the caller's hot loop never
/// reads the cost array at random. Wider ranges fall back to order_desc_wide.
/// Up to visit_desc_sort_max items, the packed keys are sorted by comparison instead.
/// Complexity: O(n log n) up to visit_desc_sort_max items, else O(n · ⌈b / 11⌉ + 2^11), b the
/// bit width of max − min cost.
template <class Visit>
void visit_desc(std::span<const cost_t> costs, Visit&& visit) {
  const std::size_t n = costs.size();
  if (n == 0) {
    return;
  }
  const auto [lo_it, hi_it] = std::minmax_element(costs.begin(), costs.end());
  const auto range = static_cast<std::uint64_t>(*hi_it) - static_cast<std::uint64_t>(*lo_it);
  if (range >> 32 != 0) {
    for (const std::uint32_t i : order_desc_wide(costs)) {
      visit(i, costs[i]);
    }
    return;
  }
  const auto hi = static_cast<std::uint64_t>(*hi_it);
  if (n <= visit_desc_sort_max) {
    // Few items: the radix sort's fixed cost (clearing and summing 2^11 counters per pass)
    // dwarfs sorting the packed keys, which are distinct, so any sort gives the same order.
    std::array<std::uint64_t, visit_desc_sort_max> keys; // the first n are written below
    for (std::size_t i = 0; i < n; ++i) {
      keys[i] = ((hi - static_cast<std::uint64_t>(costs[i])) << 32) | i;
    }
    std::sort(keys.begin(), keys.begin() + static_cast<std::ptrdiff_t>(n));
    for (std::size_t i = 0; i < n; ++i) {
      visit(static_cast<std::uint32_t>(keys[i]), static_cast<cost_t>(hi - (keys[i] >> 32)));
    }
    return;
  }
  const auto bits = static_cast<int>(std::bit_width(range));
  const int passes = (bits + radix_digit_bits - 1) / radix_digit_bits;
  // Uninitialised buffers: every slot is written before it is read.
  auto a = std::make_unique_for_overwrite<std::uint64_t[]>(n);
  auto b = std::make_unique_for_overwrite<std::uint64_t[]>(passes > 0 ? n : 0);
  // Three digits of 11 bits cover the 32-bit key; counted in one pass over the input, with
  // the digit count a template argument so the counting loop is unrolled.
  // Only the histograms of the passes made are used, so only they are cleared.
  radix_counts count;
  for (int p = 0; p < passes; ++p) {
    count[static_cast<std::size_t>(p)].fill(0);
  }
  switch (passes) {
  case 0:
    fill_keys<0>(costs, hi, a.get(), count);
    break;
  case 1:
    fill_keys<1>(costs, hi, a.get(), count);
    break;
  case 2:
    fill_keys<2>(costs, hi, a.get(), count);
    break;
  default:
    fill_keys<3>(costs, hi, a.get(), count);
    break;
  }
  for (int p = 0; p < passes; ++p) {
    auto& c = count[static_cast<std::size_t>(p)];
    std::uint32_t sum = 0;
    for (auto& x : c) {
      const std::uint32_t here = x;
      x = sum;
      sum += here;
    }
    const int shift = 32 + p * radix_digit_bits;
    for (std::size_t i = 0; i < n; ++i) {
      const std::uint64_t e = a[i];
      b[c[(e >> shift) & (radix_buckets - 1)]++] = e;
    }
    a.swap(b);
  }
  for (std::size_t i = 0; i < n; ++i) {
    const std::uint64_t e = a[i];
    visit(static_cast<std::uint32_t>(e), static_cast<cost_t>(hi - (e >> 32)));
  }
}

/// Item indices by cost descending, then index ascending (see visit_desc).
/// Complexity: as visit_desc.
[[nodiscard]] inline std::vector<std::uint32_t> order_desc(std::span<const cost_t> costs) {
  std::vector<std::uint32_t> order;
  order.reserve(costs.size());
  visit_desc(costs, [&](std::uint32_t i, cost_t) { order.push_back(i); });
  return order;
}

} // namespace orch::detail

namespace orch {

/// Item indices by cost descending, ties by index ascending: the order every orch partitioner
/// starts from (a radix sort, several times faster than std::sort with a comparator), for
/// balancers built on orch's primitives.
/// Complexity: O(n) passes of a radix sort (see detail::visit_desc).
/// Throws: orch::invalid_argument (a negative cost, naming the item; 2^32 or more items).
[[nodiscard]] inline std::vector<std::uint32_t> order_by_cost_desc(std::span<const cost_t> costs) {
  if (costs.size() >= (std::size_t{1} << 32)) {
    throw_invalid_argument("order_by_cost_desc: at most 2^32 - 1 items, got ", costs.size());
  }
  for (std::size_t i = 0; i < costs.size(); ++i) {
    if (costs[i] < 0) {
      throw_invalid_argument("order_by_cost_desc: item ", i, " has negative cost ", costs[i]);
    }
  }
  return detail::order_desc(costs);
}

} // namespace orch
