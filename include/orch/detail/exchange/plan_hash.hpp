// SPDX-License-Identifier: Apache-2.0
/// An exchange plan's 64-bit hash (exchange_plan::hash, format 2): what ranks compare before any
/// payload moves. Used by detail/exchange/plan_pairs.hpp.
#pragma once

#include <orch/detail/exchange/plan_data.hpp>
#include <orch/detail/primitives/hash.hpp>
#include <orch/types.hpp>

#include <cstddef>
#include <cstdint>
#include <initializer_list>

namespace orch::detail {

/// A plan's hash (see exchange_plan::hash): one word_hash chain per item field, absorbing
/// that field of every item in index order, so the five chains are independent and run side
/// by side (one chain over all five fields waits on a multiply per word).
class plan_hasher {
public:
  void add(rank_t from_rank, index_t from_slot, rank_t to_rank, index_t to_slot,
           bytes_t bytes) noexcept {
    h0_ = word_hash::absorb(h0_, static_cast<std::uint64_t>(from_rank));
    h1_ = word_hash::absorb(h1_, static_cast<std::uint64_t>(from_slot));
    h2_ = word_hash::absorb(h2_, static_cast<std::uint64_t>(to_rank));
    h3_ = word_hash::absorb(h3_, static_cast<std::uint64_t>(to_slot));
    h4_ = word_hash::absorb(h4_, static_cast<std::uint64_t>(bytes));
  }
  /// add(rank, slot, rank, slot, bytes) for an item that stays in its slot: the rank and slot
  /// words are spread once for the two chains that absorb each.
  void add_in_place(rank_t rank, index_t slot, bytes_t bytes) noexcept {
    const std::uint64_t rank_word = word_hash::spread(static_cast<std::uint64_t>(rank));
    const std::uint64_t slot_word = word_hash::spread(static_cast<std::uint64_t>(slot));
    h0_ = word_hash::absorb_spread(h0_, rank_word);
    h1_ = word_hash::absorb_spread(h1_, slot_word);
    h2_ = word_hash::absorb_spread(h2_, rank_word);
    h3_ = word_hash::absorb_spread(h3_, slot_word);
    h4_ = word_hash::absorb(h4_, static_cast<std::uint64_t>(bytes));
  }
  /// The hash of plan `p` once each of its items has been added (once).
  [[nodiscard]] std::uint64_t value(const plan_data& p) const noexcept {
    const auto n = static_cast<std::uint64_t>(p.from.items()); // words per chain
    word_hash h;
    h.add(0x6F72636870310002ULL); // "orchp1" + format version 2
    h.add_signed(p.from.ranks());
    h.add_signed(p.from.items());
    for (const std::uint64_t f : {h0_, h1_, h2_, h3_, h4_}) {
      h.add(word_hash::finish(f, n));
    }
    return h.value();
  }

private:
  // Bare states (no counters: every chain absorbs one word per item).
  std::uint64_t h0_ = word_hash::initial;
  std::uint64_t h1_ = word_hash::initial;
  std::uint64_t h2_ = word_hash::initial;
  std::uint64_t h3_ = word_hash::initial;
  std::uint64_t h4_ = word_hash::initial;
};

/// hash() of a plan (see exchange_plan::hash for the words). Complexity: O(items).
[[nodiscard]] inline std::uint64_t plan_hash(const plan_data& p) noexcept {
  plan_hasher h;
  const auto fr = p.from.rank_of_items();
  const auto fs = p.from.slot_of_items();
  const auto tr = p.to.rank_of_items();
  const auto ts = p.to.slot_of_items();
  const auto& bytes = *p.bytes;
  for (std::size_t i = 0; i < bytes.size(); ++i) {
    h.add(fr[i], fs[i], tr[i], ts[i], bytes[i]);
  }
  return h.value(p);
}

} // namespace orch::detail
