// SPDX-License-Identifier: Apache-2.0
/// Exchange plans: what every rank sends and receives to move items from one layout to
/// another, with byte offsets for packing, per-peer counts, inverse, composition and a hash.
#pragma once

#include <orch/config.hpp>
#include <orch/detail/exchange/plan_data.hpp>
#include <orch/detail/primitives/hash.hpp>
#include <orch/exchange/layout.hpp>
#include <orch/placement/traffic.hpp>
#include <orch/topology.hpp>
#include <orch/types.hpp>

#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <memory>
#include <span>
#include <utility>
#include <vector>

namespace orch {

class exchange_plan;

/// Everything one rank needs to execute its part of a plan, as flat integer arrays that a GPU
/// can upload and use without further arithmetic.
///
/// Buffers (docs/plans.md): the *source* buffer holds the rank's items of the `from` layout
/// back to back in slot order; the *send* buffer holds the same items packed by destination
/// peer (peers ascending), inside a peer by destination slot; the *receive* buffer holds the
/// items from every source peer (peers ascending), inside a peer by destination slot — chunk
/// p of the receive buffer is byte-identical to the sender's chunk for this rank; the
/// *destination* buffer holds the rank's items of the `to` layout in slot order. Items that
/// stay on the rank appear as traffic to and from the rank itself ("self"). Peers appear when
/// at least one item (even of zero bytes) goes between them, identically on both sides.
/// Size: O(items sent + items received + peers), never O(ranks).
struct rank_view {
  rank_t rank = 0;
  bytes_t source_bytes = 0;      ///< = send buffer bytes
  bytes_t destination_bytes = 0; ///< = receive buffer bytes
  bytes_t self_bytes = 0;        ///< bytes this rank sends to itself

  // Send side, one entry per item of the rank in the `from` layout, in send-buffer order.
  std::vector<index_t> send_items;          ///< item ids
  std::vector<bytes_t> send_sizes;          ///< bytes of each item
  std::vector<bytes_t> send_source_offsets; ///< where the item starts in the source buffer
  std::vector<bytes_t> send_packed_offsets; ///< where it starts in the send buffer
  // One entry per destination peer, ascending.
  std::vector<rank_t> send_peers;
  std::vector<index_t> send_peer_items;  ///< items for the peer
  std::vector<bytes_t> send_peer_bytes;  ///< bytes for the peer
  std::vector<bytes_t> send_peer_displs; ///< byte displacement in the send buffer
  std::vector<index_t> send_peer_first;  ///< index of the peer's first entry in send_items

  // Receive side, one entry per item of the rank in the `to` layout, in receive-buffer order.
  std::vector<index_t> recv_items;
  std::vector<bytes_t> recv_sizes;
  std::vector<bytes_t> recv_packed_offsets;      ///< where it starts in the receive buffer
  std::vector<bytes_t> recv_destination_offsets; ///< where it goes in the destination buffer
  // One entry per source peer, ascending.
  std::vector<rank_t> recv_peers;
  std::vector<index_t> recv_peer_items;
  std::vector<bytes_t> recv_peer_bytes;
  std::vector<bytes_t> recv_peer_displs;
  std::vector<index_t> recv_peer_first;

  /// The send buffer equals the source buffer (packing may be skipped).
  bool pack_is_identity = true;
  /// The destination buffer equals the receive buffer (unpacking may be skipped).
  bool unpack_is_identity = true;
};

/// Aggregate traffic from one rank to another.
struct pair_traffic {
  rank_t source = 0;
  rank_t destination = 0;
  index_t items = 0;
  bytes_t bytes = 0;
  /// Member-wise equality.
  friend bool operator==(const pair_traffic&, const pair_traffic&) = default;
};

namespace detail {

[[nodiscard]] exchange_plan build_plan(layout from, layout to,
                                       std::shared_ptr<const std::vector<bytes_t>> bytes,
                                       const char* where, bool with_hash = false);
[[nodiscard]] rank_view build_view(const plan_data& p, rank_t rank);
[[nodiscard]] std::uint64_t plan_hash(const plan_data& p) noexcept;
[[nodiscard]] exchange_plan inverse_plan(const exchange_plan& plan);
struct plan_access;

} // namespace detail

/// The exchange that moves items of given byte sizes from layout `from()` to layout `to()`.
/// Built by make_plan; immutable. Every rank computes the same plan from the same gathered
/// metadata (hash() lets them confirm that before any payload moves) and then extracts its
/// own view(rank). The plan itself stores O(items + ranks + communicating pairs): per-rank
/// arrays are built on request, so no rank pays for the others' send and receive lists.
/// Plans are immutable values whose arrays are shared between copies (copying costs O(1)).
/// A default-constructed plan has one rank and no items.
class exchange_plan {
public:
  exchange_plan() : d_(empty()) {}

  /// Number of ranks (both layouts have it). Complexity: O(1).
  [[nodiscard]] rank_t ranks() const noexcept { return d_->from.ranks(); }
  /// Number of items. Complexity: O(1).
  [[nodiscard]] index_t items() const noexcept { return d_->from.items(); }
  /// Where the items are before the exchange. Complexity: O(1).
  [[nodiscard]] const layout& from() const noexcept { return d_->from; }
  /// Where the items are after the exchange. Complexity: O(1).
  [[nodiscard]] const layout& to() const noexcept { return d_->to; }
  /// Bytes of every item, indexed by item.
  [[nodiscard]] std::span<const bytes_t> item_bytes() const noexcept { return *d_->bytes; }

  /// Where `item` starts in its source rank's source buffer.
  /// Complexity: O(slot of the item), so calling it for every item is quadratic: for many
  /// items use orch::item_offsets::source(plan) or orch::rank_offsets::source(plan, rank)
  /// (orch/exchange/payload.hpp), O(items) once and then O(1) per item.
  /// Throws: orch::invalid_argument (no such item).
  [[nodiscard]] bytes_t source_offset(index_t item) const {
    return offset_in(d_->from, item, "exchange_plan::source_offset");
  }
  /// Where `item` starts in its destination rank's destination buffer.
  /// Complexity: O(slot of the item), so calling it for every item is quadratic: for many
  /// items use orch::item_offsets::destination(plan) or orch::rank_offsets::destination(plan,
  /// rank) (orch/exchange/payload.hpp), O(items) once and then O(1) per item.
  /// Throws: orch::invalid_argument (no such item).
  [[nodiscard]] bytes_t destination_offset(index_t item) const {
    return offset_in(d_->to, item, "exchange_plan::destination_offset");
  }
  /// Size of `rank`'s source (= send) buffer. Complexity: O(1).
  [[nodiscard]] bytes_t source_bytes(rank_t rank) const {
    check_rank(rank, "exchange_plan::source_bytes");
    return d_->source_total[static_cast<std::size_t>(rank)];
  }
  /// Size of `rank`'s destination (= receive) buffer. Complexity: O(1).
  [[nodiscard]] bytes_t destination_bytes(rank_t rank) const {
    check_rank(rank, "exchange_plan::destination_bytes");
    return d_->destination_total[static_cast<std::size_t>(rank)];
  }
  /// Bytes `rank` sends to itself. Complexity: O(1).
  [[nodiscard]] bytes_t self_bytes(rank_t rank) const {
    check_rank(rank, "exchange_plan::self_bytes");
    return d_->self[static_cast<std::size_t>(rank)];
  }
  /// Σ of all item bytes. Complexity: O(1).
  [[nodiscard]] bytes_t total_bytes() const noexcept { return d_->total; }

  /// The send and receive lists of `rank` (see rank_view).
  /// Complexity: O(m log m) for the m items the rank sends and receives.
  /// Throws: orch::invalid_argument (rank out of range).
  [[nodiscard]] rank_view view(rank_t rank) const {
    check_rank(rank, "exchange_plan::view");
    return detail::build_view(*d_, rank);
  }

  /// Items and bytes `source` sends to `destination` (0 when they do not talk).
  /// Complexity: O(log peers of source). Throws: orch::invalid_argument (rank out of range).
  [[nodiscard]] pair_traffic pair(rank_t source, rank_t destination) const {
    check_rank(source, "exchange_plan::pair");
    check_rank(destination, "exchange_plan::pair");
    const auto s = static_cast<std::size_t>(source);
    const auto begin = d_->pair_peer.begin() + d_->pair_first[s];
    const auto end = d_->pair_peer.begin() + d_->pair_first[s + 1];
    const auto it = std::lower_bound(begin, end, destination);
    pair_traffic t{source, destination, 0, 0};
    if (it != end && *it == destination) {
      const auto p = static_cast<std::size_t>(it - d_->pair_peer.begin());
      t.items = d_->pair_items[p];
      t.bytes = d_->pair_bytes[p];
    }
    return t;
  }
  /// Every communicating (source, destination) pair, self pairs included, sorted by source
  /// then destination: the sparse form of the ranks × ranks traffic matrix.
  /// Complexity: O(pairs).
  [[nodiscard]] std::vector<pair_traffic> pairs() const {
    std::vector<pair_traffic> out;
    out.reserve(d_->pair_peer.size());
    for (rank_t s = 0; s < ranks(); ++s) {
      const auto r = static_cast<std::size_t>(s);
      for (auto p = static_cast<std::size_t>(d_->pair_first[r]);
           p < static_cast<std::size_t>(d_->pair_first[r + 1]); ++p) {
        out.push_back({s, d_->pair_peer[p], d_->pair_items[p], d_->pair_bytes[p]});
      }
    }
    return out;
  }
  /// Number of communicating pairs, self pairs included. Complexity: O(1).
  [[nodiscard]] index_t pair_count() const noexcept {
    return static_cast<index_t>(d_->pair_peer.size());
  }

  /// 64-bit hash of what defines the plan — the number of ranks and items and, for every
  /// item, its (rank, slot) in both layouts and its bytes — with detail::word_hash: one chain
  /// per field (from-rank, from-slot, to-rank, to-slot, bytes) over the items in index order,
  /// then one over tag 0x6F72636870310002, ranks, items and the five chain values
  /// (docs/plans.md, "Hash"). Identical on every platform; equal plans have equal hashes.
  /// Complexity: O(1) for plans from make_plan (computed while building), O(items) otherwise.
  [[nodiscard]] std::uint64_t hash() const noexcept {
    return d_->hash_known ? d_->hash : detail::plan_hash(*d_);
  }

  /// Same layouts and item bytes (everything else follows from them). Complexity: O(items).
  friend bool operator==(const exchange_plan& a, const exchange_plan& b) noexcept {
    return a.d_ == b.d_ || (a.d_->from == b.d_->from && a.d_->to == b.d_->to &&
                            (a.d_->bytes == b.d_->bytes || *a.d_->bytes == *b.d_->bytes));
  }

private:
  friend exchange_plan detail::build_plan(layout, layout,
                                          std::shared_ptr<const std::vector<bytes_t>>, const char*,
                                          bool);
  friend struct detail::plan_access;
  friend exchange_plan detail::inverse_plan(const exchange_plan&);
  friend exchange_plan compose(const exchange_plan&, const exchange_plan&);

  explicit exchange_plan(std::shared_ptr<const detail::plan_data> d) : d_(std::move(d)) {}

  static const std::shared_ptr<const detail::plan_data>& empty() {
    static const auto none = std::make_shared<const detail::plan_data>();
    return none;
  }

  void check_rank(rank_t rank, const char* where) const {
    if (rank < 0 || rank >= ranks()) {
      throw_invalid_argument(where, ": rank ", rank, " is outside the plan's [0, ", ranks(), ")");
    }
  }
  [[nodiscard]] bytes_t offset_in(const layout& l, index_t item, const char* where) const {
    if (item < 0 || item >= items()) {
      throw_invalid_argument(where, ": item ", item, " is outside [0, ", items(), ")");
    }
    const auto on = l.items_on(l.rank_of(item));
    const auto& bytes = *d_->bytes;
    bytes_t offset = 0; // bounded by the rank's checked buffer total
    for (std::size_t s = 0; s < static_cast<std::size_t>(l.slot_of(item)); ++s) {
      offset += bytes[static_cast<std::size_t>(on[s])];
    }
    return offset;
  }

  std::shared_ptr<const detail::plan_data> d_;
};

/// The plan that moves items of sizes `item_bytes` from layout `from` to layout `to`. Its
/// hash() is computed while building (every rank compares it before moving payload), in the
/// same pass over the items, so that hash() then costs O(1).
/// Complexity: O(items log(peers per rank) + ranks); memory O(items + ranks + pairs), never
/// a ranks × ranks matrix.
/// Throws: orch::invalid_argument (layouts of different item or rank counts, a size array of
/// another length, a negative item size — naming the item), orch::overflow (a rank's buffer
/// exceeds 2^63 - 1 bytes — naming the item and rank).
[[nodiscard]] inline exchange_plan make_plan(const layout& from, const layout& to,
                                             std::span<const bytes_t> item_bytes) {
  return detail::build_plan(
      from, to, std::make_shared<const std::vector<bytes_t>>(item_bytes.begin(), item_bytes.end()),
      "make_plan", true);
}

/// make_plan taking the item sizes over instead of copying them: the same plan and hash, for
/// callers that no longer need the array (it saves a copy of 8 bytes per item).
/// Complexity, Throws: as make_plan.
[[nodiscard]] inline exchange_plan make_plan(const layout& from, const layout& to,
                                             std::vector<bytes_t>&& item_bytes) {
  return detail::build_plan(from, to,
                            std::make_shared<const std::vector<bytes_t>>(std::move(item_bytes)),
                            "make_plan", true);
}

/// The plan that moves everything back: from `plan.to()` to `plan.from()`, same sizes (the
/// backward pass carries gradients this way). Equal to make_plan(plan.to(), plan.from(),
/// plan.item_bytes()) in every accessor, view and hash, but derived from `plan` instead of the
/// items: the layouts and sizes are shared, the buffer totals swapped, the pair table
/// transposed. Complexity: O(ranks + pairs). Throws: nothing new (std::bad_alloc only).
[[nodiscard]] inline exchange_plan inverse(const exchange_plan& plan) {
  return detail::inverse_plan(plan);
}

/// One exchange instead of two: the plan from `a_to_b.from()` to `b_to_c.to()`.
/// compose is associative and compose(p, inverse(p)) is the identity plan (everything self).
/// Complexity: as make_plan.
/// Throws: orch::invalid_argument (different item or rank counts; the middle layouts differ —
/// naming the first item placed differently; the item sizes differ — naming the first item;
/// use make_plan(a.from(), c.to(), sizes) to move a different payload along the same route).
[[nodiscard]] inline exchange_plan compose(const exchange_plan& a_to_b,
                                           const exchange_plan& b_to_c) {
  if (a_to_b.items() != b_to_c.items() || a_to_b.ranks() != b_to_c.ranks()) {
    throw_invalid_argument("compose: plans of different sizes (", a_to_b.items(), " items on ",
                           a_to_b.ranks(), " ranks, then ", b_to_c.items(), " items on ",
                           b_to_c.ranks(), " ranks)");
  }
  if (const index_t i = detail::first_placement_difference(a_to_b.to(), b_to_c.from()); i >= 0) {
    throw_invalid_argument("compose: the first plan delivers item ", i, " to rank ",
                           a_to_b.to().rank_of(i), " slot ", a_to_b.to().slot_of(i),
                           " but the second expects it on rank ", b_to_c.from().rank_of(i),
                           " slot ", b_to_c.from().slot_of(i));
  }
  const auto ab = a_to_b.item_bytes();
  const auto bc = b_to_c.item_bytes();
  for (std::size_t i = 0; i < ab.size(); ++i) {
    if (ab[i] != bc[i]) {
      throw_invalid_argument("compose: item ", i, " has ", ab[i], " bytes in the first plan but ",
                             bc[i], " in the second");
    }
  }
  return detail::build_plan(a_to_b.from(), b_to_c.to(), a_to_b.d_->bytes, "compose");
}

} // namespace orch

// The builder needs the complete exchange_plan and make_plan & co. need the builder; it lives
// in its own header to keep this one readable, included last (both orders compile). It also
// defines measure_traffic(plan, topo), which reads the pair table through detail::plan_access,
// complete there whichever of the two headers comes first.
#include <orch/detail/exchange/plan_build.hpp>
