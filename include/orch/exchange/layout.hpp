// SPDX-License-Identifier: Apache-2.0
/// A layout places every item at (rank, slot): which rank holds it and where in that rank's
/// buffer it sits.
#pragma once

#include <orch/config.hpp>
#include <orch/detail/primitives/uninit_vector.hpp>
#include <orch/types.hpp>

#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <limits>
#include <memory>
#include <span>
#include <utility>
#include <vector>

namespace orch {

class layout;

namespace detail {
struct layout_access;

/// The arrays of a layout; immutable once built and shared between copies. The per-item
/// arrays are filled by copies and scatters (every builder writes each entry once), so they
/// skip zero-filling.
struct layout_data {
  rank_t ranks = 1;
  uninit_vector<rank_t> rank_of;    // per item
  uninit_vector<index_t> slot_of;   // per item
  std::vector<index_t> first{0, 0}; // per rank + 1: offsets into order
  uninit_vector<index_t> order;     // items in (rank, slot) order
};
} // namespace detail

/// Items 0..items()-1 placed on ranks 0..ranks()-1: item i is the slot_of(i)-th item of rank
/// rank_of(i). On every rank the slots 0..count_on(r)-1 are each used by exactly one item.
/// The slot order is the order of the items in that rank's buffers (see docs/plans.md).
///
/// Invariant: a layout is always valid; every builder validates its input or constructs a
/// valid result by design. A default-constructed layout has one rank and no items.
/// Layouts are immutable values whose arrays are shared between copies: copying one (into a
/// plan, a schedule, a result struct) costs O(1).
class layout {
public:
  layout() : d_(empty()) {}

  /// Items on the given ranks; the slot order on each rank is *increasing item index*.
  /// Complexity: O(items + ranks) (counting sort).
  /// Throws: orch::invalid_argument (ranks ≤ 0, an item's rank outside [0, ranks)).
  [[nodiscard]] static layout from_assignment(std::span<const rank_t> rank_of_item, rank_t ranks) {
    check_ranks(ranks, "layout::from_assignment");
    detail::layout_data l;
    l.ranks = ranks;
    const std::size_t n = rank_of_item.size();
    l.rank_of.resize(n);
    count_items(l.first, rank_of_item, ranks, "layout::from_assignment", l.rank_of.data());
    l.slot_of.resize(n);
    l.order.resize(n);
    // A rank's next slot is how many of its items came before; its position in order follows.
    std::vector<index_t> filled(static_cast<std::size_t>(ranks), 0);
    const rank_t* const rank = rank_of_item.data();
    const index_t* const first = l.first.data();
    index_t* const used = filled.data();
    index_t* const order = l.order.data();
    index_t* const slot = l.slot_of.data();
    for (std::size_t i = 0; i < n; ++i) {
      const auto r = static_cast<std::size_t>(rank[i]);
      const index_t s = used[r]++;
      slot[i] = s;
      order[static_cast<std::size_t>(first[r] + s)] = static_cast<index_t>(i);
    }
    return layout(std::move(l));
  }

  /// Items on the given ranks; on each rank ordered by (key[i], secondary_key[i], i)
  /// ascending. An empty `secondary_key` counts as all zero. The orchestrator orders media
  /// items on an LLM rank by (slot of the parent example, position in the example) this way.
  /// Complexity: O(n log n). Throws: orch::invalid_argument (ranks ≤ 0, a rank out of range,
  /// key sizes that differ from the number of items).
  [[nodiscard]] static layout from_keys(std::span<const rank_t> rank_of_item, rank_t ranks,
                                        std::span<const index_t> key,
                                        std::span<const index_t> secondary_key = {}) {
    check_ranks(ranks, "layout::from_keys");
    if (key.size() != rank_of_item.size() ||
        (!secondary_key.empty() && secondary_key.size() != rank_of_item.size())) {
      throw_invalid_argument("layout::from_keys: ", rank_of_item.size(), " items but ", key.size(),
                             " keys and ", secondary_key.size(), " secondary keys");
    }
    detail::layout_data l;
    l.ranks = ranks;
    l.rank_of.resize(rank_of_item.size());
    count_items(l.first, rank_of_item, ranks, "layout::from_keys", l.rank_of.data());
    l.slot_of.resize(rank_of_item.size());
    l.order.resize(rank_of_item.size());
    for (std::size_t i = 0; i < l.order.size(); ++i) {
      l.order[i] = static_cast<index_t>(i);
    }
    const auto second = [&](index_t i) {
      return secondary_key.empty() ? index_t{0} : secondary_key[static_cast<std::size_t>(i)];
    };
    // (rank, key, secondary, item) is a total order: the result is unique.
    std::sort(l.order.begin(), l.order.end(), [&](index_t a, index_t b) {
      const auto ua = static_cast<std::size_t>(a);
      const auto ub = static_cast<std::size_t>(b);
      if (rank_of_item[ua] != rank_of_item[ub]) {
        return rank_of_item[ua] < rank_of_item[ub];
      }
      if (key[ua] != key[ub]) {
        return key[ua] < key[ub];
      }
      if (second(a) != second(b)) {
        return second(a) < second(b);
      }
      return a < b;
    });
    fill_slots_from_order(l);
    return layout(std::move(l));
  }

  /// An explicit (rank, slot) for every item, validated: every slot 0..count-1 of every rank is
  /// used exactly once.
  /// Complexity: O(items + ranks).
  /// Throws: orch::invalid_argument naming the item, rank or slot (sizes differ, ranks ≤ 0, a
  /// rank out of range, a negative slot, a slot ≥ the number of items on that rank, two items
  /// in one slot).
  [[nodiscard]] static layout from_placements(rank_t ranks, std::vector<rank_t> rank_of,
                                              std::vector<index_t> slot_of) {
    check_ranks(ranks, "layout::from_placements");
    if (rank_of.size() != slot_of.size()) {
      throw_invalid_argument("layout::from_placements: ", rank_of.size(), " ranks but ",
                             slot_of.size(), " slots");
    }
    // Validation costs no pass of its own: the count pass checks the ranks, the placement
    // pass the slots (a range check, and a slot found taken means two items share it).
    detail::layout_data l;
    l.ranks = ranks;
    l.rank_of.resize(rank_of.size());
    count_items(l.first, rank_of, ranks, "layout::from_placements", l.rank_of.data());
    l.order.assign(rank_of.size(), index_t{-1});
    const index_t* const first = l.first.data();
    index_t* const order = l.order.data();
    for (std::size_t i = 0; i < rank_of.size(); ++i) {
      const auto r = static_cast<std::size_t>(rank_of[i]);
      const index_t count = first[r + 1] - first[r];
      // One unsigned comparison covers slot < 0 and slot ≥ count.
      if (static_cast<std::uint64_t>(slot_of[i]) >= static_cast<std::uint64_t>(count)) {
        throw_invalid_argument("layout::from_placements: item ", i, " has slot ", slot_of[i],
                               " but rank ", rank_of[i], " holds ", count,
                               " items (slots 0..count-1)");
      }
      index_t& at = order[static_cast<std::size_t>(first[r] + slot_of[i])];
      if (at >= 0) {
        throw_invalid_argument("layout::from_placements: rank ", rank_of[i], " slot ", slot_of[i],
                               " is used by items ", at, " and ", i);
      }
      at = static_cast<index_t>(i);
    }
    // n items in n distinct slots of the right ranks: every slot is used exactly once.
    l.slot_of.assign(slot_of.begin(), slot_of.end());
    return layout(std::move(l));
  }

  /// The layout where rank r holds `items_per_rank[r]` items, numbered consecutively: rank 0
  /// holds items 0..c0-1 in slots 0..c0-1, rank 1 the next c1, and so on (data as sampled).
  /// Complexity: O(items + ranks). Throws: orch::invalid_argument (no ranks, a negative
  /// count), orch::overflow (Σ counts).
  [[nodiscard]] static layout contiguous(std::span<const index_t> items_per_rank) {
    if (items_per_rank.empty() ||
        items_per_rank.size() > static_cast<std::size_t>(std::numeric_limits<rank_t>::max())) {
      throw_invalid_argument("layout::contiguous: need 1 to 2^31-1 ranks, got ",
                             items_per_rank.size());
    }
    detail::layout_data l;
    l.ranks = static_cast<rank_t>(items_per_rank.size());
    l.first.assign(items_per_rank.size() + 1, 0);
    for (std::size_t r = 0; r < items_per_rank.size(); ++r) {
      if (items_per_rank[r] < 0) {
        throw_invalid_argument("layout::contiguous: rank ", r, " has negative count ",
                               items_per_rank[r]);
      }
      if (items_per_rank[r] > std::numeric_limits<index_t>::max() - l.first[r]) {
        throw_overflow("layout::contiguous: item count overflows at rank ", r);
      }
      l.first[r + 1] = l.first[r] + items_per_rank[r];
    }
    const auto n = static_cast<std::size_t>(l.first.back());
    l.rank_of.resize(n);
    l.slot_of.resize(n);
    l.order.resize(n);
    for (std::size_t r = 0; r < items_per_rank.size(); ++r) {
      for (auto i = static_cast<std::size_t>(l.first[r]);
           i < static_cast<std::size_t>(l.first[r + 1]); ++i) {
        l.rank_of[i] = static_cast<rank_t>(r);
        l.slot_of[i] = static_cast<index_t>(i) - l.first[r];
        l.order[i] = static_cast<index_t>(i);
      }
    }
    return layout(std::move(l));
  }

  /// Number of ranks. Complexity: O(1).
  [[nodiscard]] rank_t ranks() const noexcept { return d_->ranks; }
  /// Number of items. Complexity: O(1).
  [[nodiscard]] index_t items() const noexcept { return static_cast<index_t>(d_->rank_of.size()); }

  /// The rank holding `item`. Complexity: O(1). Throws: orch::invalid_argument (no such item).
  [[nodiscard]] rank_t rank_of(index_t item) const {
    check_item(item, "layout::rank_of");
    return d_->rank_of[static_cast<std::size_t>(item)];
  }
  /// The position of `item` in its rank's buffer. Complexity: O(1). Throws: as rank_of.
  [[nodiscard]] index_t slot_of(index_t item) const {
    check_item(item, "layout::slot_of");
    return d_->slot_of[static_cast<std::size_t>(item)];
  }
  /// Number of items on `rank`. Complexity: O(1). Throws: orch::invalid_argument.
  [[nodiscard]] index_t count_on(rank_t rank) const {
    check_rank(rank, "layout::count_on");
    const auto r = static_cast<std::size_t>(rank);
    return d_->first[r + 1] - d_->first[r];
  }
  /// The item in `slot` of `rank`. Complexity: O(1). Throws: orch::invalid_argument.
  [[nodiscard]] index_t item_at(rank_t rank, index_t slot) const {
    check_rank(rank, "layout::item_at");
    const auto r = static_cast<std::size_t>(rank);
    if (slot < 0 || slot >= d_->first[r + 1] - d_->first[r]) {
      throw_invalid_argument("layout::item_at: rank ", rank, " holds ",
                             d_->first[r + 1] - d_->first[r], " items, no slot ", slot);
    }
    return d_->order[static_cast<std::size_t>(d_->first[r] + slot)];
  }
  /// The items of `rank` in slot order. Complexity: O(1). Throws: orch::invalid_argument.
  [[nodiscard]] std::span<const index_t> items_on(rank_t rank) const {
    check_rank(rank, "layout::items_on");
    const auto r = static_cast<std::size_t>(rank);
    return std::span<const index_t>(d_->order).subspan(
        static_cast<std::size_t>(d_->first[r]),
        static_cast<std::size_t>(d_->first[r + 1] - d_->first[r]));
  }
  /// Rank of every item, indexed by item.
  [[nodiscard]] std::span<const rank_t> rank_of_items() const noexcept { return d_->rank_of; }
  /// Slot of every item, indexed by item.
  [[nodiscard]] std::span<const index_t> slot_of_items() const noexcept { return d_->slot_of; }
  /// All items in (rank, slot) order; rank r's run starts at first_on(r).
  [[nodiscard]] std::span<const index_t> order() const noexcept { return d_->order; }
  /// Offsets of every rank's run in order(): ranks() + 1 entries, the last is items().
  [[nodiscard]] std::span<const index_t> first_on() const noexcept { return d_->first; }

  /// Same ranks and the same (rank, slot) for every item. Complexity: O(items).
  friend bool operator==(const layout& a, const layout& b) noexcept {
    return a.d_ == b.d_ || (a.d_->ranks == b.d_->ranks && a.d_->rank_of == b.d_->rank_of &&
                            a.d_->slot_of == b.d_->slot_of);
  }

private:
  friend struct detail::layout_access;

  static void check_ranks(rank_t ranks, const char* where) {
    if (ranks <= 0) {
      throw_invalid_argument(where, ": number of ranks must be positive, got ", ranks);
    }
  }
  void check_item(index_t item, const char* where) const {
    if (item < 0 || item >= items()) {
      throw_invalid_argument(where, ": item ", item, " is outside [0, ", items(), ")");
    }
  }
  void check_rank(rank_t rank, const char* where) const {
    if (rank < 0 || rank >= d_->ranks) {
      throw_invalid_argument(where, ": rank ", rank, " is outside [0, ", d_->ranks, ")");
    }
  }

  /// The error of count_items, out of line: taking the values by copy keeps the loop's
  /// variables in registers (the throw helpers take references, which would pin them to the
  /// stack on every item).
  [[noreturn]] [[gnu::noinline]] static void throw_rank_outside(const char* where, std::size_t i,
                                                                rank_t r, rank_t ranks) {
    throw_invalid_argument(where, ": item ", i, " is on rank ", r, " outside [0, ", ranks, ")");
  }

  /// Validates the rank of every item and sets `first` to the offsets of every rank's run
  /// (ranks + 1 entries): a count per rank, then a prefix sum. Also copies every item's rank
  /// to `copy` (rank_of_item.size() entries) as it reads them: the layout's rank_of, which a
  /// copy of its own would read again.
  static void count_items(std::vector<index_t>& first, std::span<const rank_t> rank_of_item,
                          rank_t ranks, const char* where, rank_t* copy) {
    first.assign(static_cast<std::size_t>(ranks) + 1, 0);
    // Raw pointers and one unsigned comparison for the range (ranks > 0): the loop keeps
    // everything in registers, and the check is a predictable branch, not a pass of its own.
    index_t* const count = first.data() + 1;
    const rank_t* const rank = rank_of_item.data();
    const std::size_t n = rank_of_item.size();
    for (std::size_t i = 0; i < n; ++i) {
      const rank_t r = rank[i];
      if (static_cast<std::uint32_t>(r) >= static_cast<std::uint32_t>(ranks)) {
        throw_rank_outside(where, i, r, ranks);
      }
      ++count[r];
      copy[i] = r;
    }
    for (std::size_t r = 0; r < static_cast<std::size_t>(ranks); ++r) {
      first[r + 1] += first[r];
    }
  }

  /// slot_of from order (grouped by rank, first set).
  static void fill_slots_from_order(detail::layout_data& l) {
    for (std::size_t r = 0; r < static_cast<std::size_t>(l.ranks); ++r) {
      for (index_t p = l.first[r]; p < l.first[r + 1]; ++p) {
        l.slot_of[static_cast<std::size_t>(l.order[static_cast<std::size_t>(p)])] = p - l.first[r];
      }
    }
  }

  explicit layout(detail::layout_data&& d)
      : d_(std::make_shared<const detail::layout_data>(std::move(d))) {}

  static const std::shared_ptr<const detail::layout_data>& empty() {
    static const auto none = std::make_shared<const detail::layout_data>();
    return none;
  }

  std::shared_ptr<const detail::layout_data> d_;
};

namespace detail {

/// Library-internal construction of layouts that are valid by construction (no re-checks).
struct layout_access {
  /// `order` lists the items grouped by rank (ranks ascending) in slot order; `first` has
  /// ranks + 1 offsets; `rank_of` is the rank of every item.
  [[nodiscard]] static layout from_order(rank_t ranks, std::vector<rank_t> rank_of,
                                         std::vector<index_t> first, std::vector<index_t> order) {
    layout_data l;
    l.ranks = ranks;
    l.rank_of.assign(rank_of.begin(), rank_of.end());
    l.first = std::move(first);
    l.order.assign(order.begin(), order.end());
    l.slot_of.resize(l.rank_of.size());
    layout::fill_slots_from_order(l);
    return layout(std::move(l));
  }
  /// Every array given, consistent by construction: `order` lists the items grouped by rank
  /// (ranks ascending) in slot order, `first` has ranks + 1 offsets into it, and item i is at
  /// (rank_of[i], slot_of[i]) = position first[rank_of[i]] + slot_of[i] of order.
  [[nodiscard]] static layout from_parts(rank_t ranks, uninit_vector<rank_t> rank_of,
                                         uninit_vector<index_t> slot_of, std::vector<index_t> first,
                                         uninit_vector<index_t> order) {
    layout_data l;
    l.ranks = ranks;
    l.rank_of = std::move(rank_of);
    l.slot_of = std::move(slot_of);
    l.first = std::move(first);
    l.order = std::move(order);
    return layout(std::move(l));
  }
};

/// The first item whose placement differs between two layouts with the same number of items,
/// or -1 when they are equal. Complexity: O(items).
[[nodiscard]] inline index_t first_placement_difference(const layout& a, const layout& b) {
  const auto ra = a.rank_of_items();
  const auto rb = b.rank_of_items();
  const auto sa = a.slot_of_items();
  const auto sb = b.slot_of_items();
  for (std::size_t i = 0; i < ra.size() && i < rb.size(); ++i) {
    if (ra[i] != rb[i] || sa[i] != sb[i]) {
      return static_cast<index_t>(i);
    }
  }
  return -1;
}

} // namespace detail

} // namespace orch
