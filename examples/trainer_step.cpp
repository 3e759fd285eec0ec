// SPDX-License-Identifier: Apache-2.0
// One training step as a trainer runs it, on 8 ranks in 2 nodes, written from README and
// docs/api alone: every rank serialises its sampled examples (text, images, long audio that
// the model cuts into 30-s windows), the "gathered" buffers give every rank the same table and
// plan (hashes compared), each rank packs its send buffers from per-item spans, the reference
// executor moves every exchange, the stand-in encoders run on what arrived, the LLM sequences
// are assembled, and gradients return through the inverse plans. Every byte is checked
// against payload regenerated from ids; the program exits non-zero on any mismatch.
#include <orch/orch.hpp>

#include <cstdint>
#include <cstdio>
#include <cstring>
#include <span>
#include <vector>

namespace {

constexpr orch::rank_t ranks = 8;
constexpr std::int64_t unit_bytes = 4;  // raw input bytes per patch / frame
constexpr std::int64_t token_bytes = 8; // bytes per text or feature token

// A payload word from ids: every byte of every buffer is a function of what it carries.
std::uint64_t word(std::uint64_t kind, std::uint64_t id, std::uint64_t at) {
  std::uint64_t x = (kind * 0x9E3779B97F4A7C15ULL) ^ (id * 0xBF58476D1CE4E5B9ULL) ^ (at + 1);
  x ^= x >> 31;
  return x * 0x94D049BB133111EBULL;
}
void fill(std::span<std::byte> out, std::uint64_t kind, std::uint64_t id, std::uint64_t first) {
  for (std::size_t i = 0; i < out.size(); i += 8) {
    const std::uint64_t w = word(kind, id, first + i / 8);
    std::memcpy(out.data() + i, &w, std::min<std::size_t>(8, out.size() - i));
  }
}
bool same(std::span<const std::byte> got, std::uint64_t kind, std::uint64_t id,
          std::uint64_t first) {
  std::vector<std::byte> want(got.size());
  fill(want, kind, id, first);
  return std::memcmp(want.data(), got.data(), got.size()) == 0;
}

// The model, with designated initialisers (docs/api/model.md).
orch::model_description make_model() {
  orch::model_description m;
  m.encoders.push_back({.name = "vision",
                        .fields = {"image"},
                        .cost = {.linear = 1300, .quadratic = 2},
                        .output_divisor = 4,
                        .output_extra = 2,
                        .input_bytes_per_unit = unit_bytes,
                        .feature_bytes_per_token = token_bytes});
  m.encoders.push_back({.name = "audio",
                        .fields = {{"audio", 3000}}, // 30-s windows at 100 frames/s
                        .cost = {.linear = 1300, .quadratic = 1},
                        .output_divisor = 4,
                        .output_extra = 2,
                        .input_bytes_per_unit = unit_bytes,
                        .feature_bytes_per_token = token_bytes});
  m.llm = {.cost = {.linear = 14000, .quadratic = 1}, .text_bytes_per_token = token_bytes};
  return m;
}

// What rank r sampled: a seeded mix of chat, image-text, speech and long recordings.
orch::local_batch sample(orch::rank_t r) {
  orch::local_batch batch;
  for (int i = 0; i < 6; ++i) {
    const int k = (r * 7 + i * 3) % 10;
    const orch::length_t text = 40 + 97 * ((r + 3 * i) % 11);
    std::vector<orch::media_spec> media;
    if (k < 4) {
      media.push_back({"image", 256 + 320 * ((r * i + k) % 9), 0});
    } else if (k < 7) {
      media.push_back({"audio", 500 + 900 * ((r + i) % 5), text / 2});
    } else if (k == 7) {
      media.push_back({"audio", 12'000 + 9'000 * (r % 3), text}); // 2-5 minutes: many windows
    }
    batch.add(text, media);
  }
  return batch;
}

} // namespace

int main() {
  const auto model = make_model();
  const auto topo = orch::topology::uniform(ranks, 4);

  // 1. Metadata all-gather: each rank serialises its batch; every rank rebuilds the table.
  std::vector<std::vector<std::int64_t>> gathered;
  for (orch::rank_t r = 0; r < ranks; ++r) {
    gathered.push_back(sample(r).serialize(r));
  }
  const std::vector<std::span<const std::int64_t>> buffers(gathered.begin(), gathered.end());
  std::vector<orch::step_plan> plans;
  for (orch::rank_t r = 0; r < ranks; ++r) { // what each rank computes on its own
    orch::item_table table(model);
    orch::append_metadata(table, buffers);
    plans.push_back(orch::orchestrate(table, model, topo, {.strategy = orch::strategy::orch}));
  }
  orch::item_table table(model);
  orch::append_metadata(table, buffers);
  const orch::step_plan& sp = plans[0];
  bool ok = true;
  for (const auto& p : plans) {
    ok = ok && p.hash == sp.hash; // the check a trainer makes with one all-reduce
  }
  std::printf("%lld examples, %lld media items cut into %lld chunks; plans agree: %s\n",
              static_cast<long long>(table.examples()), static_cast<long long>(table.media_items()),
              static_cast<long long>(sp.chunks.chunks(table.media_items())), ok ? "yes" : "NO");

  std::int64_t checked = 0;
  const auto check = [&](bool good, std::size_t bytes) {
    ok = ok && good;
    checked += static_cast<std::int64_t>(bytes);
  };
  const auto u = [](auto i) { return static_cast<std::size_t>(i); };
  // One exchange over every rank: each packs its send buffer from its items' spans
  // (docs/api/payload.md), the all-to-all, each unpacks; `arrived(rank, item, bytes)` sees
  // every item where it landed. Returns every rank's destination buffer.
  const auto run = [&](const orch::exchange_plan& plan, const auto& bytes_of, const auto& arrived) {
    std::vector<orch::rank_view> views;
    orch::rank_buffers send(ranks);
    for (orch::rank_t r = 0; r < ranks; ++r) {
      views.push_back(plan.view(r));
      send[u(r)].resize(u(views.back().source_bytes));
      orch::pack_items(views.back(), bytes_of, send[u(r)]);
    }
    const auto recv = orch::all_to_all(views, send);
    orch::rank_buffers destination(ranks);
    for (orch::rank_t r = 0; r < ranks; ++r) {
      destination[u(r)].resize(recv[u(r)].size());
      orch::unpack(views[u(r)], recv[u(r)], destination[u(r)]);
      const orch::received_items got(views[u(r)]);
      for (const orch::index_t item : views[u(r)].recv_items) {
        arrived(r, item, got.destination_bytes(destination[u(r)], item));
      }
    }
    return destination;
  };
  const auto span_of = [&](const std::vector<std::vector<std::byte>>& v) {
    return [&v, &u](orch::index_t i) { return std::span<const std::byte>(v[u(i)]); };
  };

  // 2. Encoders: raw inputs owner → encoder rank (a chunk is a slice of its item's input),
  // the stand-in encoder on what arrived, features encoder → LLM rank, gradients back.
  std::vector<orch::rank_buffers> features_at_llm(sp.encoders.size());
  std::vector<std::vector<orch::index_t>> item_of_chunk(sp.encoders.size());
  for (std::size_t e = 0; e < sp.encoders.size(); ++e) {
    const auto& enc = sp.encoders[e];
    const auto chunk = [&](orch::index_t i) { return u(enc.phase.items[u(i)]); };
    const auto first_word = [&](orch::index_t i) {
      return u(sp.chunks.offset(enc.phase.items[u(i)]) * unit_bytes / 8);
    };
    const auto media = [&](orch::index_t i) {
      return u(sp.chunks.media_of(enc.phase.items[u(i)]));
    };
    item_of_chunk[e].assign(u(sp.chunks.chunks(table.media_items())), -1);
    std::vector<std::vector<std::byte>> raw(enc.phase.items.size());
    for (orch::index_t i = 0; i < enc.inputs.forward.items(); ++i) { // the owner's own media
      item_of_chunk[e][chunk(i)] = i;
      raw[u(i)].resize(u(enc.inputs.forward.item_bytes()[u(i)]));
      fill(raw[u(i)], 1, media(i), first_word(i));
    }
    std::vector<std::vector<std::byte>> features(raw.size());
    run(enc.inputs.forward, span_of(raw),
        [&](orch::rank_t r, orch::index_t i, std::span<const std::byte> in) {
          check(r == enc.phase.placement.rank_of(i) && same(in, 1, media(i), first_word(i)),
                in.size());
          features[u(i)].resize(u(enc.features.forward.item_bytes()[u(i)])); // stand-in encoder
          fill(features[u(i)], 2, chunk(i), 0);
        });
    features_at_llm[e] =
        run(enc.features.forward, span_of(features),
            [&](orch::rank_t r, orch::index_t i, std::span<const std::byte> f) {
              check(r == enc.feature_layout.rank_of(i) && same(f, 2, chunk(i), 0), f.size());
            });
    // Backward: feature gradients LLM → encoder rank, input gradients encoder → owner.
    run(enc.features.backward, span_of(features),
        [&](orch::rank_t r, orch::index_t i, std::span<const std::byte> g) {
          check(r == enc.phase.placement.rank_of(i) && same(g, 2, chunk(i), 0), g.size());
        });
    run(enc.inputs.backward, span_of(raw),
        [&](orch::rank_t r, orch::index_t i, std::span<const std::byte> g) {
          check(r == enc.owner_media.rank_of(i) && same(g, 1, media(i), first_word(i)), g.size());
        });
  }

  // 3. Text owner → LLM rank, then every LLM sequence from the assembly map: each segment is
  // text of its example or one chunk's output, and lands right after the previous one.
  std::vector<std::vector<std::byte>> text(u(table.examples()));
  for (std::size_t x = 0; x < text.size(); ++x) {
    text[x].resize(u(sp.text.forward.item_bytes()[x]));
    fill(text[x], 3, x, 0);
  }
  const auto text_at_llm =
      run(sp.text.forward, span_of(text),
          [&](orch::rank_t r, orch::index_t x, std::span<const std::byte> t) {
            check(r == sp.llm.placement.rank_of(x) && same(t, 3, u(x), 0), t.size());
          });
  const auto text_offsets = orch::item_offsets::destination(sp.text.forward);
  std::vector<orch::item_offsets> feature_offsets;
  for (const auto& enc : sp.encoders) {
    feature_offsets.push_back(orch::item_offsets::destination(enc.features.forward));
  }
  for (orch::rank_t r = 0; r < ranks; ++r) {
    orch::index_t tokens = 0;
    for (const auto& seg : sp.assembly.on_rank(r)) {
      const bool is_text = seg.source == orch::text_source;
      const auto& buffer = is_text ? text_at_llm[u(r)] : features_at_llm[u(seg.source)][u(r)];
      const std::span<const std::byte> got(buffer.data() + seg.source_token * token_bytes,
                                           u(seg.tokens * token_bytes));
      // Where the segment's item starts in the buffer, in tokens.
      const orch::index_t item = is_text ? seg.example : item_of_chunk[u(seg.source)][u(seg.media)];
      const orch::bytes_t start =
          (is_text ? text_offsets : feature_offsets[u(seg.source)]).offset(item) / token_bytes;
      check(seg.target_token == tokens &&
                same(got, is_text ? 3 : 2, u(is_text ? seg.example : seg.media),
                     u(seg.source_token - start)),
            got.size());
      tokens += seg.tokens;
    }
    check(tokens == sp.assembly.sequence_tokens[u(r)], 0);
  }

  // 4. What balancing did, per phase: the largest load over the mean, before and after.
  const auto before = orch::orchestrate(table, model, topo, {.strategy = orch::strategy::none});
  std::printf("%-8s %12s %12s\n", "phase", "none", "orch");
  for (std::size_t p = 0; p < sp.phases().size(); ++p) {
    const orch::phase_result& a = before.phases()[p];
    const orch::phase_result& b = sp.phases()[p];
    std::printf("%-8s %12.3f %12.3f\n", b.name.c_str(), a.balance.max_over_mean,
                b.balance.max_over_mean);
  }
  std::printf("bytes checked: %lld; every byte as expected: %s\n", static_cast<long long>(checked),
              ok ? "yes" : "NO");
  return ok ? 0 : 1;
}
