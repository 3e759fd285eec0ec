// SPDX-License-Identifier: Apache-2.0
// orch's MPI exchange against a bare MPI_Alltoallv of the same contiguous bytes, in one run,
// interleaved (every iteration runs every method once, in an order that rotates), each
// iteration timed on every rank between barriers and reduced to the slowest rank; medians
// over iterations (docs/benchmarks.md, "MPI exchange"):
//
//   - bare: MPI_Alltoallv of the plan's per-peer byte counts from a packed buffer into a
//     receive buffer (what the exchange costs without orch and without the copies);
//   - pack / unpack: one memcpy of the bytes orch's copy variants pack and unpack on the rank
//     (0 where the copy is the identity and orch skips it); bar = bare + pack + unpack;
//   - by hand: the sequence a trainer would write, timed as one: per-item memcpy pack,
//     MPI_Alltoallv, per-item memcpy unpack;
//   - orch: communicator::exchange with p2p+copy (the default), p2p+datatype, alltoallv+copy,
//     and the node-wise exchange (default variant), each with the plan-hash check on (the
//     default); the hash check alone (one MPI_Iallreduce) is timed on its own;
//   - ratios: medians of per-iteration paired ratios (orch_i / bar_i, orch_i / hand_i).
// Every method's result is checked byte for byte once before timing. Then the metadata path
// at the same process count: all-gather of the item table + orchestrate + hash check, beside
// orchestrate alone, on mini-batches sampled from the bundled trace (omni-7b).
//
//   mpirun -np 8 build/release/bench/mpi/orch_bench_mpi_exchange [--sizes 1M,4M,16M,64M]
//       [--plans uniform,skewed,sparse] [--iterations 15] [--items-per-rank 64] [--ranks-per-node
//       4]
//       [--metadata-examples 320,2560] [--metadata-iterations 10] [--trace data/omni_trace.csv]
//
// (as root add --allow-run-as-root; oversubscribed add --oversubscribe). Sizes are source bytes
// per rank.
#include "input_error.hpp"
#include "trace.hpp"

#include <orch/mpi/communicator.hpp>
#include <orch/orch.hpp>
#include <orch/transport/program.hpp>

#include <mpi.h>

#include <algorithm>
#include <array>
#include <climits>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <exception>
#include <functional>
#include <span>
#include <stdexcept>
#include <string>
#include <vector>

namespace {

using orch::bytes_t;
using orch::index_t;
using orch::rank_t;
namespace om = orch::mpi;

std::size_t u(std::int64_t i) {
  return static_cast<std::size_t>(i);
}

std::vector<std::string> split(const std::string& s) {
  std::vector<std::string> out;
  std::size_t b = 0;
  while (b <= s.size()) {
    const auto e = std::min(s.find(',', b), s.size());
    if (e > b) {
      out.push_back(s.substr(b, e - b));
    }
    b = e + 1;
  }
  return out;
}

bytes_t parse_size(const std::string& s) {
  const char suffix = s.empty() ? '\0' : s.back();
  const bytes_t scale = suffix == 'K' ? 1024 : suffix == 'M' ? 1024 * 1024 : 1;
  const bytes_t v = std::stoll(scale == 1 ? s : s.substr(0, s.size() - 1)) * scale;
  if (v < 1) {
    throw std::invalid_argument("size " + s + " is not positive");
  }
  return v;
}

struct options {
  std::vector<bytes_t> sizes{1 << 20, 4 << 20, 16 << 20, 64 << 20};
  std::vector<std::string> plans{"uniform", "skewed", "sparse"};
  int iterations = 15;
  index_t items_per_rank = 64;
  rank_t ranks_per_node = 4;
  std::vector<index_t> metadata_examples{320, 2560};
  int metadata_iterations = 10;
  std::string trace = "data/omni_trace.csv";
  int spin_polls = orch::transport::wait_options{}.spin_polls; // of every orch communicator
};

options parse(int argc, char** argv) {
  options o;
  for (int i = 1; i < argc; ++i) {
    const std::string a = argv[i];
    if (i + 1 >= argc) {
      throw std::invalid_argument("option " + a + " needs a value");
    }
    const std::string v = argv[++i];
    if (a == "--sizes") {
      o.sizes.clear();
      for (const auto& s : split(v)) {
        o.sizes.push_back(parse_size(s));
      }
    } else if (a == "--plans") {
      o.plans = split(v);
    } else if (a == "--iterations") {
      o.iterations = std::stoi(v);
    } else if (a == "--items-per-rank") {
      o.items_per_rank = std::stoll(v);
    } else if (a == "--ranks-per-node") {
      o.ranks_per_node = std::stoi(v);
    } else if (a == "--metadata-examples") {
      o.metadata_examples.clear();
      for (const auto& s : split(v)) {
        o.metadata_examples.push_back(std::stoll(s));
      }
    } else if (a == "--metadata-iterations") {
      o.metadata_iterations = std::stoi(v);
    } else if (a == "--trace") {
      o.trace = v;
    } else if (a == "--spin-polls") {
      o.spin_polls = std::stoi(v);
    } else {
      throw std::invalid_argument("unknown option " + a);
    }
  }
  for (const auto& p : o.plans) {
    if (p != "uniform" && p != "skewed" && p != "sparse") {
      throw std::invalid_argument("--plans: '" + p + "' is not uniform, skewed or sparse");
    }
  }
  if (o.iterations < 1 || o.items_per_rank < 1 || o.ranks_per_node < 1 ||
      o.metadata_iterations < 1) {
    throw std::invalid_argument("--iterations, --items-per-rank, --ranks-per-node and "
                                "--metadata-iterations must be at least 1");
  }
  return o;
}

std::uint64_t splitmix(std::uint64_t& s) {
  std::uint64_t z = (s += 0x9E3779B97F4A7C15ULL);
  z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ULL;
  z = (z ^ (z >> 27)) * 0x94D049BB133111EBULL;
  return z ^ (z >> 31);
}

// ---- plans -------------------------------------------------------------------------------

// `per_rank` source bytes on every rank in `items` items, the same plan on every rank.
// uniform: equal items, each rank sends items/k of them to every rank, scattered in its source
// buffer; skewed: heavy-tailed item sizes (a few items carry most bytes), half of each rank's
// items to its next rank and the rest anywhere. Destination slots are shuffled in both, so
// neither pack nor unpack is the identity (as in orchestrated steps). sparse: equal items, to
// the rank itself and its next two ranks only (the few non-empty pairs of a locality-aware
// orchestrated plan at scale; MPI_Alltoallv still sees all k ranks).
orch::exchange_plan make_plan(const std::string& kind, rank_t k, index_t items, bytes_t per_rank) {
  // per_rank · weight stays far below 2^63 (sizes < 2^40, weights ≤ 2^11).
  std::uint64_t seed = std::uint64_t{0x5EED0000} + static_cast<std::uint64_t>(per_rank) +
                       (kind == "skewed" ? std::uint64_t{1} << 32 : 0);
  std::vector<rank_t> from;
  std::vector<rank_t> to;
  std::vector<index_t> key;
  std::vector<bytes_t> bytes;
  for (rank_t r = 0; r < k; ++r) {
    std::vector<bytes_t> weight(u(items), 1);
    if (kind == "skewed") {
      for (auto& w : weight) {
        w = bytes_t{1} << (splitmix(seed) % 12); // 1 to 2048: a few items dominate
      }
    }
    bytes_t total = 0;
    for (const auto w : weight) {
      total += w;
    }
    bytes_t given = 0;
    for (index_t j = 0; j < items; ++j) {
      // Integer shares of per_rank, the remainder on the last item.
      const bytes_t b = j + 1 == items ? per_rank - given : per_rank * weight[u(j)] / total;
      given += b;
      bytes.push_back(b);
      from.push_back(r);
      rank_t dest = 0;
      if (kind == "uniform") {
        dest = static_cast<rank_t>((j * 7 + r) % k); // items/k items per peer, interleaved
      } else if (kind == "sparse") {
        dest = static_cast<rank_t>((r + j % 3) % k); // itself and its next two ranks only
      } else {
        dest = splitmix(seed) % 2 == 0 ? (r + 1) % k : static_cast<rank_t>(splitmix(seed) % u(k));
      }
      to.push_back(dest);
      key.push_back(static_cast<index_t>(splitmix(seed) % 1'000'000));
    }
  }
  return orch::make_plan(orch::layout::from_assignment(from, k),
                         orch::layout::from_keys(to, k, key), bytes);
}

// Item i's bytes: words of a hash of (item, word), so results are checked without a reference.
void fill_item(std::span<std::byte> out, index_t item) {
  for (std::size_t w = 0; w * 8 < out.size(); ++w) {
    std::uint64_t s = (static_cast<std::uint64_t>(item) << 32) ^ w;
    const std::uint64_t v = splitmix(s);
    std::memcpy(out.data() + w * 8, &v, std::min<std::size_t>(8, out.size() - w * 8));
  }
}
bool check_item(std::span<const std::byte> got, index_t item) {
  std::vector<std::byte> want(got.size());
  fill_item(want, item);
  return std::memcmp(want.data(), got.data(), got.size()) == 0;
}

// "64K", "1M": a size as the tables show it.
std::string label(bytes_t b) {
  if (b % (1 << 20) == 0) {
    return std::to_string(b >> 20) + "M";
  }
  if (b % 1024 == 0) {
    return std::to_string(b >> 10) + "K";
  }
  return std::to_string(b);
}

// ---- timing ------------------------------------------------------------------------------

rank_t world_rank() {
  int r = 0;
  MPI_Comm_rank(MPI_COMM_WORLD, &r);
  return r;
}
rank_t world_size() {
  int n = 0;
  MPI_Comm_size(MPI_COMM_WORLD, &n);
  return n;
}

// Seconds `f` took on the slowest rank (every rank starts after a barrier).
double timed(const std::function<void()>& f) {
  MPI_Barrier(MPI_COMM_WORLD);
  const double t0 = MPI_Wtime();
  f();
  double t = MPI_Wtime() - t0;
  double slowest = 0;
  MPI_Allreduce(&t, &slowest, 1, MPI_DOUBLE, MPI_MAX, MPI_COMM_WORLD);
  return slowest;
}

double median(std::vector<double> v) {
  std::sort(v.begin(), v.end());
  const std::size_t n = v.size();
  return n == 0 ? 0.0 : n % 2 == 1 ? v[n / 2] : (v[n / 2 - 1] + v[n / 2]) / 2;
}

int as_int(bytes_t b) {
  if (b < 0 || b > INT_MAX) {
    throw std::invalid_argument("a chunk of " + std::to_string(b) +
                                " bytes is above MPI_Alltoallv's int counts");
  }
  return static_cast<int>(b);
}

// The methods, in table order.
enum method : std::size_t {
  bare,
  pack,
  unpack,
  hand,
  hash_check,
  p2p_copy,
  p2p_datatype,
  alltoallv_copy,
  nodewise,
  methods
};
constexpr std::array<const char*, methods> method_names{
    "bare",     "pack",         "unpack",         "by hand",  "hash check",
    "p2p+copy", "p2p+datatype", "alltoallv+copy", "node-wise"};
constexpr std::array<method, 4> orch_methods{p2p_copy, p2p_datatype, alltoallv_copy, nodewise};

struct result {
  std::string plan;
  bytes_t size = 0;
  std::array<double, methods> median_s{};
  std::array<double, methods> ratio_to_bar{};  // orch methods only
  std::array<double, methods> ratio_to_hand{}; // orch methods only
  long long flat_messages_max = 0;
  double flat_messages_mean = 0;
  long long nodewise_messages_max = 0;
  double nodewise_messages_mean = 0;
};

// Largest and mean of `v` over the ranks.
std::pair<long long, double> max_mean(long long v) {
  long long most = 0;
  long long sum = 0;
  MPI_Allreduce(&v, &most, 1, MPI_LONG_LONG, MPI_MAX, MPI_COMM_WORLD);
  MPI_Allreduce(&v, &sum, 1, MPI_LONG_LONG, MPI_SUM, MPI_COMM_WORLD);
  return {most, static_cast<double>(sum) / world_size()};
}

struct communicators {
  om::communicator p2p_copy;
  om::communicator p2p_datatype;
  om::communicator alltoallv_copy;
};

om::communicator make_comm(const options& opts, om::flat_algorithm a, om::packing p) {
  om::communicator_options o;
  o.algorithm = a;
  o.packing = p;
  o.wait.spin_polls = opts.spin_polls;
  return om::communicator(MPI_COMM_WORLD, o);
}

result run_config(communicators& comms, const options& o, const std::string& kind, bytes_t size,
                  const orch::topology& topo) {
  const rank_t me = world_rank();
  const rank_t k = world_size();
  const auto plan = make_plan(kind, k, o.items_per_rank, size);
  const auto schedule = orch::make_schedule(plan, topo);
  const auto view = plan.view(me);
  const auto program = orch::transport::make_flat_program(view, k, plan.hash());
  const std::uint64_t hash = plan.hash();

  std::vector<std::byte> src(u(view.source_bytes));
  {
    const auto at = orch::rank_offsets::source(plan, me);
    for (index_t s = 0; s < at.slots(); ++s) {
      const auto r = at.at(s);
      fill_item(std::span(src).subspan(u(r.offset), u(r.size)), r.item);
    }
  }
  std::vector<std::byte> dst(u(view.destination_bytes));
  std::vector<std::byte> send(u(view.source_bytes));
  std::vector<std::byte> recv(u(view.destination_bytes));
  // The alltoallv arrays of the plan's per-peer counts (the self chunk included).
  const auto ku = u(k);
  std::vector<int> sc(ku, 0);
  std::vector<int> sd(ku, 0);
  std::vector<int> rc(ku, 0);
  std::vector<int> rd(ku, 0);
  for (std::size_t q = 0; q < view.send_peers.size(); ++q) {
    sc[u(view.send_peers[q])] = as_int(view.send_peer_bytes[q]);
    sd[u(view.send_peers[q])] = as_int(view.send_peer_displs[q]);
  }
  for (std::size_t q = 0; q < view.recv_peers.size(); ++q) {
    rc[u(view.recv_peers[q])] = as_int(view.recv_peer_bytes[q]);
    rd[u(view.recv_peers[q])] = as_int(view.recv_peer_displs[q]);
  }
  // The copies orch's copy variants make (none where the copy is the identity).
  const bytes_t pack_bytes = program.pack.identity ? 0 : program.pack.bytes();
  const bytes_t unpack_bytes = program.unpack.identity ? 0 : program.unpack.bytes();

  const auto alltoallv = [&] {
    MPI_Alltoallv(send.data(), sc.data(), sd.data(), MPI_BYTE, recv.data(), rc.data(), rd.data(),
                  MPI_BYTE, MPI_COMM_WORLD);
  };
  const auto by_hand = [&] {
    for (std::size_t e = 0; e < view.send_items.size(); ++e) {
      std::memcpy(send.data() + view.send_packed_offsets[e],
                  src.data() + view.send_source_offsets[e], u(view.send_sizes[e]));
    }
    alltoallv();
    for (std::size_t e = 0; e < view.recv_items.size(); ++e) {
      std::memcpy(dst.data() + view.recv_destination_offsets[e],
                  recv.data() + view.recv_packed_offsets[e], u(view.recv_sizes[e]));
    }
  };
  std::array<std::function<void()>, methods> run;
  run[bare] = alltoallv;
  run[pack] = [&] { std::memcpy(send.data(), src.data(), u(pack_bytes)); };
  run[unpack] = [&] { std::memcpy(dst.data(), recv.data(), u(unpack_bytes)); };
  run[hand] = by_hand;
  run[hash_check] = [&] { comms.p2p_copy.check_plan_hashes(std::span(&hash, 1)); };
  run[p2p_copy] = [&] { comms.p2p_copy.exchange(plan, src, dst); };
  run[p2p_datatype] = [&] { comms.p2p_datatype.exchange(plan, src, dst); };
  run[alltoallv_copy] = [&] { comms.alltoallv_copy.exchange(plan, src, dst); };
  run[nodewise] = [&] { comms.p2p_copy.exchange(schedule, src, dst); };

  // Every result byte for byte before timing (the bare exchange moves packed bytes: it is
  // checked through the hand-written sequence, whose middle it is).
  result res{kind, size};
  const auto verify = [&](const char* what) {
    const auto at = orch::rank_offsets::destination(plan, me);
    bool good = true;
    for (index_t s = 0; good && s < at.slots(); ++s) {
      good = check_item(at.slot_bytes(dst, s), at.at(s).item);
    }
    int all = 0;
    const int mine = good ? 1 : 0;
    MPI_Allreduce(&mine, &all, 1, MPI_INT, MPI_MIN, MPI_COMM_WORLD);
    if (all == 0) {
      throw std::runtime_error(std::string("result of ") + what + " differs (plan " + kind + ", " +
                               std::to_string(size) + " bytes per rank)");
    }
    std::fill(dst.begin(), dst.end(), std::byte{0});
  };
  for (const method m : {hand, p2p_copy, p2p_datatype, alltoallv_copy, nodewise}) {
    run[m]();
    verify(method_names[m]);
    if (m == p2p_copy) {
      std::tie(res.flat_messages_max, res.flat_messages_mean) =
          max_mean(comms.p2p_copy.last_messages());
    } else if (m == nodewise) {
      std::tie(res.nodewise_messages_max, res.nodewise_messages_mean) =
          max_mean(comms.p2p_copy.last_messages());
    }
  }

  std::array<std::vector<double>, methods> t;
  for (int it = -1; it < o.iterations; ++it) { // iteration -1 warms up
    for (std::size_t j = 0; j < methods; ++j) {
      const std::size_t m = (j + static_cast<std::size_t>(it + 1)) % methods;
      const double s = timed(run[m]);
      if (it >= 0) {
        t[m].push_back(s);
      }
    }
  }
  for (std::size_t m = 0; m < methods; ++m) {
    res.median_s[m] = median(t[m]);
  }
  for (const method m : orch_methods) {
    std::vector<double> to_bar;
    std::vector<double> to_hand;
    for (std::size_t i = 0; i < t[m].size(); ++i) {
      to_bar.push_back(t[m][i] / (t[bare][i] + t[pack][i] + t[unpack][i]));
      to_hand.push_back(t[m][i] / t[hand][i]);
    }
    res.ratio_to_bar[m] = median(to_bar);
    res.ratio_to_hand[m] = median(to_hand);
  }
  return res;
}

// ---- metadata: all-gather + plan + hash check vs plan alone ------------------------------

void run_metadata(const options& o, const orch::topology& topo) {
  const rank_t me = world_rank();
  const rank_t k = world_size();
  const auto trace = orch_bench::read_trace_file(o.trace);
  const auto model = orch::model_preset("omni-7b");
  om::communicator comm = make_comm(o, om::flat_algorithm::p2p, om::packing::copy);
  if (me == 0) {
    std::printf("\nmetadata all-gather + orchestrate + hash check (omni-7b, strategy orch, %d "
                "processes, slowest rank, median of %d)\n",
                k, o.metadata_iterations);
    std::printf("| examples per rank | examples | gather + plan + hash check (ms) | of which "
                "gather / plan / hash check (ms) | plan alone (ms) | gather alone (ms) |\n"
                "|---:|---:|---:|---:|---:|---:|\n");
  }
  for (const index_t per_rank : o.metadata_examples) {
    std::uint64_t seed = std::uint64_t{0xDA7A0000} + static_cast<std::uint64_t>(me);
    orch::local_batch batch;
    for (index_t i = 0; i < per_rank; ++i) {
      const std::size_t x = splitmix(seed) % trace.size();
      std::vector<orch::media_spec> media;
      for (const auto& m : trace.media(x)) {
        media.push_back({orch_bench::to_string(m.kind), m.length, 0});
      }
      batch.add(trace.text_tokens(x), media);
    }
    std::vector<double> full;
    std::vector<double> plan_only;
    std::vector<double> gather_only;
    std::array<std::vector<double>, 3> parts;
    orch::item_table table;
    for (int it = -1; it < o.metadata_iterations; ++it) {
      // Inside the whole: each part on each rank (its slowest rank reported).
      std::array<double, 3> part{};
      const double a = timed([&] {
        const double t0 = MPI_Wtime();
        table = comm.gather_metadata(batch);
        const double t1 = MPI_Wtime();
        const auto sp = orch::orchestrate(table, model, topo, {.strategy = orch::strategy::orch});
        const double t2 = MPI_Wtime();
        comm.check_plan_hashes(std::span(&sp.hash, 1));
        part = {t1 - t0, t2 - t1, MPI_Wtime() - t2};
      });
      std::array<double, 3> slowest{};
      MPI_Allreduce(part.data(), slowest.data(), 3, MPI_DOUBLE, MPI_MAX, MPI_COMM_WORLD);
      const double b = timed([&] {
        const auto sp = orch::orchestrate(table, model, topo, {.strategy = orch::strategy::orch});
        static_cast<void>(sp);
      });
      const double c = timed([&] { table = comm.gather_metadata(batch); });
      if (it >= 0) {
        full.push_back(a);
        for (std::size_t j = 0; j < 3; ++j) {
          parts[j].push_back(slowest[j]);
        }
        plan_only.push_back(b);
        gather_only.push_back(c);
      }
    }
    if (me == 0) {
      std::printf("| %lld | %lld | %.2f | %.2f / %.2f / %.2f | %.2f | %.2f |\n",
                  static_cast<long long>(per_rank), static_cast<long long>(table.examples()),
                  1e3 * median(full), 1e3 * median(parts[0]), 1e3 * median(parts[1]),
                  1e3 * median(parts[2]), 1e3 * median(plan_only), 1e3 * median(gather_only));
    }
  }
}

void print(const std::vector<result>& results, const options& o, rank_t k) {
  std::printf("%d processes, %lld items per rank, node-wise over virtual nodes of %d ranks; "
              "slowest rank, median of %d iterations\n\n",
              k, static_cast<long long>(o.items_per_rank), o.ranks_per_node, o.iterations);
  std::printf("times (ms)\n| plan | bytes per rank |");
  for (const auto* n : method_names) {
    std::printf(" %s |", n);
  }
  std::printf("\n|---|---:|");
  for (std::size_t m = 0; m < methods; ++m) {
    std::printf("---:|");
  }
  std::printf("\n");
  for (const auto& r : results) {
    std::printf("| %s | %s |", r.plan.c_str(), label(r.size).c_str());
    for (const double s : r.median_s) {
      std::printf(" %.3f |", 1e3 * s);
    }
    std::printf("\n");
  }
  std::printf("\nratios (medians of per-iteration ratios): orch / (bare + pack + unpack), orch / "
              "by hand\n| plan | bytes per rank |");
  for (const method m : orch_methods) {
    std::printf(" %s / bar | %s / hand |", method_names[m], method_names[m]);
  }
  std::printf("\n|---|---:|");
  for (std::size_t m = 0; m < 2 * orch_methods.size(); ++m) {
    std::printf("---:|");
  }
  std::printf("\n");
  for (const auto& r : results) {
    std::printf("| %s | %s |", r.plan.c_str(), label(r.size).c_str());
    for (const method m : orch_methods) {
      std::printf(" %.3f | %.3f |", r.ratio_to_bar[m], r.ratio_to_hand[m]);
    }
    std::printf("\n");
  }
  std::printf("\nmessages per rank (sends + receives, the self chunk excluded)\n| plan | bytes per "
              "rank | flat max | flat mean | node-wise max | node-wise mean |\n"
              "|---|---:|---:|---:|---:|---:|\n");
  for (const auto& r : results) {
    std::printf("| %s | %s | %lld | %.2f | %lld | %.2f |\n", r.plan.c_str(), label(r.size).c_str(),
                r.flat_messages_max, r.flat_messages_mean, r.nodewise_messages_max,
                r.nodewise_messages_mean);
  }
}

} // namespace

int main(int argc, char** argv) {
  MPI_Init(&argc, &argv);
  const rank_t me = world_rank();
  const rank_t k = world_size();
  int rc = 0;
  try {
    const options o = parse(argc, argv);
    const auto topo = orch::topology::uniform(k, k % o.ranks_per_node == 0 ? o.ranks_per_node : k);
    std::vector<result> results;
    {
      communicators comms{make_comm(o, om::flat_algorithm::p2p, om::packing::copy),
                          make_comm(o, om::flat_algorithm::p2p, om::packing::datatype),
                          make_comm(o, om::flat_algorithm::alltoallv, om::packing::copy)};
      for (const auto& kind : o.plans) {
        for (const bytes_t size : o.sizes) {
          results.push_back(run_config(comms, o, kind, size, topo));
        }
      }
    }
    if (me == 0) {
      print(results, o, k);
    }
    if (!o.metadata_examples.empty()) {
      run_metadata(o, topo);
    }
  } catch (const std::exception& e) {
    std::fprintf(stderr, "rank %d: %s\n", me, e.what());
    std::fflush(stderr);
    MPI_Abort(MPI_COMM_WORLD, 2);
  }
  MPI_Finalize();
  return rc;
}
