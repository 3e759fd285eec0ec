// SPDX-License-Identifier: Apache-2.0
/// What a rank receives, found by item id in its receive buffer (usable without unpacking)
/// and in its destination buffer, from its rank_view alone.
#pragma once

#include <orch/config.hpp>
#include <orch/exchange/item_offsets.hpp>
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
