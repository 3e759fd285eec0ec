// SPDX-License-Identifier: Apache-2.0
/// Internals of orch/locality.hpp: the two greedy fillings of one rank's own items under the
/// target (largest first; most bytes per cost first) for the locality-first heuristic.
#pragma once

#include <orch/detail/placement/packing.hpp>
#include <orch/types.hpp>

#include <algorithm>
#include <bit>
#include <cstddef>
#include <cstdint>
#include <functional>
#include <limits>
#include <numeric>
#include <span>
#include <utility>
#include <vector>

namespace orch::detail {

/// The first n elements of `buffer`, grown when needed and never shrunk, so that writing
/// them costs no construction and no call per element.
template <class T>
[[nodiscard]] std::span<T> scratch_prefix(std::vector<T>& buffer, std::size_t n) {
  if (buffer.size() < n) {
    buffer.resize(n);
  }
  return {buffer.data(), n};
}

/// A node's items by slot (cost, bytes and item index side by side), as node_placer holds
/// them: grouped by current rank, by increasing item index within a rank.
struct slot_items {
  std::span<const cost_t> cost;
  std::span<const bytes_t> bytes;
  std::span<const std::size_t> index;

  /// Slot s as a node_item, for the orders of packing.hpp.
  [[nodiscard]] node_item record(std::size_t s) const { return {cost[s], bytes[s], index[s], s}; }
};

/// The greedy fillings of one rank: its items, the slots [begin, end) of a node, are taken in
/// an order and each is kept when it fits under the target. Both
/// mark the kept slots in `kept`, set `load` to the kept cost and return the kept bytes. Buffers
/// live across calls.
class rank_filler {
public:
  /// Largest first: packs_before order. Within a rank slots follow the item index, so the
  /// position in the rank breaks ties; when (cost, bytes, position) fit in 63 bits, one packed
  /// key per slot (larger cost, then more bytes, then lower position) has exactly that order
  /// and compares much faster than the records.
  /// Complexity: see fill().
  bytes_t largest_first(const slot_items& items, std::size_t begin, std::size_t end, cost_t target,
                        std::span<char> kept, cost_t& load) {
    cost_t max_cost = 0;
    bytes_t max_bytes = 0;
    for (std::size_t s = begin; s < end; ++s) {
      max_cost = std::max(max_cost, items.cost[s]);
      max_bytes = std::max(max_bytes, items.bytes[s]);
    }
    const auto pos_bits = std::bit_width(end - begin);
    const auto bytes_bits = std::bit_width(static_cast<std::uint64_t>(max_bytes));
    const auto cost_bits = std::bit_width(static_cast<std::uint64_t>(max_cost));
    if (cost_bits + bytes_bits + pos_bits > 63) {
      return fill_slots(
          items, begin, end,
          [&](std::size_t a, std::size_t b) {
            return packs_before(items.record(a), items.record(b));
          },
          target, kept, load);
    }
    const auto keys = scratch_prefix(keys_, end - begin);
    for (std::size_t s = begin; s < end; ++s) {
      keys[s - begin] = pack_order_key(items.cost[s], items.bytes[s], max_cost, max_bytes,
                                       static_cast<std::size_t>(bytes_bits))
                            << pos_bits |
                        (s - begin);
    }
    const std::uint64_t mask = (std::uint64_t{1} << pos_bits) - 1;
    return fill(
        keys, std::less<>{},
        [begin, mask](std::uint64_t k) { return begin + static_cast<std::size_t>(k & mask); },
        items, target, kept, load);
  }

  /// Most bytes per cost first: keeps_before order. Below 2^53 the double quotient bytes /
  /// cost is the correctly rounded ratio, so it never decreases as the exact ratio grows:
  /// different doubles order two items as the exact ratios do, and only equal doubles need the
  /// exact comparison (zero-cost items get +inf: they come first, among themselves by index,
  /// as keeps_before says).
  /// Complexity: see fill().
  bytes_t densest_first(const slot_items& items, std::size_t begin, std::size_t end, cost_t target,
                        std::span<char> kept, cost_t& load) {
    constexpr std::int64_t exact = std::int64_t{1} << 53;
    bool doubles = true;
    for (std::size_t s = begin; s < end; ++s) {
      doubles = doubles && items.cost[s] < exact && items.bytes[s] < exact;
    }
    if (!doubles) {
      return fill_slots(
          items, begin, end,
          [&](std::size_t a, std::size_t b) {
            return keeps_before(items.record(a), items.record(b));
          },
          target, kept, load);
    }
    const auto ratios = scratch_prefix(ratios_, end - begin);
    for (std::size_t s = begin; s < end; ++s) {
      const cost_t c = items.cost[s];
      const double ratio = c == 0 ? std::numeric_limits<double>::infinity()
                                  : static_cast<double>(items.bytes[s]) / static_cast<double>(c);
      ratios[s - begin] = {ratio, s};
    }
    using ratio = std::pair<double, std::size_t>;
    return fill(
        ratios,
        [&](const ratio& a, const ratio& b) {
          return a.first != b.first ? a.first > b.first
                                    : keeps_before(items.record(a.second), items.record(b.second));
        },
        [](const ratio& r) { return r.second; }, items, target, kept, load);
  }

private:
  /// fill() over the slots [begin, end) themselves, ordered by `before` on slots: the exact
  /// path, for values too wide for packed keys or doubles.
  template <class Before>
  bytes_t fill_slots(const slot_items& items, std::size_t begin, std::size_t end, Before before,
                     cost_t target, std::span<char> kept, cost_t& load) {
    const auto slots = scratch_prefix(order_, end - begin);
    std::iota(slots.begin(), slots.end(), begin);
    return fill(
        slots, before, [](std::size_t s) { return s; }, items, target, kept, load);
  }

  /// The greedy filling of records `recs` (any order) taken in the order `before` (strict and
  /// total); `slot` maps a record to its slot. Only the order of the items after the longest
  /// prefix that fits matters (all of that prefix is kept, in any order), so a selection by
  /// prefix cost (quickselect) finds the prefix and only the rest, typically a quarter of the
  /// items, is sorted.
  /// Complexity: expected O(k + t log t) for k items and t after the prefix, O(k log k) at
  /// worst.
  template <class Rec, class Before, class Slot>
  static bytes_t fill(std::span<Rec> recs, Before before, Slot slot, const slot_items& items,
                      cost_t target, std::span<char> kept, cost_t& load) {
    const auto cost = [&](const Rec& r) { return items.cost[slot(r)]; };
    std::size_t lo = 0;           // [0, lo): the prefix so far, `room` left under the target
    std::size_t hi = recs.size(); // [hi, end): after everything in [lo, hi), in any order
    cost_t room = target;
    // Bad pivots could make the selection quadratic: after as many rounds as a balanced one
    // needs twice over, the rest is sorted instead (it all comes after the prefix so far).
    for (std::size_t round = 0, rounds = 2 * std::bit_width(recs.size()) + 4;
         lo < hi && round < rounds; ++round) {
      // Median of three as the pivot, moved to the end of the range.
      const std::size_t mid = lo + (hi - lo) / 2;
      if (before(recs[mid], recs[lo])) {
        std::swap(recs[mid], recs[lo]);
      }
      if (before(recs[hi - 1], recs[mid])) {
        std::swap(recs[hi - 1], recs[mid]);
        if (before(recs[mid], recs[lo])) {
          std::swap(recs[mid], recs[lo]);
        }
      }
      std::swap(recs[mid], recs[hi - 1]);
      const Rec pivot = recs[hi - 1];
      std::size_t p = lo;
      cost_t sum = 0; // ≤ the rank's load: fits
      for (std::size_t x = lo; x + 1 < hi; ++x) {
        if (before(recs[x], pivot)) {
          sum += cost(recs[x]);
          std::swap(recs[p++], recs[x]);
        }
      }
      std::swap(recs[p], recs[hi - 1]);
      if (sum > room) {
        hi = p; // the prefix ends among the records before the pivot
      } else if (cost(pivot) > room - sum) {
        room -= sum; // it ends right before the pivot
        lo = p;
        break;
      } else {
        room -= sum + cost(pivot);
        lo = p + 1;
      }
    }
    bytes_t bytes = 0;
    for (std::size_t x = 0; x < lo; ++x) {
      bytes += items.bytes[slot(recs[x])];
      kept[slot(recs[x])] = 1;
    }
    std::sort(recs.begin() + static_cast<std::ptrdiff_t>(lo), recs.end(), before);
    for (std::size_t x = lo; x < recs.size(); ++x) {
      const std::size_t s = slot(recs[x]);
      if (items.cost[s] <= room) {
        room -= items.cost[s];
        bytes += items.bytes[s];
        kept[s] = 1;
      }
    }
    load = target - room;
    return bytes;
  }

  std::vector<std::size_t> order_;                     // slots (values beyond 2^53 or 63 bits)
  std::vector<std::uint64_t> keys_;                    // packed keys of largest_first
  std::vector<std::pair<double, std::size_t>> ratios_; // ratios of densest_first
};

} // namespace orch::detail
