// SPDX-License-Identifier: Apache-2.0
/// The shared part of an exchange plan — buffer totals, self bytes, the sparse (source,
/// destination) pair table — with its hash (plan_hash.hpp). Used by detail/exchange/plan_build.hpp
/// (include orch/exchange/plan.hpp).
#pragma once

#include <orch/config.hpp>
#include <orch/detail/exchange/plan_data.hpp>
#include <orch/detail/exchange/plan_hash.hpp>
#include <orch/exchange/layout.hpp>
#include <orch/types.hpp>

#include <algorithm>
#include <bit>
#include <cstddef>
#include <cstdint>
#include <memory>
#include <span>
#include <vector>

namespace orch::detail {

/// Throws orch::overflow for the `buffer` buffer of rank `r` under `l`, naming the item at
/// which the running sum in slot order passes 2^63 - 1 (only called once that is known).
[[noreturn]] inline void throw_buffer_overflow(const layout& l, std::span<const bytes_t> bytes,
                                               rank_t r, const char* where, const char* buffer) {
  bytes_t acc = 0;
  for (const index_t item : l.items_on(r)) {
    const bytes_t b = bytes[static_cast<std::size_t>(item)];
    if (__builtin_add_overflow(acc, b, &acc)) {
      throw_overflow(where, ": the ", buffer, " buffer of rank ", r,
                     " exceeds 2^63 - 1 bytes at item ", item, " (", b, " bytes)");
    }
  }
  ORCH_ASSERT(false);
  throw_overflow(where, ": the ", buffer, " buffer of rank ", r, " exceeds 2^63 - 1 bytes");
}

/// Throws the error that a buffer sum past 2^63 - 1 calls for, in the order of the checks:
/// the lowest destination rank whose buffer overflows, else the lowest source rank, else the
/// rank at which the total does (only called once one of them is known to).
[[noreturn]] inline void throw_plan_overflow(const plan_data& p, const char* where) {
  const auto& bytes = *p.bytes;
  for (rank_t d = 0; d < p.to.ranks(); ++d) {
    bytes_t acc = 0;
    for (const index_t item : p.to.items_on(d)) {
      if (__builtin_add_overflow(acc, bytes[static_cast<std::size_t>(item)], &acc)) {
        throw_buffer_overflow(p.to, bytes, d, where, "destination");
      }
    }
  }
  bytes_t total = 0;
  for (rank_t r = 0; r < p.from.ranks(); ++r) {
    bytes_t acc = 0;
    for (const index_t item : p.from.items_on(r)) {
      if (__builtin_add_overflow(acc, bytes[static_cast<std::size_t>(item)], &acc)) {
        throw_buffer_overflow(p.from, bytes, r, where, "source");
      }
    }
    if (__builtin_add_overflow(total, acc, &total)) {
      throw_overflow(where, ": the bytes of all ranks exceed 2^63 - 1 (at rank ", r, ")");
    }
  }
  ORCH_ASSERT(false);
  throw_overflow(where, ": a buffer exceeds 2^63 - 1 bytes");
}

/// pairs_by_source_with_hash for a plan whose two layouts share their arrays (copies of one
/// layout: a step that leaves a phase on the owners): every item stays in its slot, so each
/// rank with items has one pair, to itself, and no destination needs tallying. The hash is the
/// same as the general pass's (plan_hasher::add_in_place).
[[nodiscard]] inline bool identity_pairs_with_hash(plan_data& p) {
  const auto& bytes = *p.bytes;
  const auto k = static_cast<std::size_t>(p.from.ranks());
  const auto first = p.from.first_on();
  const rank_t* const rank_of = p.from.rank_of_items().data();
  const index_t* const slot_of = p.from.slot_of_items().data();
  const bytes_t* const size = bytes.data();
  p.source_total.assign(k, 0); // each rank's buffer: the sum of its items, in item order
  bytes_t* const sum = p.source_total.data();
  bool overflow = false; // sizes are non-negative: a sum overflows in any order or in none
  plan_hasher h;
  for (std::size_t i = 0; i < bytes.size(); ++i) {
    h.add_in_place(rank_of[i], slot_of[i], size[i]);
    overflow |= __builtin_add_overflow(sum[rank_of[i]], size[i], &sum[rank_of[i]]);
  }
  p.destination_total = p.source_total;
  p.self = p.source_total;
  p.pair_first.resize(k + 1);
  p.pair_first[0] = 0;
  p.pair_peer.clear();
  p.pair_items.clear();
  p.pair_bytes.clear();
  p.total = 0;
  for (std::size_t r = 0; r < k; ++r) {
    const index_t items = first[r + 1] - first[r];
    if (items > 0) {
      p.pair_peer.push_back(static_cast<rank_t>(r));
      p.pair_items.push_back(items);
      p.pair_bytes.push_back(sum[r]);
    }
    p.pair_first[r + 1] = static_cast<index_t>(p.pair_peer.size());
    overflow |= __builtin_add_overflow(p.total, sum[r], &p.total);
  }
  p.hash = h.value(p);
  p.hash_known = true;
  return !overflow;
}

/// The pair table, buffer totals and self bytes of `p` (layouts and sizes set) and its hash
/// (make_plan). Returns false when a sum passes 2^63 - 1 (the arrays are then meaningless).
///
/// One pass over the source layout, a rank at a time: the rank's items add up per destination
/// in scratch arrays indexed by rank; the destinations touched are sorted and become the
/// rank's pairs (scratch entries are reset as they are emitted). Destination totals are sums
/// over pairs. So the items are read once, in source order, and nothing of size items is
/// written. Sums wrap on overflow and set a flag instead of branching; the caller rebuilds
/// the exact error from the layouts (throw_plan_overflow).
/// The hash runs in the same loop (position e of the source order hashes item e, so the items
/// are still hashed in item order): its multiply chains are latency-bound, and the CPU
/// overlaps them with the pair work instead of running them after. This pass wins when ranks
/// have few peers (an orchestrated step); with a peer per item, pairs_by_destination is
/// faster, but make_plan's callers want the hash, which this pass gives almost for free.
/// Complexity: O(items log(peers per rank) + ranks).
[[nodiscard]] inline bool pairs_by_source_with_hash(plan_data& p) {
  if (p.from.rank_of_items().data() == p.to.rank_of_items().data() &&
      p.from.slot_of_items().data() == p.to.slot_of_items().data()) {
    return identity_pairs_with_hash(p);
  }
  const auto& bytes = *p.bytes;
  const auto k = static_cast<std::size_t>(p.from.ranks());
  const auto first = p.from.first_on();
  const auto order = p.from.order();
  const auto to_rank = p.to.rank_of_items();
  const auto from_rank = p.from.rank_of_items();
  const auto from_slot = p.from.slot_of_items();
  const auto to_slot = p.to.slot_of_items();
  plan_hasher h;
  // Per destination rank, of the current source rank: items and bytes (side by side: an item
  // touches one cache line). Raw pointers in the item loop, so that its stores do not make
  // the compiler reload the vectors' data pointers.
  struct tally {
    index_t count = 0;
    bytes_t sum = 0;
  };
  std::vector<tally> per(k);
  tally* const per_rank = per.data();
  // Destinations of the current source rank in first-touch order: the first `peers` entries.
  // Every item writes the entry after them (kept only if it opens a pair): k + 1 entries.
  std::vector<rank_t> touched(k + 1);
  rank_t* const touched_at = touched.data();
  std::vector<std::uint64_t> seen((k + 63) / 64, 0); // all zero between ranks
  p.source_total.resize(k);
  p.destination_total.assign(k, 0);
  p.self.assign(k, 0);
  p.pair_first.resize(k + 1);
  p.pair_first[0] = 0;
  // Reserved, not touched: the pages of unused capacity are never faulted in.
  const std::size_t most = std::min(bytes.size(), k * k);
  p.pair_peer.reserve(most);
  p.pair_items.reserve(most);
  p.pair_bytes.reserve(most);
  bool overflow = false;
  p.total = 0;
  const bytes_t* const size = bytes.data();
  const index_t* const source_order = order.data();
  const rank_t* const destination = to_rank.data();
  for (std::size_t r = 0; r < k; ++r) {
    std::size_t peers = 0;
    const auto end = static_cast<std::size_t>(first[r + 1]);
    for (auto e = static_cast<std::size_t>(first[r]); e < end; ++e) {
      h.add(from_rank[e], from_slot[e], destination[e], to_slot[e], size[e]);
      const auto item = static_cast<std::size_t>(source_order[e]);
      const rank_t d = destination[item];
      tally& t = per_rank[d];
      // Branch-free: whether an item opens a pair is as unpredictable as the data.
      touched_at[peers] = d;
      peers += t.count++ == 0 ? std::size_t{1} : std::size_t{0};
      overflow |= __builtin_add_overflow(t.sum, size[item], &t.sum);
    }
    const auto mine = touched.begin();
    if (peers <= 2 || 8 * peers < seen.size()) {
      std::sort(mine, mine + static_cast<std::ptrdiff_t>(peers)); // few for the ranks
    } else {
      // Sorting mispredicts about a branch per comparison; reading the peers off a bitmap of
      // the ranks in ascending order costs O(ranks / 64) instead, here ≤ 8 words per peer.
      for (std::size_t t = 0; t < peers; ++t) {
        const auto d = static_cast<std::size_t>(touched[t]);
        seen[d / 64] |= std::uint64_t{1} << (d % 64);
      }
      std::size_t t = 0;
      for (std::size_t w = 0; w < seen.size(); ++w) {
        for (; seen[w] != 0; seen[w] &= seen[w] - 1) {
          touched[t++] =
              static_cast<rank_t>(64 * w + static_cast<std::size_t>(std::countr_zero(seen[w])));
        }
      }
    }
    // The rank's buffer is the sum of its pairs (it overflows if a pair does or their sum does).
    bytes_t acc = 0;
    for (std::size_t t = 0; t < peers; ++t) {
      const rank_t peer = touched[t];
      const auto d = static_cast<std::size_t>(peer);
      tally& pair = per[d];
      const bytes_t sum = pair.sum;
      p.pair_peer.push_back(peer);
      p.pair_items.push_back(pair.count);
      p.pair_bytes.push_back(sum);
      overflow |= __builtin_add_overflow(acc, sum, &acc);
      overflow |= __builtin_add_overflow(p.destination_total[d], sum, &p.destination_total[d]);
      if (d == r) {
        p.self[r] = sum;
      }
      pair = tally{};
    }
    p.source_total[r] = acc;
    p.pair_first[r + 1] = static_cast<index_t>(p.pair_peer.size());
    overflow |= __builtin_add_overflow(p.total, acc, &p.total);
  }
  p.hash = h.value(p);
  p.hash_known = true;
  return !overflow;
}

/// The pair table, buffer totals and self bytes of `p` (layouts and sizes set), without the
/// hash (compose, schedule stages). Throws as build_plan.
///
/// One pass over the destination layout (ranks ascending, slots ascending): destination
/// buffer sizes, and a stable counting sort of (destination, bytes) records by source rank.
/// The records of a source rank then come sorted by destination: runs are the pairs, read in
/// a second pass. Complexity: O(items + ranks).
inline void pairs_by_destination(plan_data& p, const char* where) {
  const auto& bytes = *p.bytes;
  const auto n = bytes.size();
  const auto k = static_cast<std::size_t>(p.from.ranks());
  const auto from_rank = p.from.rank_of_items();
  const auto first = p.from.first_on();
  const auto to_first = p.to.first_on();
  const auto to_order = p.to.order();
  struct record {
    rank_t to;
    bytes_t bytes;
  };
  // Every record is written before it is read: no value-initialisation (it would only touch
  // the pages twice).
  const std::unique_ptr<record[]> grouped(new record[n]);
  std::vector<index_t> next(first.begin(), first.end() - 1);
  p.destination_total.resize(k);
  for (std::size_t d = 0; d < k; ++d) {
    bytes_t acc = 0;
    for (auto x = static_cast<std::size_t>(to_first[d]);
         x < static_cast<std::size_t>(to_first[d + 1]); ++x) {
      const auto item = static_cast<std::size_t>(to_order[x]);
      const bytes_t b = bytes[item];
      if (__builtin_add_overflow(acc, b, &acc)) {
        throw_buffer_overflow(p.to, bytes, static_cast<rank_t>(d), where, "destination");
      }
      const auto s = static_cast<std::size_t>(from_rank[item]);
      grouped[static_cast<std::size_t>(next[s]++)] = {static_cast<rank_t>(d), b};
    }
    p.destination_total[d] = acc;
  }
  p.source_total.resize(k);
  p.self.assign(k, 0);
  p.pair_first.resize(k + 1);
  p.pair_first[0] = 0;
  // Reserved, not touched: the pages of unused capacity are never faulted in.
  const std::size_t most = std::min(n, k * k);
  p.pair_peer.reserve(most);
  p.pair_items.reserve(most);
  p.pair_bytes.reserve(most);
  p.total = 0;
  for (std::size_t r = 0; r < k; ++r) {
    bytes_t acc = 0;
    auto e = static_cast<std::size_t>(first[r]);
    const auto end = static_cast<std::size_t>(first[r + 1]);
    while (e < end) { // a run (one destination) at a time: a run is a pair
      const rank_t peer = grouped[e].to;
      const std::size_t begin = e;
      bytes_t run = 0;
      bool overflow = false;
      do {
        overflow |= __builtin_add_overflow(run, grouped[e].bytes, &run);
        ++e;
      } while (e < end && grouped[e].to == peer);
      // The run is part of the rank's buffer: it overflows only if the buffer does.
      if (overflow || __builtin_add_overflow(acc, run, &acc)) {
        throw_buffer_overflow(p.from, bytes, static_cast<rank_t>(r), where, "source");
      }
      p.pair_peer.push_back(peer);
      p.pair_items.push_back(static_cast<index_t>(e - begin));
      p.pair_bytes.push_back(run);
      if (peer == static_cast<rank_t>(r)) {
        p.self[r] = run;
      }
    }
    p.source_total[r] = acc;
    p.pair_first[r + 1] = static_cast<index_t>(p.pair_peer.size());
    if (__builtin_add_overflow(p.total, acc, &p.total)) {
      throw_overflow(where, ": the bytes of all ranks exceed 2^63 - 1 (at rank ", r, ")");
    }
  }
}

} // namespace orch::detail
