// SPDX-License-Identifier: Apache-2.0
/// Payload helpers for one rank: packing its send buffer from per-item spans, and finding
/// items' bytes in its buffers (receive, destination, or any layout's) in O(1) or O(log m).
#pragma once

#include <orch/config.hpp>
#include <orch/exchange/execute.hpp>
#include <orch/exchange/layout.hpp>
#include <orch/exchange/plan.hpp>
#include <orch/types.hpp>

#include <algorithm>
#include <concepts>
#include <cstddef>
#include <cstdint>
#include <functional>
#include <numeric>
#include <span>
#include <type_traits>
#include <utility>
#include <vector>

namespace orch {

/// A callable that returns the payload of an item: `f(item)` for an item id gives its bytes
/// as something convertible to std::span<const std::byte>.
template <class F>
concept item_span_source = std::invocable<F&, index_t> &&
    std::convertible_to<std::invoke_result_t<F&, index_t>, std::span<const std::byte>>;

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

/// Packs `rank`'s send buffer straight from per-item spans, in the plan's send order:
/// send[packed offset of e, + size) = item_bytes(item of e) for every send entry e. The same
/// bytes as orch::pack on a source buffer holding the items back to back, without building
/// that buffer. `item_bytes` is called once per item the rank sends, in send-buffer order.
/// Complexity: O(items of the rank + bytes).
/// Throws: orch::invalid_argument (a send buffer smaller than view.source_bytes; a span whose
/// size differs from the plan's bytes for the item — naming the item, the rank and both
/// sizes; send's contents are then unspecified), and whatever `item_bytes` throws.
template <item_span_source ItemBytes>
void pack_items(const rank_view& view, ItemBytes&& item_bytes, std::span<std::byte> send) {
  if (send.size() < static_cast<std::size_t>(view.source_bytes)) {
    throw_invalid_argument("pack_items: rank ", view.rank, " needs a send buffer of ",
                           view.source_bytes, " bytes, got ", send.size());
  }
  for (std::size_t e = 0; e < view.send_items.size(); ++e) {
    const index_t item = view.send_items[e];
    const std::span<const std::byte> bytes = std::invoke(item_bytes, item);
    if (bytes.size() != static_cast<std::size_t>(view.send_sizes[e])) {
      throw_invalid_argument("pack_items: item ", item, " of rank ", view.rank, " has ",
                             bytes.size(), " bytes, the plan sends ", view.send_sizes[e]);
    }
    // Within the buffer (the source_bytes check implies it for a consistent view; testing it
    // here also lets the compiler see every copy's bound).
    const auto at = static_cast<std::size_t>(view.send_packed_offsets[e]);
    if (at > send.size() || bytes.size() > send.size() - at) {
      throw_invalid_argument("pack_items: item ", item, " of rank ", view.rank, ", ", bytes.size(),
                             " bytes at byte ", at, ", overruns the send buffer of ", send.size(),
                             " bytes (the view's packed offsets disagree with its sizes)");
    }
    detail::copy_bytes(send.data() + at, bytes.data(), static_cast<bytes_t>(bytes.size()));
  }
}

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

/// Finds the items a rank receives by item id, in its receive buffer (usable without
/// unpacking) and in its destination buffer, from its rank_view alone (the view is copied
/// from, not referenced).
/// Complexity: building O(m log m) for the m items received; every lookup O(log m); memory
/// O(m).
class received_items {
public:
  /// Indexes the receive side of `view`.
  explicit received_items(const rank_view& view)
      : rank_(view.rank), receive_bytes_(view.destination_bytes), item_(view.recv_items),
        size_(view.recv_sizes), packed_(view.recv_packed_offsets),
        destination_(view.recv_destination_offsets), by_item_(view.recv_items.size()) {
    std::iota(by_item_.begin(), by_item_.end(), std::size_t{0});
    // Item ids are distinct in a view, so this order is total.
    std::sort(by_item_.begin(), by_item_.end(),
              [&](std::size_t a, std::size_t b) { return item_[a] < item_[b]; });
  }

  /// The rank. Complexity: O(1).
  [[nodiscard]] rank_t rank() const noexcept { return rank_; }
  /// Number of items received. Complexity: O(1).
  [[nodiscard]] index_t size() const noexcept { return static_cast<index_t>(item_.size()); }
  /// Whether the rank receives `item`. Complexity: O(log m).
  [[nodiscard]] bool contains(index_t item) const noexcept { return entry(item) >= 0; }
  /// Where `item` lies in the receive buffer. Complexity: O(log m).
  /// Throws: orch::invalid_argument (the rank does not receive the item).
  [[nodiscard]] item_range in_receive(index_t item) const {
    const auto e = checked(item, "in_receive");
    return {item, packed_[e], size_[e]};
  }
  /// Where `item` lies in the destination buffer. Complexity, Throws: as in_receive.
  [[nodiscard]] item_range in_destination(index_t item) const {
    const auto e = checked(item, "in_destination");
    return {item, destination_[e], size_[e]};
  }
  /// The bytes of `item` in the rank's receive buffer `recv`. Complexity: O(log m).
  /// Throws: as in_receive, and orch::invalid_argument (recv smaller than the view's
  /// destination bytes).
  [[nodiscard]] std::span<const std::byte> receive_bytes(std::span<const std::byte> recv,
                                                         index_t item) const {
    check_buffer(recv, "receive_bytes");
    return detail::range_in(recv, in_receive(item), rank_, "received_items::receive_bytes");
  }
  /// The bytes of `item` in the rank's destination buffer `destination` (after unpack).
  /// Complexity, Throws: as receive_bytes.
  [[nodiscard]] std::span<const std::byte> destination_bytes(std::span<const std::byte> destination,
                                                             index_t item) const {
    check_buffer(destination, "destination_bytes");
    return detail::range_in(destination, in_destination(item), rank_,
                            "received_items::destination_bytes");
  }

private:
  [[nodiscard]] std::ptrdiff_t entry(index_t item) const noexcept {
    const auto it = std::lower_bound(by_item_.begin(), by_item_.end(), item,
                                     [&](std::size_t e, index_t i) { return item_[e] < i; });
    return it != by_item_.end() && item_[*it] == item ? static_cast<std::ptrdiff_t>(*it) : -1;
  }
  [[nodiscard]] std::size_t checked(index_t item, const char* what) const {
    const auto e = entry(item);
    if (e < 0) {
      throw_invalid_argument("received_items::", what, ": rank ", rank_, " does not receive item ",
                             item);
    }
    return static_cast<std::size_t>(e);
  }
  void check_buffer(std::span<const std::byte> buffer, const char* what) const {
    if (buffer.size() < static_cast<std::size_t>(receive_bytes_)) {
      throw_invalid_argument("received_items::", what, ": rank ", rank_, " needs a buffer of ",
                             receive_bytes_, " bytes, got ", buffer.size());
    }
  }

  rank_t rank_ = 0;
  bytes_t receive_bytes_ = 0;
  std::vector<index_t> item_;
  std::vector<bytes_t> size_;
  std::vector<bytes_t> packed_;
  std::vector<bytes_t> destination_;
  std::vector<std::size_t> by_item_; // entries sorted by item id
};

} // namespace orch
