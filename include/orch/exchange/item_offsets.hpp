// SPDX-License-Identifier: Apache-2.0
/// Where items' bytes are in a rank's buffers: every item of a layout (item_offsets) and one
/// rank's items slot by slot (rank_offsets), in O(1) per lookup. What a rank receives, by
/// item id: orch/exchange/received_items.hpp.
#pragma once

#include <orch/config.hpp>
#include <orch/exchange/layout.hpp>
#include <orch/exchange/plan.hpp>
#include <orch/types.hpp>

#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <numeric>
#include <span>
#include <utility>
#include <vector>

namespace orch {

/// Where an item's bytes are in a buffer: [offset, offset + size).
struct item_range {
  index_t item = 0;
  bytes_t offset = 0;
  bytes_t size = 0;
  /// Member-wise equality.
  friend bool operator==(const item_range&, const item_range&) = default;
};

namespace detail {

/// buffer[range) after checking that the buffer holds it.
[[nodiscard]] inline std::span<const std::byte>
range_in(std::span<const std::byte> buffer, const item_range& r, rank_t rank, const char* where) {
  if (static_cast<std::uint64_t>(r.offset) + static_cast<std::uint64_t>(r.size) > buffer.size()) {
    throw_invalid_argument(where, ": item ", r.item, " of rank ", rank, " is at bytes [", r.offset,
                           ", ", r.offset + r.size, ") but the buffer has ", buffer.size());
  }
  return buffer.subspan(static_cast<std::size_t>(r.offset), static_cast<std::size_t>(r.size));
}

} // namespace detail

/// Where every item of a layout starts in its rank's buffer, the items of a rank lying back to
/// back in slot order (the source buffers of a plan's from(), the destination buffers of its
/// to()). The O(items)-once replacement for exchange_plan::source_offset /
/// destination_offset, which cost O(slot) per call.
/// Complexity: building O(items + ranks); every query O(1); memory O(items + ranks).
class item_offsets {
public:
  /// Offsets of an empty layout.
  item_offsets() = default;

  /// Offsets for layout `l` with item i taking item_bytes[i] bytes.
  /// Throws: orch::invalid_argument (a size array of another length than l.items(), a negative
  /// size — naming the item), orch::overflow (a rank's buffer exceeds 2^63 − 1 bytes — naming
  /// the item and rank).
  item_offsets(const layout& l, std::span<const bytes_t> item_bytes)
      : offset_(item_bytes.size()), size_(item_bytes.begin(), item_bytes.end()),
        total_(static_cast<std::size_t>(l.ranks()), 0) {
    if (item_bytes.size() != static_cast<std::size_t>(l.items())) {
      throw_invalid_argument("item_offsets: ", item_bytes.size(), " item sizes for ", l.items(),
                             " items");
    }
    const auto order = l.order();
    const auto first = l.first_on();
    for (std::size_t r = 0; r < total_.size(); ++r) {
      bytes_t at = 0;
      for (auto p = static_cast<std::size_t>(first[r]); p < static_cast<std::size_t>(first[r + 1]);
           ++p) {
        const auto i = static_cast<std::size_t>(order[p]);
        if (size_[i] < 0) {
          throw_invalid_argument("item_offsets: item ", i, " has negative size ", size_[i]);
        }
        offset_[i] = at;
        if (__builtin_add_overflow(at, size_[i], &at)) {
          throw_overflow("item_offsets: the buffer of rank ", r, " exceeds 2^63 - 1 bytes at item ",
                         i);
        }
      }
      total_[r] = at;
    }
  }

  /// Offsets in the source buffers of `plan` (its from() layout).
  /// Complexity: O(items + ranks). Throws: nothing new (the plan's sizes are valid).
  [[nodiscard]] static item_offsets source(const exchange_plan& plan) {
    return {plan.from(), plan.item_bytes()};
  }
  /// Offsets in the destination buffers of `plan` (its to() layout). Complexity: as source.
  [[nodiscard]] static item_offsets destination(const exchange_plan& plan) {
    return {plan.to(), plan.item_bytes()};
  }

  /// Number of items. Complexity: O(1).
  [[nodiscard]] index_t items() const noexcept { return static_cast<index_t>(offset_.size()); }
  /// Where `item` starts in its rank's buffer. Complexity: O(1).
  /// Throws: orch::invalid_argument (no such item).
  [[nodiscard]] bytes_t offset(index_t item) const { return offset_[at(item, "offset")]; }
  /// Bytes of `item`. Complexity: O(1). Throws: as offset.
  [[nodiscard]] bytes_t size(index_t item) const { return size_[at(item, "size")]; }
  /// Offset and size of `item`. Complexity: O(1). Throws: as offset.
  [[nodiscard]] item_range range(index_t item) const {
    const std::size_t i = at(item, "range");
    return {item, offset_[i], size_[i]};
  }
  /// Size of `rank`'s buffer. Complexity: O(1). Throws: orch::invalid_argument (no such rank).
  [[nodiscard]] bytes_t rank_bytes(rank_t rank) const {
    if (rank < 0 || static_cast<std::size_t>(rank) >= total_.size()) {
      throw_invalid_argument("item_offsets::rank_bytes: rank ", rank, " is outside [0, ",
                             total_.size(), ")");
    }
    return total_[static_cast<std::size_t>(rank)];
  }
  /// Offset of every item, indexed by item.
  [[nodiscard]] std::span<const bytes_t> offsets() const noexcept { return offset_; }

private:
  [[nodiscard]] std::size_t at(index_t item, const char* what) const {
    if (item < 0 || item >= items()) {
      throw_invalid_argument("item_offsets::", what, ": item ", item, " is outside [0, ", items(),
                             ")");
    }
    return static_cast<std::size_t>(item);
  }

  std::vector<bytes_t> offset_;
  std::vector<bytes_t> size_;
  std::vector<bytes_t> total_;
};

/// The items of one rank of a layout, slot by slot, with their byte ranges in that rank's
/// buffer: the destination-slot form of a rank's received payload (layout = plan.to(), buffer
/// = its destination buffer after unpack), or its source buffer (layout = plan.from()).
/// Complexity: building O(items of the rank); every query O(1); memory O(items of the rank).
class rank_offsets {
public:
  /// The items of `rank` in `l`, item i taking item_bytes[i] bytes (indexed by item; only the
  /// rank's items are read).
  /// Throws: orch::invalid_argument (rank outside the layout, a size array of another length
  /// than l.items(), a negative size — naming the item), orch::overflow (the buffer exceeds
  /// 2^63 − 1 bytes).
  rank_offsets(const layout& l, rank_t rank, std::span<const bytes_t> item_bytes)
      : layout_(l), rank_(rank) {
    if (rank < 0 || rank >= l.ranks()) {
      throw_invalid_argument("rank_offsets: rank ", rank, " is outside [0, ", l.ranks(), ")");
    }
    if (item_bytes.size() != static_cast<std::size_t>(l.items())) {
      throw_invalid_argument("rank_offsets: ", item_bytes.size(), " item sizes for ", l.items(),
                             " items");
    }
    const auto on = l.items_on(rank);
    offset_.resize(on.size() + 1, 0);
    for (std::size_t s = 0; s < on.size(); ++s) {
      const bytes_t b = item_bytes[static_cast<std::size_t>(on[s])];
      if (b < 0) {
        throw_invalid_argument("rank_offsets: item ", on[s], " has negative size ", b);
      }
      if (__builtin_add_overflow(offset_[s], b, &offset_[s + 1])) {
        throw_overflow("rank_offsets: the buffer of rank ", rank,
                       " exceeds 2^63 - 1 bytes at item ", on[s]);
      }
    }
  }

  /// `rank`'s source buffer of `plan`. Complexity: O(items of the rank).
  /// Throws: orch::invalid_argument (no such rank).
  [[nodiscard]] static rank_offsets source(const exchange_plan& plan, rank_t rank) {
    return {plan.from(), rank, plan.item_bytes()};
  }
  /// `rank`'s destination buffer of `plan`. Complexity, Throws: as source.
  [[nodiscard]] static rank_offsets destination(const exchange_plan& plan, rank_t rank) {
    return {plan.to(), rank, plan.item_bytes()};
  }

  /// The rank. Complexity: O(1).
  [[nodiscard]] rank_t rank() const noexcept { return rank_; }
  /// Number of items (slots) on the rank. Complexity: O(1).
  [[nodiscard]] index_t slots() const noexcept { return static_cast<index_t>(offset_.size()) - 1; }
  /// Size of the rank's buffer. Complexity: O(1).
  [[nodiscard]] bytes_t buffer_bytes() const noexcept { return offset_.back(); }
  /// The item in `slot` and its byte range. Complexity: O(1).
  /// Throws: orch::invalid_argument (no such slot).
  [[nodiscard]] item_range at(index_t slot) const {
    if (slot < 0 || slot >= slots()) {
      throw_invalid_argument("rank_offsets::at: rank ", rank_, " has ", slots(), " slots, no slot ",
                             slot);
    }
    const auto s = static_cast<std::size_t>(slot);
    return {layout_.item_at(rank_, slot), offset_[s], offset_[s + 1] - offset_[s]};
  }
  /// Whether `item` is on the rank. Complexity: O(1).
  [[nodiscard]] bool contains(index_t item) const noexcept {
    return item >= 0 && item < layout_.items() &&
           layout_.rank_of_items()[static_cast<std::size_t>(item)] == rank_;
  }
  /// The byte range of `item`. Complexity: O(1).
  /// Throws: orch::invalid_argument (the item is not on the rank — naming item and ranks).
  [[nodiscard]] item_range find(index_t item) const {
    if (!contains(item)) {
      if (item < 0 || item >= layout_.items()) {
        throw_invalid_argument("rank_offsets::find: item ", item, " is outside [0, ",
                               layout_.items(), ")");
      }
      throw_invalid_argument("rank_offsets::find: item ", item, " is on rank ",
                             layout_.rank_of(item), ", not on rank ", rank_);
    }
    return at(layout_.slot_of(item));
  }
  /// The bytes of the item in `slot` inside `buffer` (the rank's buffer).
  /// Complexity: O(1). Throws: as at, and orch::invalid_argument (buffer too small).
  [[nodiscard]] std::span<const std::byte> slot_bytes(std::span<const std::byte> buffer,
                                                      index_t slot) const {
    return detail::range_in(buffer, at(slot), rank_, "rank_offsets::slot_bytes");
  }
  /// The bytes of `item` inside `buffer`. Complexity: O(1).
  /// Throws: as find, and orch::invalid_argument (buffer too small).
  [[nodiscard]] std::span<const std::byte> item_bytes(std::span<const std::byte> buffer,
                                                      index_t item) const {
    return detail::range_in(buffer, find(item), rank_, "rank_offsets::item_bytes");
  }

private:
  layout layout_;
  rank_t rank_ = 0;
  std::vector<bytes_t> offset_; // slots + 1 prefix sums
};

} // namespace orch
