// SPDX-License-Identifier: Apache-2.0
// Catalogue triggers of orchestrate's internals (its options, options.llm's limits and groups,
// the overflows of a step's quantities), of the metadata decoder (field names, counts) and of
// the transport core's route and transfer checks: docs/errors.md E314–E330, E626–E631,
// E823–E827. Also media_chunks' accessors on a step with nothing cut (E312 / E313's messages).
#include "fixtures.hpp"
#include "triggers.hpp"

#include <orch/orch.hpp>

#include <doctest/doctest.h>

#include <cstdint>
#include <limits>
#include <span>
#include <string>
#include <string_view>
#include <vector>

namespace {

using orch_errors::append_one;
using orch_errors::image_batch;
using orch_errors::resealed;
using orch_errors::two_ranks_table;
using orch_errors::vision_model;

using orch::cost_t;
using orch::index_t;
using orch::length_t;
using orch::rank_t;

constexpr std::int64_t max64 = std::numeric_limits<std::int64_t>::max();

/// Examples of rank 0 only, one per text length, without media.
orch::item_table rank0_table(const std::vector<length_t>& text) {
  orch::item_table t;
  for (std::size_t x = 0; x < text.size(); ++x) {
    t.add_example(0, static_cast<index_t>(x), text[x]);
  }
  return t;
}

/// orchestrate of `t` for `m` on `ranks` ranks (one per node) with options `o`.
void plan(const orch::item_table& t, const orch::model_description& m, rank_t ranks,
          const orch::orchestrate_options& o = {}) {
  static_cast<void>(orch::orchestrate(t, m, orch::topology::uniform(ranks, 1), o));
}

/// One example of rank 0: 5 text tokens and the given media.
orch::item_table one_example(const std::vector<orch::media_spec>& media) {
  orch::item_table t;
  t.add_example(0, 0, 5, media);
  return t;
}

// ---- metadata buffers

/// The word a field name is packed into (little-endian, as local_batch::serialize packs it).
std::int64_t packed(std::string_view name) {
  std::uint64_t w = 0;
  for (std::size_t k = 0; k < name.size() && k < 8; ++k) {
    w |= std::uint64_t{static_cast<unsigned char>(name[k])} << (8 * k);
  }
  return static_cast<std::int64_t>(w);
}

/// An empty batch's buffer (header and checksum) with `fields` field names claimed and
/// `names` words inserted before the checksum, resealed.
std::vector<std::int64_t> empty_with_fields(std::int64_t fields,
                                            const std::vector<std::int64_t>& names) {
  auto b = orch::local_batch().serialize(0);
  b.insert(b.end() - 1, names.begin(), names.end());
  b[2] = static_cast<std::int64_t>(b.size());
  b[6] = fields;
  return resealed(b);
}

// ---- transport views

/// The plan of items on `from` moving to `to` (one byte each) over `ranks` ranks.
orch::exchange_plan moves(const std::vector<rank_t>& from, const std::vector<rank_t>& to,
                          rank_t ranks) {
  const std::vector<orch::bytes_t> b(from.size(), 1);
  return orch::make_plan(orch::layout::from_assignment(from, ranks),
                         orch::layout::from_assignment(to, ranks), b);
}

/// Three ranks: rank 0 keeps its item, ranks 1 and 2 swap theirs.
orch::exchange_plan three_rank_swap() {
  return moves({0, 1, 2}, {0, 2, 1}, 3);
}

/// Two ranks keeping their items (every view sends to itself).
orch::exchange_plan two_rank_identity() {
  return moves({0, 1}, {0, 1}, 2);
}

const orch_errors::registration orchestrate_metadata_entries{{
    // ---- orchestrate: options
    {"E314",
     [] {
       orch::orchestrate_options o;
       o.partition.time_limit_ms = 5;
       plan(two_ranks_table(), vision_model(), 2, o);
     }},
    {"E315",
     [] {
       orch::orchestrate_options o;
       o.llm.max_examples_per_rank = 8;
       o.partition.algorithm = orch::partition_algorithm::kk;
       plan(two_ranks_table(), vision_model(), 2, o);
     }},
    {"E316",
     [] {
       orch::orchestrate_options o;
       o.llm.max_tokens_per_rank = -1;
       plan(two_ranks_table(), vision_model(), 2, o);
     }},
    // ---- orchestrate: options.llm's groups and limits
    {"E317",
     [] {
       const std::vector<index_t> groups{0, 0, 0};
       orch::orchestrate_options o;
       o.llm.groups = groups;
       plan(two_ranks_table(), vision_model(), 2, o);
     }},
    {"E318",
     [] {
       const std::vector<index_t> groups{0, -2};
       orch::orchestrate_options o;
       o.llm.groups = groups;
       plan(two_ranks_table(), vision_model(), 2, o);
     }},
    {"E319",
     [] {
       const std::vector<index_t> groups{7, 7};
       orch::orchestrate_options o;
       o.strategy = orch::strategy::none;
       o.llm.groups = groups;
       plan(two_ranks_table(), vision_model(), 2, o);
     }},
    {"E320",
     [] {
       orch::orchestrate_options o;
       o.strategy = orch::strategy::none;
       o.llm.max_tokens_per_rank = 15;
       plan(rank0_table({10, 10}), vision_model(), 2, o);
     }},
    {"E321",
     [] {
       orch::orchestrate_options o;
       o.llm.max_examples_per_rank = 1;
       plan(rank0_table({1, 1, 1}), vision_model(), 2, o);
     }},
    {"E322",
     [] {
       // Each fits one by one, not together: 190 tokens over 2 ranks of 94.
       orch::orchestrate_options o;
       o.llm.max_tokens_per_rank = 94;
       plan(rank0_table({50, 60, 70, 10}), vision_model(), 2, o);
     }},
    {"E323",
     [] {
       const std::vector<index_t> groups{0, 0, orch::no_group};
       orch::orchestrate_options o;
       o.llm.max_examples_per_rank = 2;
       o.llm.max_tokens_per_rank = 100;
       o.llm.groups = groups;
       plan(rank0_table({1, 1, 1}), vision_model(), 2, o);
     }},
    // ---- orchestrate: quantities past 2^63 - 1
    {"E324",
     [] {
       auto m = vision_model();
       m.llm.cost.linear = max64 / 4;
       plan(rank0_table({3, 3}), m, 2);
     }},
    {"E325",
     [] {
       auto m = vision_model();
       m.encoders[0].output_extra = max64;
       plan(one_example({{"image", 16, 0}}), m, 1);
     }},
    {"E326",
     [] {
       auto m = vision_model();
       m.encoders[0].cost = {.linear = 0, .quadratic = 1, .per_item = 0};
       plan(one_example({{"image", length_t{1} << 32, 0}}), m, 1);
     }},
    {"E327",
     [] {
       auto m = vision_model();
       m.encoders[0].input_bytes_per_unit = max64 / 2;
       plan(one_example({{"image", 16, 0}}), m, 1);
     }},
    {"E328",
     [] {
       orch::item_table t;
       const orch::media_spec img{"image", 16, 0};
       t.add_example(0, 0, max64 - 1, std::span(&img, 1));
       plan(t, vision_model(), 1);
     }},
    {"E329",
     [] {
       // Two images of one output token, 2^62 feature bytes each.
       auto m = vision_model();
       m.encoders[0].feature_bytes_per_token = std::int64_t{1} << 62;
       plan(one_example({{"image", 4, 0}, {"image", 4, 0}}), m, 1);
     }},
    {"E330",
     [] {
       auto m = vision_model();
       m.llm.text_bytes_per_token = max64 / 2;
       plan(one_example({}), m, 1);
     }},
    {"E331",
     [] {
       // Under orch an example that stays saves its text (5 × 2^60 bytes) and its features
       // (one token of 2^62 bytes): 2^62 + 5 × 2^60 > 2^63 - 1, each part in range.
       auto m = vision_model();
       m.llm.text_bytes_per_token = std::int64_t{1} << 60;
       m.encoders[0].feature_bytes_per_token = std::int64_t{1} << 62;
       plan(one_example({{"image", 4, 0}}), m, 2);
     }},
    {"E332",
     [] {
       // An image that stays with its example saves its input (4 × 2^60 bytes) and its
       // features (one token of 2^62 bytes); the example's own sum stays in range.
       auto m = vision_model();
       m.llm.text_bytes_per_token = 0;
       m.encoders[0].input_bytes_per_unit = std::int64_t{1} << 60;
       m.encoders[0].feature_bytes_per_token = std::int64_t{1} << 62;
       plan(one_example({{"image", 4, 0}}), m, 2);
     }},
    {"E333",
     [] {
       // Two examples of 2^62 text tokens on one rank: its sequences hold 2^63 tokens.
       orch::orchestrate_options o;
       o.strategy = orch::strategy::none;
       auto m = vision_model();
       m.llm.cost.linear = 0;
       m.llm.text_bytes_per_token = 0;
       plan(rank0_table({max64 / 2 + 1, max64 / 2 + 1}), m, 2, o);
     }},
    // ---- metadata: field names and counts (checksums recomputed)
    {"E626", [] { append_one(empty_with_fields(1, {})); }},
    {"E627",
     [] {
       append_one(empty_with_fields(2, {8, packed("abcdefgh")}));
     }},
    {"E628",
     [] {
       auto b = image_batch().serialize(0);
       b[7] = 0; // the name's byte count
       append_one(resealed(b));
     }},
    {"E629",
     [] {
       auto b = image_batch().serialize(0);
       b[8] |= std::int64_t{1} << 56; // a byte after the 5 of "image"
       append_one(resealed(b));
     }},
    {"E630",
     [] {
       orch::local_batch batch;
       const std::vector<orch::media_spec> media{{"image", 16, 0}, {"audio", 8, 0}};
       batch.add(5, media);
       auto b = batch.serialize(0);
       for (auto& w : b) {
         w = w == packed("audio") ? packed("image") : w;
       }
       append_one(resealed(b));
     }},
    {"E631",
     [] {
       auto b = image_batch().serialize(0);
       b[10] = 0; // the example's media count; the header claims 1 media item
       append_one(resealed(b));
     }},
    // ---- transport core: routes and transfers of views that do not form one plan
    {"E823",
     [] {
       // Only ranks 0 and 1 of a 3-rank plan: rank 1 receives from rank 2.
       const auto p = three_rank_swap();
       const std::vector<orch::rank_view> v{p.view(0), p.view(1)};
       static_cast<void>(orch::transport::make_routes(v));
     }},
    {"E824",
     [] {
       // Rank 0's view of a swap, rank 1's of the identity: rank 1 sends only to itself.
       const auto swap = moves({0, 1}, {1, 0}, 2);
       const std::vector<orch::rank_view> v{swap.view(0), two_rank_identity().view(1)};
       static_cast<void>(orch::transport::make_routes(v));
     }},
    {"E825",
     [] {
       auto v = two_rank_identity().view(0);
       v.recv_peers.clear(); // a hand-edited view: the self chunk on the send side only
       v.recv_peer_items.clear();
       v.recv_peer_bytes.clear();
       v.recv_peer_displs.clear();
       v.recv_peer_first.clear();
       static_cast<void>(orch::transport::make_transfers(v));
     }},
    {"E826",
     [] {
       auto v = two_rank_identity().view(0);
       v.recv_peer_bytes[0] = 3; // a hand-edited view: the two sides of the self chunk differ
       static_cast<void>(orch::transport::make_transfers(v));
     }},
    {"E827",
     [] {
       // Rank 1 of a 3-rank plan sends to rank 2; the communicator is given as 2 ranks.
       const auto t = orch::transport::make_transfers(three_rank_swap().view(1));
       static_cast<void>(orch::transport::make_alltoallv_arrays(t, 2, true));
     }},
}};

/// The message of what `f` throws as orch::invalid_argument ("" when nothing is thrown).
template <class F>
std::string invalid_argument_of(F f) {
  try {
    f();
  } catch (const orch::invalid_argument& e) {
    return e.what();
  }
  return "";
}

} // namespace

TEST_CASE("media_chunks: accessors check their index when nothing is cut too") {
  const auto m = vision_model(); // no chunk_length: nothing is cut
  const auto t = two_ranks_table();
  const auto c = orch::media_chunks::make(t, m);
  REQUIRE_FALSE(c.cut());
  CHECK(c.media_of(0) == 0);
  CHECK(c.offset(0) == 0);
  CHECK(c.length(0, t) == 16);
  CHECK(c.first_chunk(0) == 0);
  CHECK(c.chunk_count(0) == 1);
  CHECK(invalid_argument_of([&] { (void)c.media_of(1); }) ==
        "media_chunks::media_of: chunk 1 is outside [0, 1)");
  CHECK(invalid_argument_of([&] { (void)c.offset(-1); }) ==
        "media_chunks::offset: chunk -1 is outside [0, 1)");
  CHECK(invalid_argument_of([&] { (void)c.length(3, t); }) ==
        "media_chunks::length: chunk 3 is outside [0, 1)");
  CHECK(invalid_argument_of([&] { (void)c.first_chunk(1); }) ==
        "media_chunks::first_chunk: media item 1 is outside [0, 1)");
  CHECK(invalid_argument_of([&] { (void)c.chunk_count(-2); }) ==
        "media_chunks::chunk_count: media item -2 is outside [0, 1)");
  // A default-constructed one describes a table without media.
  CHECK(invalid_argument_of([] { (void)orch::media_chunks().media_of(0); }) ==
        "media_chunks::media_of: chunk 0 is outside [0, 0)");
  // The step plan's chunks check against the planned table.
  const auto sp = orch::orchestrate(t, m, orch::topology::uniform(2, 1));
  CHECK(invalid_argument_of([&] { (void)sp.chunks.media_of(1); }) ==
        "media_chunks::media_of: chunk 1 is outside [0, 1)");
}

TEST_CASE("orchestrate: options.llm.groups below -1 are rejected alike by every strategy") {
  const std::vector<index_t> groups{0, -2};
  for (const auto strat : orch::all_strategies) {
    CAPTURE(orch::to_string(strat));
    orch::orchestrate_options o;
    o.strategy = strat;
    o.llm.groups = groups;
    CHECK(invalid_argument_of([&] { plan(two_ranks_table(), vision_model(), 2, o); }) ==
          "orchestrate: options.llm.groups gives example 1 (rank 1, local index 0) group id -2 "
          "(ids are ≥ 0, or −1 for an example alone)");
  }
}

TEST_CASE("orchestrate: strategy none reports a rank's tokens past 2^63 - 1 as above the limit") {
  orch::orchestrate_options o;
  o.strategy = orch::strategy::none;
  o.llm.max_tokens_per_rank = 15;
  auto m = vision_model();
  m.llm.cost.linear = 0;
  m.llm.text_bytes_per_token = 0;
  const auto t = rank0_table({max64 / 2 + 1, max64 / 2 + 1});
  try {
    plan(t, m, 2, o);
    FAIL("no throw");
  } catch (const orch::infeasible& e) {
    CHECK(std::string(e.what()) ==
          "orchestrate: strategy none keeps examples on their owner, and rank 0 holds more than "
          "2^63 - 1 LLM tokens, above options.llm.max_tokens_per_rank = 15");
  }
}
