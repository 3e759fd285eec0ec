// SPDX-License-Identifier: Apache-2.0
// A whole step moved byte for byte through the reference executor and compared with a
// single-process reference that never balanced anything: raw inputs generated from (chunk, byte)
// travel owner → encoder, a stand-in encoder turns them into features that depend on every
// input byte, features travel encoder → LLM in one hop, text owner → LLM, the sequences are
// assembled from the assembly map; gradients travel back through the inverse plans; every
// exchange also runs as its node-wise schedule. Used by the soak test (tests/soak).
#pragma once

#include <orch/exchange/execute.hpp>
#include <orch/exchange/item_offsets.hpp>
#include <orch/exchange/schedule.hpp>
#include <orch/orchestrate/orchestrate.hpp>

#include <cstddef>
#include <cstdint>
#include <span>
#include <string>
#include <vector>

namespace orch::test {

/// A byte from two ids (splitmix64's finaliser, low byte).
inline std::byte id_byte(std::uint64_t a, std::uint64_t b) {
  std::uint64_t z = a * 0x9E3779B97F4A7C15ULL + b;
  z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ULL;
  z = (z ^ (z >> 27)) * 0x94D049BB133111EBULL;
  return static_cast<std::byte>((z ^ (z >> 31)) & 0xFFU);
}

/// Source buffers of `plan` with item i's byte j = fill(i, j). O(items + bytes): offsets come
/// from item_offsets, not from exchange_plan::source_offset, which scans the rank's slots.
template <class Fill>
rank_buffers fill_sources(const exchange_plan& plan, Fill fill) {
  rank_buffers b(static_cast<std::size_t>(plan.ranks()));
  for (rank_t r = 0; r < plan.ranks(); ++r) {
    b[static_cast<std::size_t>(r)].resize(static_cast<std::size_t>(plan.source_bytes(r)));
  }
  const auto offsets = item_offsets::source(plan);
  for (index_t i = 0; i < plan.items(); ++i) {
    auto& buf = b[static_cast<std::size_t>(plan.from().rank_of(i))];
    const bytes_t off = offsets.offset(i);
    for (bytes_t j = 0; j < plan.item_bytes()[static_cast<std::size_t>(i)]; ++j) {
      buf[static_cast<std::size_t>(off + j)] = fill(i, j);
    }
  }
  return b;
}

/// The bytes of item i in the destination buffers of `plan`, whose offsets are `offsets`
/// (item_offsets::destination(plan), built once per plan).
inline std::span<const std::byte> item_at_destination(const exchange_plan& plan,
                                                      const item_offsets& offsets,
                                                      const rank_buffers& dst, index_t i) {
  const auto& buf = dst[static_cast<std::size_t>(plan.to().rank_of(i))];
  return std::span<const std::byte>(buf).subspan(static_cast<std::size_t>(offsets.offset(i)),
                                                 static_cast<std::size_t>(offsets.size(i)));
}

/// Where an assembly segment's tokens come from on its rank: the rank's text buffer or its
/// encoder's feature buffer, and the bytes of one token there.
struct segment_source {
  std::span<const std::byte> buffer;
  bytes_t token_bytes = 0;

  /// The bytes of `tokens` tokens from token `first` on.
  [[nodiscard]] std::span<const std::byte> tokens(index_t first, length_t tokens) const {
    return buffer.subspan(static_cast<std::size_t>(first * token_bytes),
                          static_cast<std::size_t>(tokens * token_bytes));
  }
};

/// The source of `seg` on rank `r`, given every rank's text buffer and every encoder's
/// feature buffers on the LLM ranks.
inline segment_source source_of(const assembly_segment& seg, const model_description& model,
                                const rank_buffers& text, const std::vector<rank_buffers>& features,
                                rank_t r) {
  const auto rank = static_cast<std::size_t>(r);
  if (seg.source == text_source) {
    return {text[rank], model.llm.text_bytes_per_token};
  }
  const auto e = static_cast<std::size_t>(seg.source);
  return {features[e][rank], model.encoders[e].feature_bytes_per_token};
}

/// What check_step_bytes found wrong (empty: nothing).
struct step_bytes_report {
  std::string first_error;
  bytes_t bytes_moved = 0;
  [[nodiscard]] bool ok() const { return first_error.empty(); }
};

/// Runs `plan` flat and as its node-wise schedule; both must agree.
inline rank_buffers run_both(const exchange_plan& plan, const topology& topo,
                             const rank_buffers& src, step_bytes_report& report,
                             const std::string& name) {
  auto flat = execute(plan, src);
  if (report.ok() && execute(make_schedule(plan, topo), src) != flat) {
    report.first_error = name + ": the node-wise schedule delivers other bytes than the flat plan";
  }
  report.bytes_moved += plan.total_bytes();
  return flat;
}

/// The stand-in encoder of chunk c: out_bytes bytes that depend on c and every input byte.
inline std::vector<std::byte> stand_in_encoder(index_t c, std::span<const std::byte> input,
                                               bytes_t out_bytes) {
  std::uint64_t digest = 1469598103934665603ULL;
  for (const auto b : input) {
    digest = (digest ^ static_cast<std::uint64_t>(b)) * 1099511628211ULL;
  }
  std::vector<std::byte> out(static_cast<std::size_t>(out_bytes));
  for (std::size_t j = 0; j < out.size(); ++j) {
    out[j] = id_byte(digest + static_cast<std::uint64_t>(c), j);
  }
  return out;
}

/// Moves a whole step and compares every LLM sequence and every gradient with the reference.
inline step_bytes_report check_step_bytes(const item_table& table, const model_description& model,
                                          const topology& topo, const step_plan& sp) {
  step_bytes_report report;
  const auto fail = [&](const std::string& what) {
    if (report.ok()) {
      report.first_error = what;
    }
  };
  const rank_t ranks = topo.ranks();
  const index_t media = table.media_items();
  const index_t chunks = sp.chunks.chunks(media);
  const auto raw = [](index_t c, bytes_t j) {
    return id_byte(1000003ULL + 2 * static_cast<std::uint64_t>(c), static_cast<std::uint64_t>(j));
  };
  const auto text_byte = [](index_t x, bytes_t j) {
    return id_byte(7777ULL + 3 * static_cast<std::uint64_t>(x), static_cast<std::uint64_t>(j));
  };
  const auto grad = [](index_t c, bytes_t j) {
    return id_byte(99991ULL + 5 * static_cast<std::uint64_t>(c), static_cast<std::uint64_t>(j));
  };
  const auto chunk_length = [&](index_t c) {
    return sp.chunks.cut() ? sp.chunks.length(c, table) : table.media_length(c);
  };

  // The reference output of every chunk, computed from the generator (never moved).
  std::vector<std::vector<std::byte>> reference(static_cast<std::size_t>(chunks));
  for (index_t c = 0; c < chunks; ++c) {
    const auto& enc =
        model.encoders[static_cast<std::size_t>(sp.media_encoder[static_cast<std::size_t>(c)])];
    std::vector<std::byte> in(static_cast<std::size_t>(chunk_length(c) * enc.input_bytes_per_unit));
    for (std::size_t j = 0; j < in.size(); ++j) {
      in[j] = raw(c, static_cast<bytes_t>(j));
    }
    reference[static_cast<std::size_t>(c)] = stand_in_encoder(
        c, in, sp.output_tokens[static_cast<std::size_t>(c)] * enc.feature_bytes_per_token);
  }

  std::vector<rank_buffers> llm_features(model.encoders.size());
  for (std::size_t e = 0; e < model.encoders.size(); ++e) {
    const auto& step = sp.encoders[e];
    const auto& items = step.phase.items;
    const auto item = [&](index_t i) { return items[static_cast<std::size_t>(i)]; };
    const auto& in_plan = step.inputs.forward;
    const auto at_encoder = run_both(
        in_plan, topo, fill_sources(in_plan, [&](index_t i, bytes_t j) { return raw(item(i), j); }),
        report, step.inputs.name);
    const auto in_offsets = item_offsets::destination(in_plan);
    const auto& f_plan = step.features.forward;
    const auto f_offsets = item_offsets::source(f_plan);
    rank_buffers out(static_cast<std::size_t>(ranks));
    for (rank_t r = 0; r < ranks; ++r) {
      out[static_cast<std::size_t>(r)].resize(static_cast<std::size_t>(f_plan.source_bytes(r)));
    }
    for (index_t i = 0; i < f_plan.items(); ++i) {
      const auto y =
          stand_in_encoder(item(i), item_at_destination(in_plan, in_offsets, at_encoder, i),
                           f_plan.item_bytes()[static_cast<std::size_t>(i)]);
      auto& buf = out[static_cast<std::size_t>(f_plan.from().rank_of(i))];
      std::copy(y.begin(), y.end(), buf.begin() + static_cast<std::ptrdiff_t>(f_offsets.offset(i)));
    }
    llm_features[e] = run_both(f_plan, topo, out, report, step.features.name);
    // Gradients back through the inverse: each reaches its encoder rank intact.
    const auto& b_plan = step.features.backward;
    const auto back = run_both(
        b_plan, topo, fill_sources(b_plan, [&](index_t i, bytes_t j) { return grad(item(i), j); }),
        report, step.features.name + " backward");
    const auto b_offsets = item_offsets::destination(b_plan);
    for (index_t i = 0; i < b_plan.items() && report.ok(); ++i) {
      if (b_plan.to().rank_of(i) != step.phase.placement.rank_of(i)) {
        fail(step.features.name + " backward: item not returned to its encoder rank");
      }
      const auto got = item_at_destination(b_plan, b_offsets, back, i);
      for (std::size_t j = 0; j < got.size(); ++j) {
        if (got[j] != grad(item(i), static_cast<bytes_t>(j))) {
          fail(step.features.name + " backward: gradient bytes differ");
          break;
        }
      }
    }
    // Raw inputs' inverse returns every byte to its owner.
    const auto returned =
        run_both(step.inputs.backward, topo, at_encoder, report, step.inputs.name + " backward");
    if (returned != fill_sources(in_plan, [&](index_t i, bytes_t j) { return raw(item(i), j); })) {
      fail(step.inputs.name + " backward: the owners do not get their inputs back");
    }
  }
  const auto& t_plan = sp.text.forward;
  const auto text = run_both(t_plan, topo, fill_sources(t_plan, text_byte), report, "text");

  // Every sequence as the assembly map builds it, token by token from its LLM rank's buffers:
  // one walk over each rank's segments (in target order) beside its examples in slot order,
  // whose sequences must lie back to back from token 0 and fill the rank's sequence buffer.
  std::vector<std::vector<std::byte>> assembled(static_cast<std::size_t>(table.examples()));
  for (rank_t r = 0; r < ranks && report.ok(); ++r) {
    const auto on = sp.llm.placement.items_on(r);
    const auto begin_of = [&](std::size_t k) {
      return sp.assembly.sequence_offset[static_cast<std::size_t>(on[k])];
    };
    const auto end_of = [&](std::size_t k) {
      return begin_of(k) + sp.assembly.sequence_length[static_cast<std::size_t>(on[k])];
    };
    index_t filled = 0;
    for (std::size_t k = 0; k < on.size(); ++k) {
      if (begin_of(k) != filled) {
        fail("rank " + std::to_string(r) + ": the sequence of example " + std::to_string(on[k]) +
             " starts at token " + std::to_string(begin_of(k)) + ", not " + std::to_string(filled));
      }
      filled = end_of(k);
    }
    if (sp.assembly.sequence_tokens[static_cast<std::size_t>(r)] != filled) {
      fail("rank " + std::to_string(r) + ": the sequence buffer is not its sequences' length");
    }
    std::size_t k = 0;
    for (const auto& seg : sp.assembly.on_rank(r)) {
      while (k < on.size() && end_of(k) <= seg.target_token) {
        ++k;
      }
      if (k == on.size() || seg.target_token < begin_of(k)) {
        continue;
      }
      const auto bytes =
          source_of(seg, model, text, llm_features, r).tokens(seg.source_token, seg.tokens);
      auto& got = assembled[static_cast<std::size_t>(on[k])];
      got.insert(got.end(), bytes.begin(), bytes.end());
    }
  }
  // ... compared with the reference built from the generators.
  const bytes_t tb = model.llm.text_bytes_per_token;
  for (index_t x = 0; x < table.examples() && report.ok(); ++x) {
    std::vector<std::byte> want;
    const auto add_text = [&](length_t from, length_t to) {
      for (bytes_t b = from * tb; b < to * tb; ++b) {
        want.push_back(text_byte(x, b));
      }
    };
    length_t consumed = 0;
    for (index_t m = table.media_begin(x); m < table.media_end(x); ++m) {
      add_text(consumed, table.media_text_position(m));
      consumed = table.media_text_position(m);
      const index_t first = sp.chunks.cut() ? sp.chunks.first_chunk(m) : m;
      const index_t count = sp.chunks.cut() ? sp.chunks.chunk_count(m) : 1;
      for (index_t c = first; c < first + count; ++c) {
        const auto& f = reference[static_cast<std::size_t>(c)];
        want.insert(want.end(), f.begin(), f.end());
      }
    }
    add_text(consumed, table.text_tokens(x));
    if (assembled[static_cast<std::size_t>(x)] != want) {
      fail("example " + std::to_string(x) + ": the assembled sequence differs from the reference");
    }
  }
  return report;
}

} // namespace orch::test
