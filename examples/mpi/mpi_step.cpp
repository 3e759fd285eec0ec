// SPDX-License-Identifier: Apache-2.0
// One orchestrated training step per process, over MPI (orch::mpi), as a C++ trainer without
// PyTorch runs it: every process samples its own mini-batch of real lengths from the bundled
// trace (data/omni_trace.csv), the metadata is all-gathered over MPI, every process plans the
// same step (omni-7b costs; plan hashes agreed on by one all-reduce), the raw inputs go owner →
// encoder rank, a stand-in encoder writes features, the features go encoder rank → LLM rank
// (flat and node-wise, which must agree byte for byte), the text goes owner → LLM rank, each
// LLM rank assembles its sequences, and the gradients return along the inverse plans: sequence
// gradients are scattered back into feature gradients (the assembly read backwards), feature
// gradients go LLM → encoder rank, input gradients encoder → owner. Every byte that arrives is
// checked against payload regenerated from ids; any mismatch makes every process exit 1.
// Rank 0 prints the per-rank load of every phase without balancing (strategy none) and with
// orch, and the messages each exchange posted.
//
//   mpirun -np 8 build/dev/examples/mpi/example_mpi_step [--trace data/omni_trace.csv]
//       [--per-rank 8] [--steps 2] [--seed 1] [--ranks-per-node 2] [--unit-bytes 4]
//       [--token-bytes 16] [--variant alltoallv|p2p|datatype]
//
// (as root add --allow-run-as-root; on a machine with fewer cores than processes add
// --oversubscribe). Payload sizes: --unit-bytes per image patch / audio frame (omni-7b's bf16
// inputs would be 2352 and 256), --token-bytes per text and feature token (omni-7b: 7168).
#include <orch/mpi/communicator.hpp>
#include <orch/orch.hpp>

#include <mpi.h>

#include <algorithm>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <exception>
#include <fstream>
#include <map>
#include <span>
#include <sstream>
#include <stdexcept>
#include <string>
#include <utility>
#include <vector>

namespace {

using orch::bytes_t;
using orch::index_t;
using orch::rank_t;

struct options {
  std::string trace = "data/omni_trace.csv";
  int per_rank = 8;
  int steps = 2;
  std::uint64_t seed = 1;
  rank_t ranks_per_node = 2;
  bytes_t unit_bytes = 4;
  bytes_t token_bytes = 16;
  orch::mpi::flat_algorithm algorithm = orch::mpi::communicator_options{}.algorithm;
  orch::mpi::packing packing = orch::mpi::packing::copy;
};

options parse(int argc, char** argv) {
  options o;
  for (int i = 1; i < argc; ++i) {
    const std::string a = argv[i];
    if (i + 1 >= argc) {
      throw std::invalid_argument("option " + a + " needs a value");
    }
    const std::string v = argv[++i];
    if (a == "--trace") {
      o.trace = v;
    } else if (a == "--per-rank") {
      o.per_rank = std::stoi(v);
    } else if (a == "--steps") {
      o.steps = std::stoi(v);
    } else if (a == "--seed") {
      o.seed = std::stoull(v);
    } else if (a == "--ranks-per-node") {
      o.ranks_per_node = std::stoi(v);
    } else if (a == "--unit-bytes") {
      o.unit_bytes = std::stoll(v);
    } else if (a == "--token-bytes") {
      o.token_bytes = std::stoll(v);
    } else if (a == "--variant" && v == "p2p") {
      o.algorithm = orch::mpi::flat_algorithm::p2p;
    } else if (a == "--variant" && v == "datatype") {
      o.algorithm = orch::mpi::flat_algorithm::p2p; // datatype packing is point-to-point
      o.packing = orch::mpi::packing::datatype;
    } else if (a == "--variant" && v == "alltoallv") {
      o.algorithm = orch::mpi::flat_algorithm::alltoallv;
    } else {
      throw std::invalid_argument("unknown option " + a + " " + v);
    }
  }
  if (o.per_rank < 0 || o.steps < 1 || o.ranks_per_node < 1 || o.unit_bytes < 1 ||
      o.token_bytes < 1) {
    throw std::invalid_argument("--per-rank must be ≥ 0; --steps, --ranks-per-node, "
                                "--unit-bytes and --token-bytes ≥ 1");
  }
  return o;
}

// ---- the trace: examples of data/omni_trace.csv (docs/trace-format.md) ------------------

struct trace_example {
  orch::length_t text = 0;
  std::vector<std::pair<std::string, orch::length_t>> media; // field, length, in sequence order
};

std::vector<trace_example> read_trace(const std::string& path) {
  std::ifstream in(path);
  if (!in) {
    throw std::invalid_argument("cannot open trace " + path +
                                " (run from the repository root or pass --trace)");
  }
  std::vector<trace_example> out;
  std::string line;
  std::string last_id;
  bool header = false;
  for (int n = 1; std::getline(in, line); ++n) {
    if (line.empty() || line[0] == '#') {
      continue;
    }
    if (!header) {
      if (line != "example,field,length") {
        throw std::invalid_argument(path + ":" + std::to_string(n) + ": not a length trace");
      }
      header = true;
      continue;
    }
    std::stringstream cells(line);
    std::string id;
    std::string field;
    std::string length;
    if (!std::getline(cells, id, ',') || !std::getline(cells, field, ',') ||
        !std::getline(cells, length)) {
      throw std::invalid_argument(path + ":" + std::to_string(n) + ": not 3 cells");
    }
    if (out.empty() || id != last_id) {
      out.emplace_back();
      last_id = id;
    }
    const orch::length_t l = std::stoll(length);
    if (field == "text") {
      out.back().text += l;
    } else {
      out.back().media.emplace_back(field, l);
    }
  }
  if (out.empty()) {
    throw std::invalid_argument(path + ": no example");
  }
  return out;
}

std::uint64_t splitmix(std::uint64_t& s) {
  std::uint64_t z = (s += 0x9E3779B97F4A7C15ULL);
  z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ULL;
  z = (z ^ (z >> 27)) * 0x94D049BB133111EBULL;
  return z ^ (z >> 31);
}

// What `rank` samples in `step`: reproducible from (seed, step, rank) alone, as a data loader
// with a per-rank seed. Media come before the text in the sequence (text position 0).
orch::local_batch sample(const std::vector<trace_example>& trace, const options& o, int step,
                         rank_t rank) {
  constexpr std::uint64_t prime = 0x100000001B3;
  std::uint64_t s = (o.seed * prime + static_cast<std::uint64_t>(step)) * prime +
                    static_cast<std::uint64_t>(rank);
  orch::local_batch batch;
  for (int i = 0; i < o.per_rank; ++i) {
    const auto& ex = trace[splitmix(s) % trace.size()];
    std::vector<orch::media_spec> media;
    for (const auto& [field, length] : ex.media) {
      media.push_back({field, length, 0});
    }
    batch.add(ex.text, media);
  }
  return batch;
}

// ---- payload: every byte is a function of (kind, id, position) ------------------------------

enum kind : std::uint64_t { raw_input = 1, feature = 2, text_token = 3, seq_grad = 4, input_grad };

std::byte byte_at(std::uint64_t kind, std::uint64_t id, std::uint64_t pos) {
  std::uint64_t x = (kind * 0x9E3779B97F4A7C15ULL) ^ (id * 0xBF58476D1CE4E5B9ULL) ^ (pos / 8 + 1);
  x ^= x >> 31;
  x *= 0x94D049BB133111EBULL;
  return static_cast<std::byte>((x >> (8 * (pos % 8))) & 0xFFU);
}
void fill(std::span<std::byte> out, std::uint64_t kind, std::uint64_t id, std::uint64_t first) {
  for (std::size_t i = 0; i < out.size(); ++i) {
    out[i] = byte_at(kind, id, first + i);
  }
}
bool same(std::span<const std::byte> got, std::uint64_t kind, std::uint64_t id,
          std::uint64_t first) {
  for (std::size_t i = 0; i < got.size(); ++i) {
    if (got[i] != byte_at(kind, id, first + i)) {
      return false;
    }
  }
  return true;
}

std::size_t u(std::int64_t i) {
  return static_cast<std::size_t>(i);
}

// This rank's source buffer of `plan`: its items in `from` slot order, item i written by
// `write(i, bytes)`.
template <class Write>
std::vector<std::byte> source_buffer(const orch::exchange_plan& plan, rank_t me, Write&& write) {
  std::vector<std::byte> buf(u(plan.source_bytes(me)));
  const auto at = orch::rank_offsets::source(plan, me);
  for (index_t s = 0; s < at.slots(); ++s) {
    const auto r = at.at(s);
    write(r.item, std::span(buf).subspan(u(r.offset), u(r.size)));
  }
  return buf;
}

// Whether every item of `dst` (this rank's destination buffer of `plan`, `to` slot order)
// passes `good(i, bytes)`.
template <class Good>
bool check_destination(const orch::exchange_plan& plan, rank_t me, std::span<const std::byte> dst,
                       Good&& good) {
  bool ok = dst.size() == u(plan.destination_bytes(me));
  const auto at = orch::rank_offsets::destination(plan, me);
  for (index_t s = 0; ok && s < at.slots(); ++s) {
    ok = good(at.at(s).item, at.slot_bytes(dst, s));
  }
  return ok;
}

// omni-7b's costs (docs/model.md) with the payload sizes of the options; text and feature
// tokens share a width so that a sequence buffer holds both.
orch::model_description make_model(const options& o) {
  auto m = orch::model_preset("omni-7b");
  for (auto& e : m.encoders) {
    e.input_bytes_per_unit = o.unit_bytes;
    e.feature_bytes_per_token = o.token_bytes;
  }
  m.llm.text_bytes_per_token = o.token_bytes;
  return m;
}

// Every rank's value of `v`, on rank 0.
std::vector<long long> gather_on_root(long long v, rank_t ranks) {
  std::vector<long long> all(u(ranks));
  MPI_Gather(&v, 1, MPI_LONG_LONG, all.data(), 1, MPI_LONG_LONG, 0, MPI_COMM_WORLD);
  return all;
}

struct step_report {
  bool ok = true;
  long long bytes_checked = 0;
};

// One step: plan, forward, assembly, backward. `ok` false on any byte that differs.
step_report run_step(orch::mpi::communicator& comm, const std::vector<trace_example>& trace,
                     const options& o, const orch::model_description& model,
                     const orch::topology& topo, int step) {
  const rank_t me = comm.rank();
  const rank_t k = comm.size();
  const bytes_t tb = o.token_bytes;
  step_report rep;
  const auto check = [&](bool good, std::size_t bytes) {
    rep.ok = rep.ok && good;
    rep.bytes_checked += static_cast<long long>(bytes);
  };

  // [doc:mpi_step]
  // 1. Metadata all-gather over MPI: every rank holds the same table, then the same plans.
  const orch::item_table table = comm.gather_metadata(sample(trace, o, step, me));
  const auto sp = orch::orchestrate(table, model, topo, {.strategy = orch::strategy::orch});
  const auto none = orch::orchestrate(table, model, topo, {.strategy = orch::strategy::none});
  const std::uint64_t hashes[2] = {sp.hash, none.hash};
  comm.check_plan_hashes(hashes); // throws on every rank if one rank planned differently

  // Messages (sends + receives) of this rank per exchange: flat, node-wise.
  std::vector<std::pair<std::string, std::pair<long long, long long>>> messages;
  // Runs `plan` flat and node-wise (both must agree), returns the destination buffer.
  const auto move = [&](const std::string& name, const orch::exchange_plan& plan,
                        std::span<const std::byte> src) {
    std::vector<std::byte> dst(u(plan.destination_bytes(me)));
    comm.exchange(plan, src, dst);
    const long long flat = comm.last_messages();
    std::vector<std::byte> nodewise(dst.size());
    comm.exchange(orch::make_schedule(plan, topo), src, nodewise);
    check(nodewise == dst, 0);
    messages.push_back({name, {flat, comm.last_messages()}});
    return dst;
  };
  // [/doc:mpi_step]

  // Where each chunk's output lands in its example's sequence (tokens from the sequence's
  // start), from every rank's assembly segments: what its gradient will hold.
  std::map<index_t, std::pair<index_t, index_t>> chunk_in_sequence; // chunk → (example, token)
  for (const auto& seg : sp.assembly.segments) {
    if (seg.source != orch::text_source) {
      chunk_in_sequence[seg.media] = {seg.example, seg.target_token -
                                                       sp.assembly.sequence_offset[u(seg.example)]};
    }
  }

  // 2. Encoders forward: raw inputs owner → encoder rank (a chunk is a slice of its media
  // item's input), the stand-in encoder, features encoder rank → LLM rank.
  std::vector<std::vector<std::byte>> features_at_llm;
  for (const auto& enc : sp.encoders) {
    const auto chunk = [&](index_t i) { return u(enc.phase.items[u(i)]); };
    const auto media = [&](index_t i) { return u(sp.chunks.media_of(enc.phase.items[u(i)])); };
    const auto first = [&](index_t i) {
      return u(sp.chunks.offset(enc.phase.items[u(i)]) * o.unit_bytes);
    };
    const auto& in = enc.inputs.forward;
    const auto raw = source_buffer(
        in, me, [&](index_t i, std::span<std::byte> b) { fill(b, raw_input, media(i), first(i)); });
    const auto arrived = move(enc.inputs.name, in, raw);
    check(check_destination(in, me, arrived,
                            [&](index_t i, std::span<const std::byte> b) {
                              return in.to().rank_of(i) == enc.phase.placement.rank_of(i) &&
                                     same(b, raw_input, media(i), first(i));
                            }),
          arrived.size());
    const auto& fw = enc.features.forward;
    const auto features = source_buffer(fw, me, [&](index_t i, std::span<std::byte> b) {
      fill(b, feature, chunk(i), 0); // the stand-in encoder on the input that arrived
    });
    auto at_llm = move(enc.features.name, fw, features);
    check(check_destination(fw, me, at_llm,
                            [&](index_t i, std::span<const std::byte> b) {
                              return same(b, feature, chunk(i), 0);
                            }),
          at_llm.size());
    features_at_llm.push_back(std::move(at_llm));
  }

  // The phase item (= exchange item) of each chunk, per encoder.
  std::vector<std::map<index_t, index_t>> item_of_chunk(sp.encoders.size());
  for (std::size_t e = 0; e < sp.encoders.size(); ++e) {
    const auto& items = sp.encoders[e].phase.items;
    for (std::size_t i = 0; i < items.size(); ++i) {
      item_of_chunk[e][items[i]] = static_cast<index_t>(i);
    }
  }

  // 3. Text owner → LLM rank (token ids: no gradient returns), then this rank's sequences
  // from the assembly map: each segment is text of its example or one chunk's output, copied
  // right after the previous one, and is checked where it landed.
  const auto text_src = source_buffer(sp.text.forward, me, [&](index_t x, std::span<std::byte> b) {
    fill(b, text_token, u(x), 0);
  });
  const auto text_at_llm = move(sp.text.name, sp.text.forward, text_src);
  check(check_destination(sp.text.forward, me, text_at_llm,
                          [&](index_t x, std::span<const std::byte> b) {
                            return sp.llm.placement.rank_of(x) == me &&
                                   same(b, text_token, u(x), 0);
                          }),
        text_at_llm.size());
  const auto text_at = orch::rank_offsets::destination(sp.text.forward, me);
  std::vector<orch::rank_offsets> features_at;
  for (const auto& enc : sp.encoders) {
    features_at.push_back(orch::rank_offsets::destination(enc.features.forward, me));
  }
  std::vector<std::byte> sequences(u(sp.assembly.sequence_tokens[u(me)] * tb));
  index_t tokens = 0;
  for (const auto& seg : sp.assembly.on_rank(me)) {
    const bool is_text = seg.source == orch::text_source;
    const auto e = u(seg.source);
    const auto& buffer = is_text ? text_at_llm : features_at_llm[e];
    const std::span<std::byte> target(sequences.data() + seg.target_token * tb, u(seg.tokens * tb));
    std::memcpy(target.data(), buffer.data() + seg.source_token * tb, target.size());
    // Where the segment's item starts in its buffer, in tokens.
    const index_t start = is_text ? text_at.find(seg.example).offset / tb
                                  : features_at[e].find(item_of_chunk[e].at(seg.media)).offset / tb;
    check(seg.target_token == tokens &&
              same(target, is_text ? text_token : feature, u(is_text ? seg.example : seg.media),
                   u((seg.source_token - start) * tb)),
          target.size());
    tokens += seg.tokens;
  }
  check(tokens == sp.assembly.sequence_tokens[u(me)], 0);

  // 4. Backward. The LLM's gradient of every sequence token (a function of its example and
  // position), scattered back into per-encoder feature gradients by reading the assembly map
  // the other way round.
  std::vector<std::byte> grads(sequences.size());
  for (const index_t x : sp.llm.placement.items_on(me)) {
    const auto begin = sp.assembly.sequence_offset[u(x)] * tb;
    fill(std::span(grads).subspan(u(begin), u(sp.assembly.sequence_length[u(x)] * tb)), seq_grad,
         u(x), 0);
  }
  std::vector<std::vector<std::byte>> feature_grads;
  for (const auto& buffer : features_at_llm) {
    feature_grads.emplace_back(buffer.size());
  }
  for (const auto& seg : sp.assembly.on_rank(me)) {
    if (seg.source != orch::text_source) {
      std::memcpy(feature_grads[u(seg.source)].data() + seg.source_token * tb,
                  grads.data() + seg.target_token * tb, u(seg.tokens * tb));
    }
  }
  for (std::size_t e = 0; e < sp.encoders.size(); ++e) {
    const auto& enc = sp.encoders[e];
    const auto chunk = [&](index_t i) { return enc.phase.items[u(i)]; };
    // Feature gradients LLM rank → encoder rank: chunk c's holds the sequence gradient of the
    // tokens its output took.
    const auto& fb = enc.features.backward;
    const auto at_encoder = move(enc.features.name + " backward", fb, feature_grads[e]);
    check(check_destination(fb, me, at_encoder,
                            [&](index_t i, std::span<const std::byte> b) {
                              const auto [x, token] = chunk_in_sequence.at(chunk(i));
                              return fb.to().rank_of(i) == enc.phase.placement.rank_of(i) &&
                                     same(b, seq_grad, u(x), u(token * tb));
                            }),
          at_encoder.size());
    // The stand-in encoder's backward: input gradients, encoder rank → owner.
    const auto media = [&](index_t i) { return u(sp.chunks.media_of(chunk(i))); };
    const auto first = [&](index_t i) { return u(sp.chunks.offset(chunk(i)) * o.unit_bytes); };
    const auto& ib = enc.inputs.backward;
    const auto input_grads = source_buffer(ib, me, [&](index_t i, std::span<std::byte> b) {
      fill(b, input_grad, media(i), first(i));
    });
    const auto at_owner = move(enc.inputs.name + " backward", ib, input_grads);
    check(check_destination(ib, me, at_owner,
                            [&](index_t i, std::span<const std::byte> b) {
                              return ib.to().rank_of(i) == enc.owner_media.rank_of(i) &&
                                     same(b, input_grad, media(i), first(i));
                            }),
          at_owner.size());
  }

  // 5. What balancing did (rank 0 prints): every phase's per-rank load in forward TFLOPs
  // (omni-7b's cost units are kFLOPs), without balancing and with orch; then the messages.
  int all_ok = 0;
  const int my_ok = rep.ok ? 1 : 0;
  MPI_Allreduce(&my_ok, &all_ok, 1, MPI_INT, MPI_MIN, MPI_COMM_WORLD);
  rep.ok = all_ok == 1;
  std::vector<std::vector<long long>> msgs;
  for (const auto& [name, m] : messages) {
    msgs.push_back(gather_on_root(m.first, k));
    msgs.push_back(gather_on_root(m.second, k));
  }
  if (me == 0) {
    // (The hash itself is not printed: it changes with the hash scheme, the plan does not.)
    std::printf("step %d: %lld examples, %lld media items in %lld chunks; plans agree on all "
                "%d ranks\n",
                step, static_cast<long long>(table.examples()),
                static_cast<long long>(table.media_items()),
                static_cast<long long>(sp.chunks.chunks(table.media_items())), k);
    std::printf("  %-7s %-5s %9s |", "phase", "plan", "max/mean");
    for (rank_t r = 0; r < k; ++r) {
      std::printf(" %7s", ("rank " + std::to_string(r)).c_str());
    }
    std::printf("   (load, forward TFLOPs)\n");
    for (std::size_t p = 0; p < sp.phases().size(); ++p) {
      for (const auto* plan : {&none, &sp}) {
        const orch::phase_result& ph = plan->phases()[p];
        std::printf("  %-7s %-5s %9.3f |", ph.name.c_str(), plan == &sp ? "orch" : "none",
                    ph.balance.max_over_mean);
        for (const orch::cost_t load : ph.loads) {
          std::printf(" %7.1f", static_cast<double>(load) / 1e9);
        }
        std::printf("\n");
      }
    }
    std::printf("  %-26s %16s %16s\n", "messages per rank (max)", "flat", "node-wise");
    for (std::size_t x = 0; x < messages.size(); ++x) {
      const auto most = [](const std::vector<long long>& v) {
        return *std::max_element(v.begin(), v.end());
      };
      std::printf("  %-26s %16lld %16lld\n", messages[x].first.c_str(), most(msgs[2 * x]),
                  most(msgs[2 * x + 1]));
    }
  }
  return rep;
}

} // namespace

int main(int argc, char** argv) {
  MPI_Init(&argc, &argv);
  int me = 0;
  int k = 1;
  MPI_Comm_rank(MPI_COMM_WORLD, &me);
  MPI_Comm_size(MPI_COMM_WORLD, &k);
  bool ok = true;
  try {
    const options o = parse(argc, argv);
    const auto trace = read_trace(o.trace);
    const auto model = make_model(o);
    // Virtual nodes of --ranks-per-node processes (one node when it does not divide the job).
    const auto topo = orch::topology::uniform(k, k % o.ranks_per_node == 0 ? o.ranks_per_node : k);
    orch::mpi::communicator_options copts;
    copts.algorithm = o.algorithm;
    copts.packing = o.packing;
    // The application's communicator, borrowed (orch works on a duplicate of it).
    orch::mpi::communicator comm(MPI_COMM_WORLD, copts);
    long long checked = 0;
    for (int step = 0; step < o.steps && ok; ++step) {
      const auto rep = run_step(comm, trace, o, model, topo, step);
      ok = rep.ok;
      checked += rep.bytes_checked;
    }
    long long total = 0;
    MPI_Reduce(&checked, &total, 1, MPI_LONG_LONG, MPI_SUM, 0, MPI_COMM_WORLD);
    if (me == 0) {
      std::printf("%d processes, %d steps: %lld bytes checked; every byte as expected: %s\n", k,
                  o.steps, total, ok ? "yes" : "NO");
    }
  } catch (const std::exception& e) {
    // A failure on one rank (an orch::mpi timeout included) ends the job: its peers may be
    // waiting in a collective that this rank will never join.
    std::fprintf(stderr, "rank %d: %s\n", me, e.what());
    std::fflush(stderr);
    MPI_Abort(MPI_COMM_WORLD, 2);
  }
  MPI_Finalize();
  return ok ? 0 : 1;
}
