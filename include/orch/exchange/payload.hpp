// SPDX-License-Identifier: Apache-2.0
/// Payload helpers for one rank: packing its send buffer from per-item spans, and (through
/// orch/exchange/item_offsets.hpp and received_items.hpp) finding items' bytes in its buffers.
#pragma once

#include <orch/config.hpp>
#include <orch/exchange/execute.hpp>
#include <orch/exchange/item_offsets.hpp>
#include <orch/exchange/layout.hpp>
#include <orch/exchange/plan.hpp>
#include <orch/exchange/received_items.hpp>
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

} // namespace orch
