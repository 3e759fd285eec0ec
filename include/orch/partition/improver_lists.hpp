// SPDX-License-Identifier: Apache-2.0
/// The local search's per-bin item lists: sorted by cost descending, all in one arena.
#pragma once

#include <orch/partition/bin_order.hpp>
#include <orch/types.hpp>

#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <cstring>
#include <memory>
#include <span>
#include <utility>
#include <vector>

namespace orch::detail {

/// Every bin's items, each list by cost descending, index ascending, in one arena: one
/// allocation instead of one growing vector per bin, and scans that never chase the cost
/// array (each entry carries its cost). improver_state fills the lists once per search and
/// then keeps them sorted as items move; a list filled unsorted is sorted when first read, so
/// a search that touches few of many bins sorts only those.
class improver_lists {
public:
  /// An item in a bin's list, its cost inline.
  struct entry {
    cost_t c;
    std::uint32_t id;
  };

  /// The list order: cost descending, index ascending (a strict total order).
  [[nodiscard]] static bool before(const entry& a, const entry& b) noexcept {
    return a.c > b.c || (a.c == b.c && a.id < b.id);
  }

  /// Lays out k = counts.size() empty lists, bin b with room for counts[b] items and some
  /// slack, reusing the arena of the previous search. Slots are not cleared: push() writes
  /// every one that is ever read.
  void layout(std::span<const index_t> counts) {
    lists_.resize(counts.size()); // every slot is set below
    std::size_t offset = 0;
    for (std::size_t b = 0; b < counts.size(); ++b) {
      const auto c = static_cast<std::size_t>(counts[b]);
      lists_[b] = {offset, 0, c + slack(c), true};
      offset += lists_[b].cap;
    }
    arena_.resize(offset, false); // only [off, off + len) of a list is ever read
  }

  /// Appends e to bin b's list while filling (room was laid out for it). The caller pushes
  /// in list order, or calls unsorted() once the fill is done.
  void push(std::size_t b, const entry& e) noexcept {
    auto& l = lists_[b];
    arena_[l.off + l.len++] = e;
  }

  /// Marks the lists as filled out of order: each is sorted when first read.
  void unsorted() noexcept {
    for (auto& l : lists_) {
      l.sorted = l.len < 2;
    }
  }

  /// Bin b's item count (its list need not be sorted yet).
  [[nodiscard]] std::size_t size(std::size_t b) const noexcept { return lists_[b].len; }

  /// Bin b's items, by cost descending, index ascending (valid until a list changes).
  [[nodiscard]] std::span<const entry> items(std::size_t b) {
    const auto& l = sorted_list(b);
    return {arena_.data() + l.off, l.len};
  }

  /// Removes e (present) from bin b's list.
  void remove(std::size_t b, const entry& e) {
    auto& l = lists_[b];
    sorted_list(b);
    entry* first = arena_.data() + l.off;
    entry* last = first + l.len;
    entry* at = slot(first, l.len, e);
    std::copy(at + 1, last, at);
    --l.len;
  }

  /// Inserts e (absent) into bin b's list at its place.
  void insert(std::size_t b, const entry& e) {
    auto& l = lists_[b];
    sorted_list(b);
    if (l.len == l.cap) {
      // Full: move the list to the end of the arena with room to grow (its old slot is
      // abandoned; lists only grow by single moves, so this stays rare).
      const std::size_t off = arena_.size();
      const std::size_t cap = l.len + slack(l.len) + 1;
      arena_.resize(arena_.size() + cap, true);
      std::copy_n(arena_.data() + l.off, l.len, arena_.data() + off);
      l.off = off;
      l.cap = cap;
    }
    entry* first = arena_.data() + l.off;
    entry* last = first + l.len;
    entry* at = slot(first, l.len, e);
    std::copy_backward(at, last, last + 1);
    *at = e;
    ++l.len;
  }

  /// In bin b's list, `in` replaces `out`: it takes the leaving entry's slot and moves by
  /// neighbour shifts to its place, which in a short list is fewer moves than an erase and
  /// an insert (the list keeps its length).
  void replace(std::size_t b, const entry& out, const entry& in) {
    const auto& l = sorted_list(b);
    entry* first = arena_.data() + l.off;
    const auto at = static_cast<std::size_t>(slot(first, l.len, out) - first);
    reposition(first, l.len, at, in, [](const entry& x, const entry& y) { return before(x, y); });
  }

  /// Up to this many items per bin on average, a fill without an order goes in unsorted.
  static constexpr std::size_t sort_lists_max = 64;
  /// Lists up to this long take a swap by replace(); longer ones by remove() and insert().
  static constexpr std::size_t replace_max = 32;

private:
  /// A bin's list: arena_[off, off + len) by cost descending, index ascending; cap slots.
  struct list_slot {
    std::size_t off;
    std::size_t len;
    std::size_t cap;
    bool sorted; // else still in fill order (sorted_list() sorts it)
  };

  /// Lists of at most this many entries are sorted by insertion (sorted_list()).
  static constexpr std::size_t insert_max = 48;

  /// Spare room per list of `len` items: moves in and out of a bin mostly balance.
  [[nodiscard]] static std::size_t slack(std::size_t len) noexcept { return 2 + len / 4; }

  /// The first of n entries from `first` that is not before e (std::lower_bound by `before`,
  /// halving with a select per step instead of a branch).
  [[nodiscard]] static entry* slot(entry* first, std::size_t n, const entry& e) noexcept {
    if (n == 0) {
      return first;
    }
    while (n > 1) {
      const std::size_t half = n / 2;
      first = before(first[half], e) ? first + half : first;
      n -= half;
    }
    return before(*first, e) ? first + 1 : first;
  }

  /// Bin b's list, sorted first if it was filled unsorted: by insertion when short (a few
  /// shifts per item), else by std::sort.
  const list_slot& sorted_list(std::size_t b) {
    auto& l = lists_[b];
    if (!l.sorted) {
      entry* first = arena_.data() + l.off;
      if (l.len <= insert_max) {
        for (std::size_t x = 1; x < l.len; ++x) {
          const entry e = first[x];
          std::size_t at = x;
          for (; at > 0 && before(e, first[at - 1]); --at) {
            first[at] = first[at - 1];
          }
          first[at] = e;
        }
      } else {
        std::sort(first, first + l.len,
                  [](const entry& x, const entry& y) { return before(x, y); });
      }
      l.sorted = true;
    }
    return l;
  }

  /// Storage that grows without zero-filling: a fresh search's arena is as large as its
  /// input, and every slot is written before it is read (only lists' [off, off + len)).
  class arena_buffer {
  public:
    [[nodiscard]] entry* data() noexcept { return data_.get(); }
    [[nodiscard]] std::size_t size() const noexcept { return size_; }
    entry& operator[](std::size_t x) noexcept { return data_[x]; }
    /// Sets the size to n; with `keep`, the first size() entries survive a reallocation.
    void resize(std::size_t n, bool keep) {
      if (n > cap_) {
        const std::size_t cap = std::max(n, 2 * cap_);
        std::unique_ptr<entry[]> grown(new entry[cap]); // default-initialised: not zeroed
        if (keep && size_ > 0) { // bytes as they are: slack slots may never have been written
          std::memcpy(grown.get(), data_.get(), size_ * sizeof(entry));
        }
        data_ = std::move(grown);
        cap_ = cap;
      }
      size_ = n;
    }

  private:
    std::unique_ptr<entry[]> data_;
    std::size_t size_ = 0;
    std::size_t cap_ = 0;
  };

  std::vector<list_slot> lists_;
  arena_buffer arena_;
};

} // namespace orch::detail
