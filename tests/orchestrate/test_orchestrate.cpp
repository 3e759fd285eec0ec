// SPDX-License-Identifier: Apache-2.0
// End to end on the CPU: raw payloads generated from ids travel owner → encoder, a stand-in
// encoder turns them into features, features travel encoder → LLM (one hop) and text owner →
// LLM, the sequences are assembled, and everything is compared byte for byte with a
// single-process reference that never balanced anything. Then stand-in gradients travel back
// through the inverse plans.
#include <orch/exchange/execute.hpp>
#include <orch/orchestrate/orchestrate.hpp>
#include <orch/placement/bounds.hpp>

#include <support/generators.hpp>
#include <support/step_bytes.hpp>

#include <doctest/doctest.h>

#include <algorithm>
#include <array>
#include <cstdint>
#include <string>
#include <vector>

namespace {

using orch::bytes_t;
using orch::index_t;
using orch::length_t;
using orch::rank_t;

std::byte mix(std::uint64_t a, std::uint64_t b) {
  std::uint64_t x = a * 0x9E3779B97F4A7C15ULL ^ (b + 0x632BE59BD9B4E019ULL);
  x ^= x >> 29;
  x *= 0xBF58476D1CE4E5B9ULL;
  x ^= x >> 32;
  return static_cast<std::byte>(x & 0xffU);
}

// Payload generators: byte j of each kind of buffer, from the ids alone.
std::byte raw_byte(index_t media, bytes_t j) {
  return mix(1000003ULL * 1 + static_cast<std::uint64_t>(media), static_cast<std::uint64_t>(j));
}
std::byte text_byte(index_t example, bytes_t j) {
  return mix(7777ULL + static_cast<std::uint64_t>(example) * 3, static_cast<std::uint64_t>(j));
}
std::byte grad_byte(index_t media, bytes_t j) {
  return mix(99991ULL + static_cast<std::uint64_t>(media) * 5, static_cast<std::uint64_t>(j));
}

/// The stand-in encoder: output bytes depend on the media id and on every input byte, so a
/// wrong or misplaced input changes the output.
std::vector<std::byte> encode(index_t media, std::span<const std::byte> input, bytes_t out_bytes) {
  std::uint64_t digest = 1469598103934665603ULL;
  for (const auto b : input) {
    digest = (digest ^ static_cast<std::uint64_t>(b)) * 1099511628211ULL;
  }
  std::vector<std::byte> out(static_cast<std::size_t>(out_bytes));
  for (std::size_t j = 0; j < out.size(); ++j) {
    out[j] = mix(digest + static_cast<std::uint64_t>(media), j);
  }
  return out;
}

orch::model_description test_model() {
  orch::model_description m;
  // name, fields, cost, divisor, extra, max output, input bytes/unit, feature bytes/token
  m.encoders.push_back({"vision", {"image", "video"}, {3, 1, 2}, 4, 1, 0, 3, 5});
  m.encoders.push_back({"audio", {"audio"}, {2, 0, 1}, 2, 0, 0, 2, 7});
  m.llm.cost = {16, 1, 0};
  m.llm.text_bytes_per_token = 2;
  return m;
}

struct scenario {
  orch::item_table table;
  orch::topology topo;
};

scenario make_scenario(std::uint64_t seed) {
  std::mt19937_64 rng(seed);
  constexpr std::array<rank_t, 7> rank_counts{1, 2, 3, 4, 8, 16, 64};
  constexpr std::array<rank_t, 4> node_sizes{1, 2, 4, 8};
  const rank_t ranks = rank_counts[static_cast<std::size_t>(orch::test::uniform_int(rng, 0, 6))];
  rank_t per_node = node_sizes[static_cast<std::size_t>(orch::test::uniform_int(rng, 0, 3))];
  while (ranks % per_node != 0) {
    per_node /= 2;
  }
  scenario s{orch::item_table{}, orch::topology::uniform(ranks, per_node)};
  const auto kind = seed % 5; // 0 mixed, 1 no media, 2 only media, 3 many media, 4 sparse ranks
  constexpr std::array<const char*, 3> fields{"image", "audio", "video"};
  for (rank_t r = 0; r < ranks; ++r) {
    const auto count = kind == 4 && orch::test::uniform_int(rng, 0, 2) != 0
                           ? 0
                           : orch::test::uniform_int(rng, 0, 6);
    // Local indices in a scrambled order, so owner slots differ from insertion order.
    std::vector<index_t> locals(static_cast<std::size_t>(count));
    for (index_t i = 0; i < count; ++i) {
      locals[static_cast<std::size_t>(i)] = (i * 5 + 3) % count;
    }
    if (count % 5 == 0) {
      for (index_t i = 0; i < count; ++i) {
        locals[static_cast<std::size_t>(i)] = count - 1 - i;
      }
    }
    for (index_t i = 0; i < count; ++i) {
      const length_t text = kind == 2 ? 0 : orch::test::uniform_int(rng, 0, 40);
      const auto n_media = kind == 1   ? 0
                           : kind == 3 ? orch::test::uniform_int(rng, 3, 8)
                                       : orch::test::uniform_int(rng, 0, 3);
      std::vector<orch::media_spec> media;
      length_t position = 0;
      for (index_t m = 0; m < n_media; ++m) {
        position = orch::test::uniform_int(rng, position, text);
        const auto f = fields[static_cast<std::size_t>(orch::test::uniform_int(rng, 0, 2))];
        const length_t len =
            orch::test::uniform_int(rng, 0, 3) == 0 ? 0 : orch::test::uniform_int(rng, 1, 60);
        media.push_back({f, len, position});
      }
      s.table.add_example(r, locals[static_cast<std::size_t>(i)], text, media);
    }
  }
  return s;
}

// Payload buffers are filled and read with the shared helpers of support/step_bytes.hpp.
using orch::test::fill_sources;
using orch::test::item_at_destination;

using token = std::vector<std::byte>;

void check_step(const scenario& s, const orch::model_description& model, orch::strategy strat) {
  const auto& t = s.table;
  orch::orchestrate_options options;
  options.strategy = strat;
  const auto sp = orch::orchestrate(t, model, s.topo, options);
  const std::size_t encoders = model.encoders.size();
  REQUIRE(sp.phases().size() == encoders + 1);
  REQUIRE(sp.exchanges().size() == 2 * encoders + 1);
  CHECK(sp.hash == orch::orchestrate(t, model, s.topo, options).hash);
  {
    // Planning on several threads runs the same tasks: the same plan, field by field.
    auto threaded = options;
    threaded.threads = 3;
    const auto tp = orch::orchestrate(t, model, s.topo, threaded);
    CHECK(tp.hash == sp.hash);
    REQUIRE(tp.phases().size() == sp.phases().size());
    for (std::size_t p = 0; p < sp.phases().size(); ++p) {
      CHECK(tp.phases()[p].get().placement == sp.phases()[p].get().placement);
      CHECK(tp.phases()[p].get().loads == sp.phases()[p].get().loads);
    }
    CHECK(tp.feature_bytes_direct == sp.feature_bytes_direct);
    CHECK(tp.feature_bytes_two_hop == sp.feature_bytes_two_hop);
  }

  // Reference: each media item's encoder output, computed in one process from the ids.
  std::vector<token> reference_features(static_cast<std::size_t>(t.media_items()));

  // LLM-side feature buffers per encoder.
  std::vector<orch::rank_buffers> llm_features(encoders);
  for (std::size_t e = 0; e < encoders; ++e) {
    const auto& enc = model.encoders[e];
    const auto& ph = sp.encoders[e].phase;
    const auto& inputs = sp.exchange(enc.name + ".inputs");
    const auto& features = sp.exchange(enc.name + ".features");
    // Owner → encoder: raw inputs from (media id, byte).
    const auto raw = fill_sources(inputs.forward, [&](index_t i, bytes_t j) {
      return raw_byte(ph.items[static_cast<std::size_t>(i)], j);
    });
    const auto at_encoder = orch::execute(inputs.forward, raw);
    const auto at_encoder_offsets = orch::item_offsets::destination(inputs.forward);
    // The stand-in encoder runs on each encoder rank on what it received.
    orch::rank_buffers out(static_cast<std::size_t>(s.topo.ranks()));
    for (rank_t r = 0; r < s.topo.ranks(); ++r) {
      out[static_cast<std::size_t>(r)].resize(
          static_cast<std::size_t>(features.forward.source_bytes(r)));
    }
    for (index_t i = 0; i < features.forward.items(); ++i) {
      const index_t m = ph.items[static_cast<std::size_t>(i)];
      const auto input = item_at_destination(inputs.forward, at_encoder_offsets, at_encoder, i);
      const auto y = encode(m, input, features.forward.item_bytes()[static_cast<std::size_t>(i)]);
      auto& buf = out[static_cast<std::size_t>(features.forward.from().rank_of(i))];
      std::copy(y.begin(), y.end(),
                buf.begin() + static_cast<std::ptrdiff_t>(features.forward.source_offset(i)));
      // Reference output from the generator directly (never moved).
      std::vector<std::byte> ref_in(
          static_cast<std::size_t>(t.media_length(m) * enc.input_bytes_per_unit));
      for (std::size_t j = 0; j < ref_in.size(); ++j) {
        ref_in[j] = raw_byte(m, static_cast<bytes_t>(j));
      }
      reference_features[static_cast<std::size_t>(m)] = encode(
          m, ref_in, sp.output_tokens[static_cast<std::size_t>(m)] * enc.feature_bytes_per_token);
    }
    // Encoder → LLM in one hop.
    llm_features[e] = orch::execute(features.forward, out);

    // Backward: gradients of the features travel LLM → encoder through the inverse plan.
    const auto grads = fill_sources(features.backward, [&](index_t i, bytes_t j) {
      return grad_byte(ph.items[static_cast<std::size_t>(i)], j);
    });
    const auto at_encoder_grads = orch::execute(features.backward, grads);
    const auto grads_offsets = orch::item_offsets::destination(features.backward);
    for (index_t i = 0; i < features.backward.items(); ++i) {
      const auto got = item_at_destination(features.backward, grads_offsets, at_encoder_grads, i);
      CHECK(features.backward.to().rank_of(i) == ph.placement.rank_of(i));
      bool ok = true;
      for (std::size_t j = 0; j < got.size(); ++j) {
        ok = ok &&
             got[j] == grad_byte(ph.items[static_cast<std::size_t>(i)], static_cast<bytes_t>(j));
      }
      CHECK(ok);
    }
    // The two-hop route composes to exactly the single-hop plan.
    const auto back_to_owner =
        orch::make_plan(ph.placement, sp.encoders[e].owner_media, features.forward.item_bytes());
    const auto owner_to_llm = orch::make_plan(
        sp.encoders[e].owner_media, sp.encoders[e].feature_layout, features.forward.item_bytes());
    CHECK(orch::compose(back_to_owner, owner_to_llm).hash() == features.forward.hash());
  }

  // Owner → LLM: text.
  const auto& text = sp.exchange("text");
  const auto text_src =
      fill_sources(text.forward, [](index_t x, bytes_t j) { return text_byte(x, j); });
  const auto text_dst = orch::execute(text.forward, text_src);

  // Assemble every LLM rank's sequence buffer (tokens of per-source sizes).
  const bytes_t text_tb = model.llm.text_bytes_per_token;
  std::vector<std::vector<token>> sequence(static_cast<std::size_t>(s.topo.ranks()));
  for (rank_t r = 0; r < s.topo.ranks(); ++r) {
    auto& seq = sequence[static_cast<std::size_t>(r)];
    seq.resize(static_cast<std::size_t>(sp.assembly.sequence_tokens[static_cast<std::size_t>(r)]));
    for (const auto& seg : sp.assembly.on_rank(r)) {
      const auto source = orch::test::source_of(seg, model, text_dst, llm_features, r);
      for (length_t k = 0; k < seg.tokens; ++k) {
        const auto bytes = source.tokens(seg.source_token + k, 1);
        seq[static_cast<std::size_t>(seg.target_token + k)] = token(bytes.begin(), bytes.end());
      }
    }
  }

  // Compare with the reference sequence of every example.
  for (index_t x = 0; x < t.examples(); ++x) {
    std::vector<token> ref;
    auto text_tokens = [&](length_t from, length_t to) {
      for (length_t k = from; k < to; ++k) {
        token tok(static_cast<std::size_t>(text_tb));
        for (bytes_t b = 0; b < text_tb; ++b) {
          tok[static_cast<std::size_t>(b)] = text_byte(x, k * text_tb + b);
        }
        ref.push_back(tok);
      }
    };
    length_t consumed = 0;
    for (index_t m = t.media_begin(x); m < t.media_end(x); ++m) {
      text_tokens(consumed, t.media_text_position(m));
      consumed = t.media_text_position(m);
      const auto& f = reference_features[static_cast<std::size_t>(m)];
      const auto tb = static_cast<std::size_t>(
          model.encoders[static_cast<std::size_t>(sp.media_encoder[static_cast<std::size_t>(m)])]
              .feature_bytes_per_token);
      for (std::size_t k = 0; k < f.size() / tb; ++k) {
        ref.emplace_back(f.begin() + static_cast<std::ptrdiff_t>(k * tb),
                         f.begin() + static_cast<std::ptrdiff_t>((k + 1) * tb));
      }
    }
    text_tokens(consumed, t.text_tokens(x));
    CAPTURE(x);
    const rank_t r = sp.llm.placement.rank_of(x);
    const auto off =
        static_cast<std::size_t>(sp.assembly.sequence_offset[static_cast<std::size_t>(x)]);
    REQUIRE(static_cast<std::size_t>(sp.assembly.sequence_length[static_cast<std::size_t>(x)]) ==
            ref.size());
    REQUIRE(static_cast<std::size_t>(sp.sequence_length[static_cast<std::size_t>(x)]) ==
            ref.size());
    const auto& seq = sequence[static_cast<std::size_t>(r)];
    bool same = true;
    for (std::size_t k = 0; k < ref.size(); ++k) {
      same = same && seq[off + k] == ref[k];
    }
    CHECK(same);
  }

  // Inverse of the inputs and text exchanges returns every byte to its owner.
  for (const orch::exchange_result& x : sp.exchanges()) {
    const auto back = orch::compose(x.forward, x.backward);
    CHECK(back.hash() ==
          orch::make_plan(x.forward.from(), x.forward.from(), x.forward.item_bytes()).hash());
  }

  // The feature layout is the order the features exchange delivers in: no rank unpacks.
  for (const orch::encoder_step& enc : sp.encoders) {
    for (rank_t r = 0; r < s.topo.ranks(); ++r) {
      CHECK(enc.features.forward.view(r).unpack_is_identity);
    }
  }

  // Metrics are consistent with the layouts.
  for (const orch::phase_result& ph : sp.phases()) {
    CHECK(ph.loads.size() == static_cast<std::size_t>(s.topo.ranks()));
    CHECK(ph.loads == orch::bin_loads(ph.costs, ph.placement.rank_of_items(), s.topo.ranks()));
    CHECK(ph.balance.max_load >= ph.balance.lower_bound);
  }
  if (strat == orch::strategy::none) {
    for (const orch::exchange_result& x : sp.exchanges()) {
      CHECK(x.bytes.intra_node + x.bytes.inter_node == 0);
    }
    CHECK(sp.feature_bytes_two_hop == 0);
  }
  CHECK(sp.feature_bytes_direct <= sp.feature_bytes_two_hop);
  for (const orch::exchange_result& x : sp.exchanges()) {
    CHECK(x.inter_node_lower_bound <= x.bytes.inter_node);
  }
  // The step reports the bound of its inputs and text exchanges without computing it when the
  // exchange keeps every byte on its node (the bound is then 0): it is the bound all the same.
  for (const orch::encoder_step& enc : sp.encoders) {
    CHECK(enc.inputs.inter_node_lower_bound ==
          orch::inter_node_lower_bound(enc.phase.costs, enc.owner_media.rank_of_items(),
                                       enc.inputs.forward.item_bytes(), s.topo,
                                       enc.phase.balance.max_load));
  }
  CHECK(sp.text.inter_node_lower_bound ==
        orch::inter_node_lower_bound(sp.llm.costs, sp.owner_examples.rank_of_items(),
                                     sp.text.forward.item_bytes(), s.topo,
                                     sp.llm.balance.max_load));
}

} // namespace

TEST_CASE("orchestrate: end to end, byte for byte, over seeded scenarios and all strategies") {
  const auto model = test_model();
  int steps = 0;
  for (std::uint64_t seed = 1; seed <= 60; ++seed) {
    const auto s = make_scenario(seed);
    CAPTURE(seed);
    CAPTURE(s.topo.ranks());
    CAPTURE(s.table.examples());
    for (const auto strat : orch::all_strategies) {
      CAPTURE(orch::to_string(strat));
      check_step(s, model, strat);
      ++steps;
    }
  }
  CHECK(steps == 240);
}

TEST_CASE("orchestrate: bad input names the example") {
  const auto model = test_model();
  const auto topo = orch::topology::uniform(2, 2);
  auto message_of = [&](const orch::item_table& t, const orch::model_description& m) {
    try {
      (void)orch::orchestrate(t, m, topo);
    } catch (const orch::error& e) {
      return std::string(e.what());
    }
    return std::string("no error");
  };
  orch::item_table unknown;
  unknown.add_example(0, 0, 4);
  const std::vector<orch::media_spec> depth{{"depth", 10, 0}};
  unknown.add_example(1, 0, 4, depth);
  const auto m1 = message_of(unknown, model);
  CHECK(m1.find("example 1") != std::string::npos);
  CHECK(m1.find("'depth'") != std::string::npos);

  auto limited = model;
  limited.encoders[0].max_output_tokens = 10;
  orch::item_table big;
  const std::vector<orch::media_spec> image{{"image", 400, 0}};
  big.add_example(0, 0, 4);
  big.add_example(0, 1, 4);
  big.add_example(1, 0, 4, image);
  const auto m2 = message_of(big, limited);
  CHECK(m2.find("example 2") != std::string::npos);
  CHECK(m2.find("limit of 10") != std::string::npos);

  orch::item_table outside;
  outside.add_example(5, 0, 4);
  CHECK(message_of(outside, model).find("rank 5") != std::string::npos);

  auto bad_model = model;
  bad_model.encoders[1].fields.push_back("image");
  CHECK(message_of(big, bad_model).find("'image'") != std::string::npos);

  orch::orchestrate_options no_threads;
  no_threads.threads = 0;
  CHECK_THROWS_AS((void)orch::orchestrate(big, model, topo, no_threads), orch::invalid_argument);
}

TEST_CASE("orchestrate: strategies balance what they promise on a skewed step") {
  // 16 ranks on 2 nodes; rank r gets 8 examples whose image sizes grow with r, so the sampled
  // step is badly unbalanced in both phases.
  const auto model = test_model();
  const auto topo = orch::topology::uniform(16, 8);
  orch::item_table t;
  std::mt19937_64 rng(5);
  for (rank_t r = 0; r < 16; ++r) {
    for (index_t i = 0; i < 8; ++i) {
      const std::vector<orch::media_spec> media{
          {"image", 40 * (r + 1) + orch::test::uniform_int(rng, 0, 20), 0}};
      t.add_example(r, i, orch::test::uniform_int(rng, 20, 200), media);
    }
  }
  std::array<orch::step_plan, 4> plans;
  for (std::size_t s = 0; s < 4; ++s) {
    orch::orchestrate_options o;
    o.strategy = orch::all_strategies[s];
    plans[s] = orch::orchestrate(t, model, topo, o);
  }
  const auto& none = plans[0];
  const auto& llm_only = plans[1];
  const auto& per_phase = plans[2];
  const auto& orch_plan = plans[3];
  CHECK(none.phase("vision").balance.max_over_mean > 1.5);
  CHECK(llm_only.llm.balance.max_over_lower_bound < 1.05);
  CHECK(per_phase.llm.balance.max_over_lower_bound < 1.05);
  CHECK(per_phase.phase("vision").balance.max_over_lower_bound < 1.05);
  CHECK(orch_plan.phase("vision").balance.max_over_lower_bound < 1.05);
  CHECK(orch_plan.llm.balance.max_over_lower_bound <
        per_phase.llm.balance.max_over_lower_bound + 0.002);
  // orch keeps more bytes on their node than the locality-oblivious mapping.
  bytes_t inter_orch = 0;
  bytes_t inter_per_phase = 0;
  for (std::size_t x = 0; x < orch_plan.exchanges().size(); ++x) {
    inter_orch += orch_plan.exchanges()[x].get().bytes.inter_node;
    inter_per_phase += per_phase.exchanges()[x].get().bytes.inter_node;
  }
  CHECK(inter_orch < inter_per_phase);
  // Locality-oblivious placement: the direct feature route moves far less than two hops.
  CHECK(2 * per_phase.feature_bytes_direct <
        per_phase.feature_bytes_two_hop + per_phase.feature_bytes_two_hop / 5);
  CHECK(none.hash != orch_plan.hash);
}
