// SPDX-License-Identifier: Apache-2.0
/// Bins kept sorted while their keys change: the local search's view of the bins by time.
#pragma once

#include <orch/config.hpp>
#include <orch/types.hpp>

#include <algorithm>
#include <bit>
#include <cstddef>
#include <cstdint>
#include <span>
#include <utility>
#include <vector>

namespace orch::detail {

/// In the range [first, first + n), sorted by `less` except at `at`: gives position `at` the
/// value `e` and moves it by neighbour shifts to where `less` puts it; returns its index.
/// Entries between the old and the new place shift by one. With a handful of entries this is
/// a few moves, where an erase and an insert each shift the range and search it.
template <class T, class Less>
std::size_t reposition(T* first, std::size_t n, std::size_t at, const T& e, Less less) {
  for (; at > 0 && less(e, first[at - 1]); --at) {
    first[at] = first[at - 1];
  }
  for (; at + 1 < n && less(first[at + 1], e); ++at) {
    first[at] = first[at + 1];
  }
  first[at] = e;
  return at;
}

/// Every bin once with its load, sorted by a strict total order on (load, bin) that the
/// caller passes on each change, stored as a list of short sorted blocks. The loads are
/// stored beside the bins so that a comparison reads no other array.
///
/// Why blocks: local search reads partners from the front and critical bins from the back,
/// and each step moves two bins towards the middle. In one flat array every step shifts
/// about k entries (two memmoves of k/2); in blocks of ~64 a move shifts one block, and a
/// tree would chase pointers on every read.
/// Complexity: erase and insert O(log k + block), iteration O(1) per bin.
class bin_order {
public:
  /// A bin and its load when it was inserted.
  struct entry {
    cost_t load;
    rank_t bin;
  };

  /// A position: block and index within it. Valid until the next erase or insert.
  struct cursor {
    std::size_t block = 0;
    std::size_t at = 0;
  };

  /// Every bin b with loads[b], in the order (load, bin) ascending (improver_state::by_load),
  /// into `out`; `keys` is scratch. A node's few bins by insertion (a later bin goes after
  /// equal loads); many by one sort of packed keys (the load above the bin's bits: integer
  /// comparisons, no comparator calls) when the largest load leaves room for them.
  static void sort_by_load(std::span<const cost_t> loads, std::vector<entry>& out,
                           std::vector<std::uint64_t>& keys) {
    const std::size_t k = loads.size();
    out.resize(k);
    if (k <= 16) {
      for (std::size_t b = 0; b < k; ++b) {
        const entry e{loads[b], static_cast<rank_t>(b)};
        std::size_t at = b;
        for (; at > 0 && e.load < out[at - 1].load; --at) {
          out[at] = out[at - 1];
        }
        out[at] = e;
      }
      return;
    }
    const auto shift = static_cast<int>(std::bit_width(k - 1));
    const cost_t top = *std::max_element(loads.begin(), loads.end());
    if ((static_cast<std::uint64_t>(top) >> (64 - shift)) != 0) {
      for (std::size_t b = 0; b < k; ++b) {
        out[b] = {loads[b], static_cast<rank_t>(b)};
      }
      std::sort(out.begin(), out.end(), [](const entry& x, const entry& y) {
        return x.load < y.load || (x.load == y.load && x.bin < y.bin);
      });
      return;
    }
    keys.resize(k);
    for (std::size_t b = 0; b < k; ++b) {
      keys[b] = (static_cast<std::uint64_t>(loads[b]) << shift) | b;
    }
    std::sort(keys.begin(), keys.end());
    const std::uint64_t mask = (std::uint64_t{1} << shift) - 1;
    for (std::size_t x = 0; x < k; ++x) {
      out[x] = {static_cast<cost_t>(keys[x] >> shift), static_cast<rank_t>(keys[x] & mask)};
    }
  }

  /// `sorted`: every bin with its load, already in order.
  /// The blocks of an earlier assign() are reused (local search may run many times).
  void assign(std::span<const entry> sorted) {
    blocks_.resize(std::max<std::size_t>(1, (sorted.size() + block_size - 1) / block_size));
    blocks_[0].clear(); // stays empty when there are no bins
    for (std::size_t first = 0; first < sorted.size(); first += block_size) {
      const std::size_t last = std::min(sorted.size(), first + block_size);
      blocks_[first / block_size].assign(sorted.begin() + static_cast<std::ptrdiff_t>(first),
                                         sorted.begin() + static_cast<std::ptrdiff_t>(last));
    }
  }

  [[nodiscard]] cursor first() const noexcept { return {}; }
  [[nodiscard]] cursor last() const noexcept {
    return {blocks_.size() - 1, blocks_.back().size() - 1};
  }
  [[nodiscard]] bool valid(const cursor& c) const noexcept {
    return c.block < blocks_.size() && c.at < blocks_[c.block].size();
  }
  [[nodiscard]] rank_t operator[](const cursor& c) const noexcept {
    return blocks_[c.block][c.at].bin;
  }
  [[nodiscard]] rank_t back() const noexcept { return blocks_.back().back().bin; }

  /// Steps to the next bin (invalid past the end).
  void next(cursor& c) const noexcept {
    if (++c.at == blocks_[c.block].size()) {
      ++c.block;
      c.at = 0;
    }
  }

  /// Steps to the previous bin; false at the first one.
  bool prev(cursor& c) const noexcept {
    if (c.at > 0) {
      --c.at;
      return true;
    }
    if (c.block == 0) {
      return false;
    }
    --c.block;
    c.at = blocks_[c.block].size() - 1;
    return true;
  }

  /// Removes the bin at c. A later cursor in the same block moves down by one; cursors in
  /// earlier blocks and earlier in the same block stay valid.
  void erase(const cursor& c) {
    auto& blk = blocks_[c.block];
    blk.erase(blk.begin() + static_cast<std::ptrdiff_t>(c.at));
    if (blk.empty() && blocks_.size() > 1) {
      blocks_.erase(blocks_.begin() + static_cast<std::ptrdiff_t>(c.block));
    }
  }

  /// True when all bins are in one block (few bins): then update() serves every change.
  [[nodiscard]] bool single_block() const noexcept { return blocks_.size() == 1; }

  /// With a single block: gives the entry at c the key `e` (its bin, a new load) and moves
  /// it to where `less` puts it (reposition); returns its new index. Cursors elsewhere stay
  /// valid.
  template <class Less>
  std::size_t update(const cursor& c, const entry& e, Less less) {
    ORCH_ASSERT(single_block());
    auto& blk = blocks_[0];
    return reposition(blk.data(), blk.size(), c.at, e, less);
  }

  /// Inserts `e` where `less` (a strict total order on entries) puts it.
  template <class Less>
  void insert(const entry& e, Less less) {
    // The first block whose last entry comes after e (else the last block) receives it.
    std::size_t lo = 0;
    std::size_t hi = blocks_.size() - 1;
    while (lo < hi) {
      const std::size_t mid = lo + (hi - lo) / 2;
      if (less(e, blocks_[mid].back())) {
        hi = mid;
      } else {
        lo = mid + 1;
      }
    }
    auto& blk = blocks_[lo];
    // Upper bound without branches on the data: halve the range with a select each step.
    std::size_t pos = 0;
    if (!blk.empty()) {
      std::size_t n = blk.size();
      const entry* base = blk.data();
      while (n > 1) {
        const std::size_t half = n / 2;
        base = less(e, base[half]) ? base : base + half;
        n -= half;
      }
      pos = static_cast<std::size_t>(base - blk.data()) + (less(e, *base) ? 0 : 1);
    }
    blk.insert(blk.begin() + static_cast<std::ptrdiff_t>(pos), e);
    if (blk.size() >= 2 * block_size) {
      // Split in halves so blocks stay short.
      std::vector<entry> upper(blk.begin() + static_cast<std::ptrdiff_t>(block_size), blk.end());
      blk.resize(block_size);
      blocks_.insert(blocks_.begin() + static_cast<std::ptrdiff_t>(lo) + 1, std::move(upper));
    }
  }

private:
  static constexpr std::size_t block_size = 64;
  std::vector<std::vector<entry>> blocks_; // each sorted; their concatenation is the order
};

} // namespace orch::detail
