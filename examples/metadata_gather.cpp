// SPDX-License-Identifier: Apache-2.0
// The trainer's path on 4 simulated data-parallel ranks: every rank serialises its sampled
// batch (orch/orchestrate/metadata.hpp), the buffers are "all-gathered", every rank decodes the
// identical item table, the ranks balance their examples by tokens, and one exchange moves the
// token ids with the payload helpers (orch/exchange/payload.hpp): pack_items from per-example
// spans, then lookups of every received example in the receive and destination buffers. Every line
// printed is checked first; a failed check exits with 1.
//
// Usage: example_metadata_gather
#include <orch/orch.hpp>

#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <span>
#include <string>
#include <vector>

namespace {

constexpr orch::rank_t ranks = 4;

// One sampled example as the data loader hands it over: token ids and its media.
struct sample {
  std::vector<std::int32_t> tokens;
  std::vector<orch::media_spec> media;
};

// Rank r's mini-batch: 3 + r examples of deterministic lengths, with images and audio clips.
std::vector<sample> load_batch(orch::rank_t r) {
  std::vector<sample> batch;
  for (int e = 0; e < 3 + r; ++e) {
    sample s;
    const int length = 40 + ((r * 37 + e * 53) % 11) * 30;
    for (int t = 0; t < length; ++t) {
      s.tokens.push_back(static_cast<std::int32_t>(1000 * (10 * r + e) + t));
    }
    if ((r + e) % 2 == 0) {
      s.media.push_back({"image", 256 + 64 * e, 1});
    }
    if ((r + e) % 3 == 0) {
      s.media.push_back({"audio", 1500, length / 2});
    }
    batch.push_back(std::move(s));
  }
  return batch;
}

bool same_table(const orch::item_table& a, const orch::item_table& b) {
  const auto eq = [](auto x, auto y) { return std::equal(x.begin(), x.end(), y.begin(), y.end()); };
  return eq(a.owners(), b.owners()) && eq(a.local_indices(), b.local_indices()) &&
         eq(a.text_lengths(), b.text_lengths()) && eq(a.media_offsets(), b.media_offsets()) &&
         eq(a.media_fields(), b.media_fields()) && eq(a.media_lengths(), b.media_lengths()) &&
         eq(a.media_text_positions(), b.media_text_positions()) &&
         a.field_names() == b.field_names();
}

int failures = 0;

void check(bool ok, const char* what) {
  if (!ok) {
    std::printf("CHECK FAILED: %s\n", what);
    ++failures;
  }
}

} // namespace

int main() try {
  std::vector<std::vector<sample>> batches;
  for (orch::rank_t r = 0; r < ranks; ++r) {
    batches.push_back(load_batch(r));
  }

  // [doc: serialize]
  // On rank r: describe the local examples (local index = order of adding) and serialise.
  std::vector<std::vector<std::int64_t>> buffers; // buffers[r]: what rank r contributes
  for (orch::rank_t r = 0; r < ranks; ++r) {
    orch::local_batch local;
    for (const auto& s : batches[static_cast<std::size_t>(r)]) {
      (void)local.add(static_cast<orch::length_t>(s.tokens.size()), s.media);
    }
    buffers.push_back(local.serialize(r));
  }
  // [doc: end]
  std::printf("serialised %d ranks: %zu, %zu, %zu, %zu words\n", ranks, buffers[0].size(),
              buffers[1].size(), buffers[2].size(), buffers[3].size());

  // [doc: decode]
  // The all-gather hands every rank all buffers, as a list (one tensor per rank) ...
  const std::vector<std::span<const std::int64_t>> gathered(buffers.begin(), buffers.end());
  // ... or back to back with per-rank word counts (MPI_Allgatherv).
  std::vector<std::int64_t> concatenated;
  std::vector<std::int64_t> counts;
  for (const auto& b : buffers) {
    concatenated.insert(concatenated.end(), b.begin(), b.end());
    counts.push_back(static_cast<std::int64_t>(b.size()));
  }
  // Every rank decodes; examples come rank by rank in local-index order.
  std::vector<orch::item_table> tables;
  for (orch::rank_t r = 0; r < ranks; ++r) {
    tables.push_back(r % 2 == 0 ? orch::table_from_metadata(gathered)
                                : orch::table_from_metadata(concatenated, counts));
  }
  const orch::item_table& table = tables[0];
  table.validate(ranks);
  // [doc: end]
  bool identical = true;
  for (const auto& t : tables) {
    identical = identical && same_table(t, table);
  }
  check(identical, "every rank decodes the same table");
  std::printf("%d ranks decoded identical tables: %lld examples, %lld media items, fields", ranks,
              static_cast<long long>(table.examples()),
              static_cast<long long>(table.media_items()));
  for (const auto& f : table.field_names()) {
    std::printf(" %s", f.c_str());
  }
  std::printf("\n");
  // Global example index = examples of lower ranks + local index.
  const orch::index_t global = 3 + 4 + 1; // rank 2, local index 1
  check(table.owner(global) == 2 && table.local_index(global) == 1, "global index");
  std::printf("rank 2 local example 1 is example %lld: %lld text tokens\n",
              static_cast<long long>(global), static_cast<long long>(table.text_tokens(global)));

  // Balance the examples by text tokens and move their token ids (4 bytes each).
  std::vector<orch::cost_t> costs(table.text_lengths().begin(), table.text_lengths().end());
  const auto balanced = orch::lpt(costs, ranks);
  const auto from = orch::layout::from_assignment(table.owners(), ranks);
  const auto to = orch::layout::from_assignment(balanced.bin_of, ranks);
  std::vector<orch::bytes_t> bytes;
  for (const auto t : table.text_lengths()) {
    bytes.push_back(4 * t);
  }
  const auto plan = orch::make_plan(from, to, bytes);
  std::printf("plan %016llx: %lld bytes, %lld of them stay on their rank\n",
              static_cast<unsigned long long>(plan.hash()),
              static_cast<long long>(plan.total_bytes()),
              static_cast<long long>(plan.self_bytes(0) + plan.self_bytes(1) + plan.self_bytes(2) +
                                     plan.self_bytes(3)));

  // [doc: pack]
  // On rank r: pack the send buffer straight from the examples' own storage.
  std::vector<orch::rank_view> views;
  orch::rank_buffers send(ranks);
  for (orch::rank_t r = 0; r < ranks; ++r) {
    views.push_back(plan.view(r));
    const auto& mine = batches[static_cast<std::size_t>(r)];
    send[static_cast<std::size_t>(r)].resize(static_cast<std::size_t>(views.back().source_bytes));
    orch::pack_items(
        views.back(),
        [&](orch::index_t example) {
          const auto local = static_cast<std::size_t>(table.local_index(example));
          return std::as_bytes(std::span(mine[local].tokens));
        },
        send[static_cast<std::size_t>(r)]);
  }
  // [doc: end]
  const orch::rank_buffers recv = orch::all_to_all(views, send);

  // [doc: lookup]
  // On rank r: find every received example's tokens, without unpacking and after it.
  for (orch::rank_t r = 0; r < ranks; ++r) {
    const auto& view = views[static_cast<std::size_t>(r)];
    const auto& received = recv[static_cast<std::size_t>(r)];
    std::vector<std::byte> destination(received.size());
    orch::unpack(view, received, destination);
    const orch::received_items by_item(view);
    const auto slots = orch::rank_offsets::destination(plan, r);
    std::size_t tokens = 0;
    bool intact = true;
    for (orch::index_t s = 0; s < slots.slots(); ++s) {
      const orch::item_range at = slots.at(s); // the s-th example of the new batch
      const auto in_recv = by_item.receive_bytes(received, at.item);
      const auto in_dst = slots.slot_bytes(destination, s);
      const auto& sent = batches[static_cast<std::size_t>(table.owner(at.item))]
                                [static_cast<std::size_t>(table.local_index(at.item))]
                                    .tokens;
      const auto expected = std::as_bytes(std::span(sent));
      intact = intact &&
               std::equal(in_recv.begin(), in_recv.end(), expected.begin(), expected.end()) &&
               std::equal(in_dst.begin(), in_dst.end(), expected.begin(), expected.end());
      tokens += sent.size();
    }
    // [doc: end]
    check(intact, "received tokens");
    check(static_cast<orch::cost_t>(tokens) == balanced.loads[static_cast<std::size_t>(r)],
          "tokens per rank");
    std::printf("rank %d: %lld examples, %zu tokens from %zu peers, %s\n", r,
                static_cast<long long>(slots.slots()), tokens, view.recv_peers.size(),
                intact ? "every token intact" : "CORRUPTED");
  }
  std::printf("max tokens per rank %lld (lower bound %lld)\n",
              static_cast<long long>(balanced.max_load),
              static_cast<long long>(balanced.lower_bound));
  return failures == 0 ? 0 : 1;
} catch (const orch::error& e) {
  std::printf("error: %s\n", e.what());
  return 1;
}
