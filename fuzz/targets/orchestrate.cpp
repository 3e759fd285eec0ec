// SPDX-License-Identifier: Apache-2.0
// Fuzz target: orch::orchestrate on fuzzed small tables (1-8 ranks, 0-6 examples each, media of
// fuzzed fields and lengths, sometimes negative or huge) and models (0-3 encoders, chunking,
// coefficients, divisors, byte sizes, output limits, sometimes invalid), every strategy,
// LLM limits and groups, 1 or 2 threads. Either an orch::error, or a plan in which every phase
// places each of its items exactly once with loads that sum to its costs and max ≥ bound, every
// exchange's backward is its inverse (compose is the identity), the features go from the encoder
// placement to the LLM placement, the text exchange delivers byte-exactly, the whole step moved
// byte for byte assembles every sequence as the reference does and returns every gradient and
// input (tests/support/step_bytes.hpp, small steps), and planning again (on the other thread
// count) gives the same hash.
#define ORCH_FUZZ_NAME "orchestrate"
#include "../fuzz_input.hpp"

#include <orch/exchange/execute.hpp>
#include <orch/orchestrate/orchestrate.hpp>

#include <support/step_bytes.hpp>

#include <algorithm>
#include <cstdint>
#include <cstdio>
#include <string>
#include <vector>

namespace {

using orch::bytes_t;
using orch::index_t;
using orch::rank_t;

orch::model_description fuzzed_model(orch::fuzz::input& in) {
  orch::model_description m;
  constexpr const char* fields[] = {"image", "audio", "video", "image", "text"};
  const auto encoders = in.uniform(0, 3);
  for (std::int64_t e = 0; e < encoders; ++e) {
    orch::encoder_model enc;
    enc.name = in.uniform(0, 15) == 0 ? std::string("llm") : "enc" + std::to_string(e);
    const auto f = in.uniform(0, 15) == 0 ? 4 : e;
    enc.fields.emplace_back(fields[f], in.uniform(0, 3) == 0 ? in.uniform(-1, 40) : 0);
    enc.cost = {in.uniform(0, 9), in.uniform(0, 2), in.uniform(0, 5)};
    if (in.uniform(0, 15) == 0) {
      enc.cost.quadratic = in.length(1 << 20);
    }
    enc.output_divisor = in.uniform(0, 15) == 0 ? 0 : in.uniform(1, 8);
    enc.output_extra = in.uniform(0, 3);
    enc.max_output_tokens = in.uniform(0, 3) == 0 ? in.uniform(1, 40) : 0;
    enc.input_bytes_per_unit = in.uniform(0, 4);
    enc.feature_bytes_per_token = in.uniform(0, 6);
    m.encoders.push_back(enc);
  }
  m.llm.cost = {in.uniform(0, 20), in.uniform(0, 2), in.uniform(0, 3)};
  m.llm.text_bytes_per_token = in.uniform(0, 4);
  return m;
}

} // namespace

int orch_fuzz_orchestrate(const std::uint8_t* data, std::size_t size) {
  orch::fuzz::input in(data, size);
  const auto model = fuzzed_model(in);
  const auto ranks = static_cast<rank_t>(in.uniform(1, 8));
  const auto per_node = static_cast<rank_t>(in.uniform(1, 4));
  std::vector<rank_t> node_of(static_cast<std::size_t>(ranks));
  for (rank_t r = 0; r < ranks; ++r) {
    node_of[static_cast<std::size_t>(r)] = r / per_node;
  }
  constexpr const char* media_fields[] = {"image", "audio", "video", "speech"};
  orch::item_table table;
  std::vector<index_t> groups;
  const bool with_groups = in.uniform(0, 3) == 0;
  try {
    for (rank_t r = 0; r < ranks; ++r) {
      const auto count = in.uniform(0, 6);
      for (std::int64_t j = 0; j < count; ++j) {
        const orch::length_t text = in.uniform(0, 7) == 0 ? in.length(100) : in.uniform(0, 60);
        std::vector<orch::media_spec> media(static_cast<std::size_t>(in.uniform(0, 3)));
        orch::length_t position = 0;
        for (auto& m : media) {
          position = in.uniform(0, 15) == 0
                         ? in.uniform(-1, 70)
                         : in.uniform(position, std::max<orch::length_t>(position, text));
          m = {media_fields[in.uniform(0, 3)],
               in.uniform(0, 7) == 0 ? in.length(200) : in.uniform(0, 90), position};
        }
        // Local indices: usually 0..count-1, sometimes a duplicate or a gap.
        const index_t local = in.uniform(0, 31) == 0 ? in.uniform(0, 7) : j;
        table.add_example(r, local, text, media);
        if (with_groups) {
          groups.push_back(static_cast<index_t>(in.uniform(-1, 3)));
        }
      }
    }
  } catch (const orch::invalid_argument&) {
    return 0; // add_example's own checks; the errors catalogue tests their messages
  }
  // Steps of up to media_chunks::max_chunks (2^24) chunks are valid but take seconds; to keep
  // each run fast, skip those with more than 2^16 chunks that are still under the limit. Steps
  // over the limit run: they must be rejected up front (a 2^40-unit item under a 40-unit
  // window once took minutes, then bad_alloc: corpus/orchestrate/regression-huge-chunk-count.bin).
  std::int64_t chunks = 0;
  for (index_t m = 0; m < table.media_items(); ++m) {
    const auto* f =
        model.find_field(table.field_names()[static_cast<std::size_t>(table.media_field(m))]);
    const orch::length_t w = f != nullptr && f->chunk_length > 0 ? f->chunk_length : 0;
    chunks += w > 0 ? table.media_length(m) / w + 1 : 1;
    if (chunks > orch::media_chunks::max_chunks) {
      break; // over the limit: no need to count on (and no overflow)
    }
  }
  if (chunks > (std::int64_t{1} << 16) && chunks <= orch::media_chunks::max_chunks) {
    return 0;
  }
  orch::orchestrate_options o;
  o.strategy = orch::all_strategies[static_cast<std::size_t>(in.uniform(0, 3))];
  o.threads = static_cast<int>(in.uniform(1, 2));
  if (in.uniform(0, 3) == 0) {
    o.llm.max_examples_per_rank = static_cast<index_t>(in.uniform(0, 8));
    o.llm.max_tokens_per_rank = in.uniform(0, 3) == 0 ? in.uniform(0, 2000) : 0;
  }
  o.llm.groups = groups;
  o.partition.algorithm = static_cast<orch::partition_algorithm>(in.uniform(0, 6));
  o.partition.work_budget = in.uniform(0, 5000);
  o.locality.slack_ppm = in.uniform(0, 3) == 0 ? in.uniform(-1, 200'000) : 1000;

  orch::step_plan sp;
  orch::topology topo;
  try {
    topo = orch::topology::from_node_of_rank(node_of);
    sp = orch::orchestrate(table, model, topo, o);
  } catch (const orch::error&) {
    return 0;
  }

  ORCH_FUZZ_CHECK(sp.encoders.size() == model.encoders.size());
  for (const orch::phase_result& ph : sp.phases()) {
    const auto& l = ph.placement;
    ORCH_FUZZ_CHECK(l.ranks() == ranks);
    ORCH_FUZZ_CHECK(static_cast<std::size_t>(l.items()) == ph.costs.size());
    ORCH_FUZZ_CHECK(ph.loads.size() == static_cast<std::size_t>(ranks));
    std::vector<orch::cost_t> loads(static_cast<std::size_t>(ranks), 0);
    std::vector<index_t> per_rank(static_cast<std::size_t>(ranks), 0);
    for (index_t i = 0; i < l.items(); ++i) {
      const rank_t r = l.rank_of(i);
      ORCH_FUZZ_CHECK(r >= 0 && r < ranks);
      ORCH_FUZZ_CHECK(l.item_at(r, l.slot_of(i)) == i);
      loads[static_cast<std::size_t>(r)] += ph.costs[static_cast<std::size_t>(i)];
      ++per_rank[static_cast<std::size_t>(r)];
    }
    ORCH_FUZZ_CHECK(loads == ph.loads);
    for (rank_t r = 0; r < ranks; ++r) {
      ORCH_FUZZ_CHECK(l.count_on(r) == per_rank[static_cast<std::size_t>(r)]);
    }
    ORCH_FUZZ_CHECK(ph.balance.max_load >= ph.balance.lower_bound);
  }
  ORCH_FUZZ_CHECK(sp.llm.placement.items() == table.examples());
  if (o.llm.max_examples_per_rank > 0) {
    for (rank_t r = 0; r < ranks; ++r) {
      ORCH_FUZZ_CHECK(sp.llm.placement.count_on(r) <= o.llm.max_examples_per_rank);
    }
  }
  for (std::size_t i = 0; i < groups.size(); ++i) {
    for (std::size_t j = 0; j < i; ++j) {
      if (groups[i] >= 0 && groups[i] == groups[j]) {
        ORCH_FUZZ_CHECK(sp.llm.placement.rank_of(static_cast<index_t>(i)) ==
                        sp.llm.placement.rank_of(static_cast<index_t>(j)));
      }
    }
  }
  for (const orch::exchange_result& x : sp.exchanges()) {
    ORCH_FUZZ_CHECK(x.backward == orch::inverse(x.forward));
    const auto round = orch::compose(x.forward, x.backward);
    ORCH_FUZZ_CHECK(round ==
                    orch::make_plan(x.forward.from(), x.forward.from(), x.forward.item_bytes()));
    ORCH_FUZZ_CHECK(x.bytes.self + x.bytes.intra_node + x.bytes.inter_node ==
                    x.forward.total_bytes());
  }
  for (const auto& e : sp.encoders) {
    ORCH_FUZZ_CHECK(e.inputs.forward.to() == e.phase.placement);
    ORCH_FUZZ_CHECK(e.features.forward.from() == e.phase.placement);
    ORCH_FUZZ_CHECK(e.features.forward.to() == e.feature_layout);
    ORCH_FUZZ_CHECK(e.inputs.forward.from() == e.owner_media);
  }
  ORCH_FUZZ_CHECK(sp.text.forward.to() == sp.llm.placement);
  // The text exchange, byte for byte (bytes regenerated from (example, byte)).
  const auto& text = sp.text.forward;
  if (text.total_bytes() <= (bytes_t{1} << 20)) {
    orch::rank_buffers src(static_cast<std::size_t>(ranks));
    for (rank_t r = 0; r < ranks; ++r) {
      src[static_cast<std::size_t>(r)].resize(static_cast<std::size_t>(text.source_bytes(r)));
    }
    const auto byte_of = [](index_t x, bytes_t j) {
      return std::byte{static_cast<std::uint8_t>((x * 37 + j * 11 + 5) & 0xFF)};
    };
    for (index_t x = 0; x < text.items(); ++x) {
      for (bytes_t j = 0; j < text.item_bytes()[static_cast<std::size_t>(x)]; ++j) {
        src[static_cast<std::size_t>(text.from().rank_of(x))]
           [static_cast<std::size_t>(text.source_offset(x) + j)] = byte_of(x, j);
      }
    }
    const auto dst = orch::execute(text, src);
    for (index_t x = 0; x < text.items(); ++x) {
      for (bytes_t j = 0; j < text.item_bytes()[static_cast<std::size_t>(x)]; ++j) {
        ORCH_FUZZ_CHECK(dst[static_cast<std::size_t>(text.to().rank_of(x))]
                           [static_cast<std::size_t>(text.destination_offset(x) + j)] ==
                        byte_of(x, j));
      }
    }
  }
  // The whole step byte for byte (tests/support/step_bytes.hpp): inputs to the encoders,
  // stand-in features to the LLM ranks, flat and node-wise, the sequences assembled from the
  // assembly map equal to the reference, gradients and inputs back through the inverses.
  // Only where the step is small: ≤ 16,384 chunks and ≤ 2 MiB moved and assembled. The check
  // is linear in bytes (every byte is touched some twenty times) and O(m log m) in items (each
  // run of a plan sorts every rank's send list); under ASan an input of 47,664 chunks and
  // 2 MB took 2.5 s, twice that when libFuzzer reruns it for leaks, against its 10 s timeout.
  bytes_t moved = 0;
  for (const orch::exchange_result& x : sp.exchanges()) {
    moved += std::min<bytes_t>(x.forward.total_bytes(), bytes_t{1} << 40);
  }
  bytes_t widest = model.llm.text_bytes_per_token;
  for (const auto& enc : model.encoders) {
    widest = std::max(widest, enc.feature_bytes_per_token);
  }
  bytes_t sequence_bytes = 0;
  for (const orch::length_t l : sp.assembly.sequence_length) {
    sequence_bytes += std::min<bytes_t>(l, bytes_t{1} << 30) * std::min<bytes_t>(widest, 1 << 10);
  }
  const index_t planned_chunks = sp.chunks.chunks(table.media_items());
  if (planned_chunks <= 16384 && moved <= (bytes_t{1} << 21) &&
      sequence_bytes <= (bytes_t{1} << 21)) {
    const auto report = orch::test::check_step_bytes(table, model, topo, sp);
    if (!report.ok()) {
      std::fprintf(stderr, "check_step_bytes: %s\n", report.first_error.c_str());
    }
    ORCH_FUZZ_CHECK(report.ok());
  }
  auto other = o;
  other.threads = 3 - o.threads;
  ORCH_FUZZ_CHECK(orch::orchestrate(table, model, topo, other).hash == sp.hash);
  return 0;
}
