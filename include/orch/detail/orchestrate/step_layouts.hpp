// SPDX-License-Identifier: Apache-2.0
/// Internals of orch/orchestrate/orchestrate.hpp: the layouts of a step that follow the examples
/// (the examples on their owner, each encoder's media on the rank of their example), and the
/// features' layout on the LLM ranks in the order the encoder ranks deliver them.
#pragma once

#include <orch/config.hpp>
#include <orch/detail/orchestrate/step_inputs.hpp>
#include <orch/detail/primitives/uninit_vector.hpp>
#include <orch/exchange/layout.hpp>
#include <orch/orchestrate/item_table.hpp>
#include <orch/types.hpp>

#include <cstddef>
#include <span>
#include <utility>
#include <vector>

namespace orch::detail {

/// The examples on their owner rank, in local-index order (the table is validated: local
/// indices of a rank are exactly 0..count−1, so an example's slot is its local index).
/// Complexity: O(examples + ranks).
inline layout owner_layout(const item_table& table, rank_t ranks) {
  const rank_t* const owners = table.owners().data();
  const index_t* const local = table.local_indices().data();
  const std::size_t examples = table.owners().size();
  // Every array is written once, by index: the count pass copies the ranks and the scatter
  // the slots as they read them (copies of their own would read both columns again).
  uninit_vector<rank_t> rank_of(examples);
  uninit_vector<index_t> slot_of(examples);
  uninit_vector<index_t> order(examples); // a permutation: every entry written once
  std::vector<index_t> first(static_cast<std::size_t>(ranks) + 1, 0);
  index_t* const count = first.data() + 1;
  for (std::size_t x = 0; x < examples; ++x) {
    const rank_t r = owners[x];
    rank_of[x] = r;
    ++count[r];
  }
  for (std::size_t r = 0; r < static_cast<std::size_t>(ranks); ++r) {
    first[r + 1] += first[r];
  }
  const index_t* const start = first.data();
  for (std::size_t x = 0; x < examples; ++x) {
    const index_t slot = local[x];
    slot_of[x] = slot;
    order[static_cast<std::size_t>(start[owners[x]] + slot)] = static_cast<index_t>(x);
  }
  return layout_access::from_parts(ranks, std::move(rank_of), std::move(slot_of), std::move(first),
                                   std::move(order));
}

/// Per encoder: the layout of its items (phase item i ↔ table media `encoder_media[e][i]`)
/// on the rank of their example in `examples_layout`, ordered there by (slot of the example,
/// position in the example). One walk over the examples serves every encoder and writes
/// every array of every layout once (rank and slot of each item, the order, the offsets).
/// Complexity: O(examples + media + encoders · ranks).
inline std::vector<layout> media_layouts_following(const item_table& table, const step_inputs& in,
                                                   const layout& examples_layout) {
  const rank_t ranks = examples_layout.ranks();
  const std::size_t encoders = in.encoder_media.size();
  struct building {
    uninit_vector<rank_t> rank_of;
    uninit_vector<index_t> slot_of;
    std::vector<index_t> first;
    uninit_vector<index_t> order;
  };
  std::vector<building> out(encoders);
  for (std::size_t e = 0; e < encoders; ++e) {
    out[e].rank_of.resize(in.encoder_media[e].size());
    out[e].slot_of.resize(in.encoder_media[e].size());
    out[e].first.resize(static_cast<std::size_t>(ranks) + 1);
    out[e].order.resize(in.encoder_media[e].size());
  }
  // Per encoder: the items it placed on the current rank (= the next slot), that rank's run
  // in its order, and the arrays (raw pointers, so that the loop's stores do not reload the
  // vectors). A slot needs no subtraction and only the slot count is read and written per item.
  struct cursor {
    index_t slot = 0;
    index_t* run = nullptr; // order + first position of the current rank
    rank_t* rank_of = nullptr;
    index_t* slot_of = nullptr;
  };
  std::vector<cursor> at(encoders);
  std::vector<index_t> next(encoders, 0); // per encoder: first position of the current rank
  for (std::size_t e = 0; e < encoders; ++e) {
    at[e].rank_of = out[e].rank_of.data();
    at[e].slot_of = out[e].slot_of.data();
  }
  const auto order = examples_layout.order();
  const auto first = examples_layout.first_on();
  const auto offsets = table.media_offsets();
  const std::int32_t* const encoder_of = in.media_encoder.data();
  const index_t* const phase_index = in.phase_index.data();
  // Each rank's examples in slot order and their media in order: that is the slot order.
  for (std::size_t r = 0; r + 1 < first.size(); ++r) {
    for (std::size_t e = 0; e < encoders; ++e) {
      out[e].first[r] = next[e];
      at[e].slot = 0;
      at[e].run = out[e].order.data() + next[e];
    }
    const auto end = static_cast<std::size_t>(first[r + 1]);
    for (auto p = static_cast<std::size_t>(first[r]); p < end; ++p) {
      const auto x = static_cast<std::size_t>(order[p]);
      const auto media_end = static_cast<std::size_t>(offsets[x + 1]);
      for (auto m = static_cast<std::size_t>(offsets[x]); m < media_end; ++m) {
        cursor& c = at[static_cast<std::size_t>(encoder_of[m])];
        const index_t i = phase_index[m];
        const index_t slot = c.slot++;
        c.run[slot] = i;
        c.rank_of[i] = static_cast<rank_t>(r);
        c.slot_of[i] = slot;
      }
    }
    for (std::size_t e = 0; e < encoders; ++e) {
      next[e] += at[e].slot;
    }
  }
  std::vector<layout> layouts;
  layouts.reserve(encoders);
  for (std::size_t e = 0; e < encoders; ++e) {
    out[e].first[static_cast<std::size_t>(ranks)] = next[e];
    layouts.push_back(layout_access::from_parts(ranks, std::move(out[e].rank_of),
                                                std::move(out[e].slot_of), std::move(out[e].first),
                                                std::move(out[e].order)));
  }
  return layouts;
}

/// An encoder's items on the LLM rank of their example (`llm_rank[example_of[i]]`), ordered
/// there by (rank in `placement`, slot in `placement`): the order in which a flat exchange
/// from `placement` delivers them (each sender packs its items per peer in slot order, peers
/// ascending), so the features exchange unpacks nothing and the assembly, which gathers
/// features by index anyway, does the reordering once.
/// Complexity: O(items + ranks) (counting sort).
inline layout layout_in_arrival_order(const layout& placement, std::span<const index_t> example_of,
                                      std::span<const rank_t> llm_rank) {
  const rank_t ranks = placement.ranks();
  const std::size_t items = example_of.size();
  ORCH_ASSERT(static_cast<std::size_t>(placement.items()) == items);
  uninit_vector<rank_t> rank_of(items);
  uninit_vector<index_t> slot_of(items);
  uninit_vector<index_t> order(items); // a permutation: every entry written once
  std::vector<index_t> first(static_cast<std::size_t>(ranks) + 1, 0);
  for (std::size_t i = 0; i < items; ++i) {
    const rank_t r = llm_rank[static_cast<std::size_t>(example_of[i])];
    rank_of[i] = r;
    ++first[static_cast<std::size_t>(r) + 1];
  }
  for (std::size_t r = 0; r < static_cast<std::size_t>(ranks); ++r) {
    first[r + 1] += first[r];
  }
  std::vector<index_t> next(first.begin(), first.end() - 1);
  // placement.order() lists the items by (rank, slot): the arrival order on every receiver.
  for (const index_t i : placement.order()) {
    const auto r = static_cast<std::size_t>(rank_of[static_cast<std::size_t>(i)]);
    const index_t at = next[r]++;
    slot_of[static_cast<std::size_t>(i)] = at - first[r];
    order[static_cast<std::size_t>(at)] = i;
  }
  return layout_access::from_parts(ranks, std::move(rank_of), std::move(slot_of), std::move(first),
                                   std::move(order));
}

} // namespace orch::detail
