// SPDX-License-Identifier: Apache-2.0
#include <orch/config.hpp>
#include <orch/detail/primitives/hash.hpp>
#include <orch/mpi/communicator.hpp>
#include <orch/mpi/error.hpp>
#include <orch/transport/copy_list.hpp>
#include <orch/transport/hash_agreement.hpp>
#include <orch/transport/program.hpp>
#include <orch/transport/transfers.hpp>
#include <orch/transport/watchdog.hpp>

#include <mpi.h>

#include <algorithm>
#include <array>
#include <climits>
#include <cstddef>
#include <cstdint>
#include <cstring>
#include <deque>
#include <memory>
#include <span>
#include <string>
#include <utility>
#include <vector>

namespace orch::mpi {

namespace ot = orch::transport;

namespace detail {

void throw_mpi_error(int code, const char* call, int rank, const char* file, int line) {
  char text[MPI_MAX_ERROR_STRING] = {};
  int length = 0;
  int error_class = 0;
  if (MPI_Error_string(code, text, &length) != MPI_SUCCESS) {
    std::strcpy(text, "unknown MPI error");
  }
  if (MPI_Error_class(code, &error_class) != MPI_SUCCESS) {
    error_class = -1;
  }
  throw mpi_error(code,
                  orch::detail::message(call, " failed on rank ", rank, ": ", text,
                                        " (error class ", error_class, ") at ", file, ":", line));
}

} // namespace detail

namespace {

constexpr int tag_flat = 0x6F72;

// An int count for MPI, or a clear error: MPI-3 counts are int. (A guard only: exchange()
// rejects a chunk above the limit on every rank first, chunk_limit_error below.)
int as_count(bytes_t bytes, rank_t rank, const char* where) {
  if (bytes < 0 || bytes > INT_MAX) {
    throw_invalid_argument(where, ": rank ", rank, " would move a chunk of ", bytes,
                           " bytes, above MPI's int count limit of ", INT_MAX);
  }
  return static_cast<int>(bytes);
}

// A committed derived datatype, freed with its owner.
struct datatype {
  MPI_Datatype type = MPI_DATATYPE_NULL;
  datatype() = default;
  datatype(const datatype&) = delete;
  datatype& operator=(const datatype&) = delete;
  datatype(datatype&& o) noexcept : type(std::exchange(o.type, MPI_DATATYPE_NULL)) {}
  datatype& operator=(datatype&&) = delete;
  ~datatype() {
    int finalized = 0;
    MPI_Finalized(&finalized);
    if (type != MPI_DATATYPE_NULL && finalized == 0) {
      MPI_Type_free(&type);
    }
  }
};

// The blocks of one peer's items in a buffer: hindexed over MPI_BYTE, runs merged.
datatype make_blocks(std::span<const bytes_t> offsets, std::span<const bytes_t> sizes,
                     rank_t rank) {
  const char* where = "orch::mpi::communicator::exchange";
  std::vector<int> lengths;
  std::vector<MPI_Aint> displs;
  for (std::size_t e = 0; e < sizes.size(); ++e) {
    if (sizes[e] == 0) {
      continue;
    }
    if (!displs.empty() && displs.back() + lengths.back() == offsets[e] &&
        static_cast<bytes_t>(lengths.back()) + sizes[e] <= INT_MAX) {
      lengths.back() += static_cast<int>(sizes[e]);
    } else {
      if (sizes[e] > INT_MAX) {
        throw_invalid_argument(where, ": rank ", rank, " would move an item of ", sizes[e],
                               " bytes as one MPI datatype block (packing::datatype), above "
                               "MPI's int count limit of ",
                               INT_MAX, " bytes per block; no payload was moved");
      }
      lengths.push_back(static_cast<int>(sizes[e]));
      displs.push_back(static_cast<MPI_Aint>(offsets[e]));
    }
  }
  datatype t;
  ORCH_MPI_CHECK(MPI_Type_create_hindexed(static_cast<int>(lengths.size()), lengths.data(),
                                          displs.data(), MPI_BYTE, &t.type),
                 rank);
  ORCH_MPI_CHECK(MPI_Type_commit(&t.type), rank);
  return t;
}

// Where a stage's peers live: the communicator a message to world rank r goes over, and r's
// rank in it (-1: not a member, use the fallback).
struct comm_map {
  MPI_Comm comm = MPI_COMM_NULL;
  int size = 0;
  std::vector<int> rank_of; // per world rank
};

} // namespace

// One rank's prepared exchange of one plan (or stage): the core's program, the MPI arrays and
// datatypes it needs. Built once per plan hash and reused.
struct prepared {
  // (this plan's hash, the other stage's hash or 0, 0 flat / 1 stage 1 / 2 stage 2): the
  // stages of two schedules may share a plan but not their workspace offsets.
  std::array<std::uint64_t, 3> key{};
  ot::flat_program program;
  rank_view view;
  // packing::datatype: one type per chunk of program.transfers.sends / recvs, and the self
  // items copied straight from the source into the destination.
  std::vector<datatype> send_types;
  std::vector<datatype> recv_types;
  ot::copy_list self_direct;
  bool has_types = false;
};

struct node_comms {
  std::vector<rank_t> node_of_rank; // the topology they were split for
  comm_map rail;                    // ranks with this rank's local index, one per node
  comm_map node;                    // the ranks of this rank's node
  bool uniform = true;              // every node has the same size: stage 1 stays on the rail
  ~node_comms() {
    int finalized = 0;
    MPI_Finalized(&finalized);
    for (MPI_Comm* c : {&rail.comm, &node.comm}) {
      if (*c != MPI_COMM_NULL && finalized == 0) {
        MPI_Comm_free(c);
      }
    }
  }
};

struct communicator::state {
  MPI_Comm comm = MPI_COMM_NULL;
  ot::watchdog watch;
  comm_map world;
  std::vector<std::byte> workspace;
  std::deque<std::unique_ptr<prepared>> cache; // most recent last
  std::vector<std::unique_ptr<node_comms>> topologies;
  // Buffers of requests abandoned by an abort: MPI may still write them until MPI_Finalize.
  std::vector<std::shared_ptr<void>> graveyard;
  index_t last_messages = 0;

  state(rank_t rank, ot::wait_options wait) : watch(rank, wait) {}
  state(const state&) = delete;
  state& operator=(const state&) = delete;
  ~state() {
    int finalized = 0;
    MPI_Finalized(&finalized);
    cache.clear(); // frees datatypes
    topologies.clear();
    // An aborted communicator may still have a collective pending on it: leave it to
    // MPI_Finalize rather than free it under the pending operation.
    if (comm != MPI_COMM_NULL && finalized == 0 && !watch.aborted()) {
      MPI_Comm_free(&comm);
    }
  }

  // Waits for `requests` with the watchdog. On a timeout or error, point-to-point requests are
  // cancelled and freed; collective ones (which MPI forbids to cancel or free) are abandoned,
  // their buffers kept alive in the graveyard.
  void wait_all(std::vector<MPI_Request>& requests, bool collective, const char* operation,
                std::shared_ptr<void> keep = nullptr) {
    watch.wait(
        operation,
        [&] {
          int flag = 0;
          ORCH_MPI_CHECK(MPI_Testall(static_cast<int>(requests.size()), requests.data(), &flag,
                                     MPI_STATUSES_IGNORE),
                         watch.rank());
          return flag != 0 ? ot::poll_status::done : ot::poll_status::pending;
        },
        [&]() noexcept {
          if (keep) {
            graveyard.push_back(keep);
          }
          if (!collective) {
            for (auto& r : requests) {
              if (r != MPI_REQUEST_NULL) {
                MPI_Cancel(&r);
                MPI_Request_free(&r);
              }
            }
          }
        });
  }

  // The prepared program under `key`, built by `build` when not cached (16 kept).
  template <class Build>
  prepared& get(const std::array<std::uint64_t, 3>& key, Build&& build) {
    for (auto it = cache.begin(); it != cache.end(); ++it) {
      if ((*it)->key == key) {
        auto hit = std::move(*it);
        cache.erase(it);
        cache.push_back(std::move(hit));
        return *cache.back();
      }
    }
    cache.push_back(build());
    if (cache.size() > 16) {
      cache.pop_front();
    }
    return *cache.back();
  }

  // Grows the workspace to at least `bytes`.
  std::byte* reserve(bytes_t bytes) {
    if (workspace.size() < static_cast<std::size_t>(bytes)) {
      workspace.resize(static_cast<std::size_t>(bytes));
    }
    return workspace.data();
  }

  // Runs one flat stage: `prep` from `src` into `dst` (scratch at `ws`), its messages to a world
  // rank r over `map` when map.rank_of[r] ≥ 0, else over the world communicator.
  void run_stage(const prepared& prep, const comm_map& map, std::span<const std::byte> src,
                 std::span<std::byte> dst, std::byte* ws, flat_algorithm algorithm, int tag,
                 const char* where) {
    const rank_t me = watch.rank();
    const auto& p = prep.program;
    const auto& t = p.transfers;
    const auto route = [&](rank_t peer) -> std::pair<MPI_Comm, int> {
      const int r = map.rank_of[static_cast<std::size_t>(peer)];
      return r >= 0 ? std::pair{map.comm, r} : std::pair{world.comm, peer};
    };
    std::vector<MPI_Request> req;
    req.reserve(t.sends.size() + t.recvs.size());
    last_messages += t.messages();
    if (prep.has_types && algorithm == flat_algorithm::p2p) {
      // MPI gathers and scatters the items itself: no pack, no unpack, the self items copied
      // straight from the source into the destination.
      ot::run_copies(prep.self_direct, src, dst);
      for (std::size_t i = 0; i < t.recvs.size(); ++i) {
        const auto [via, peer] = route(t.recvs[i].peer);
        req.push_back(MPI_REQUEST_NULL);
        ORCH_MPI_CHECK(
            MPI_Irecv(dst.data(), 1, prep.recv_types[i].type, peer, tag, via, &req.back()), me);
      }
      for (std::size_t i = 0; i < t.sends.size(); ++i) {
        const auto [via, peer] = route(t.sends[i].peer);
        req.push_back(MPI_REQUEST_NULL);
        ORCH_MPI_CHECK(
            MPI_Isend(src.data(), 1, prep.send_types[i].type, peer, tag, via, &req.back()), me);
      }
      wait_all(req, false, where);
      return;
    }
    std::byte* send = ws + p.workspace.send_offset;
    if (p.pack.identity) {
      send = const_cast<std::byte*>(src.data()); // NOLINT: MPI only reads a send buffer
    } else {
      ot::run_copies(p.pack, src,
                     std::span(send, static_cast<std::size_t>(p.workspace.send_bytes)));
    }
    std::byte* recv = p.unpack.identity ? dst.data() : ws + p.workspace.recv_offset;
    if (t.self.bytes > 0) {
      std::memcpy(recv + t.self.recv_offset, send + t.self.send_offset,
                  static_cast<std::size_t>(t.self.bytes));
    }
    if (algorithm == flat_algorithm::alltoallv) {
      // Every peer must be a member of map.comm (the caller guarantees it).
      const auto k = static_cast<std::size_t>(map.size);
      std::vector<int> sc(k, 0);
      std::vector<int> sd(k, 0);
      std::vector<int> rc(k, 0);
      std::vector<int> rd(k, 0);
      for (const auto& c : t.sends) {
        const auto r = static_cast<std::size_t>(map.rank_of[static_cast<std::size_t>(c.peer)]);
        sc[r] = as_count(c.bytes, me, where);
        sd[r] = as_count(c.offset, me, where);
      }
      for (const auto& c : t.recvs) {
        const auto r = static_cast<std::size_t>(map.rank_of[static_cast<std::size_t>(c.peer)]);
        rc[r] = as_count(c.bytes, me, where);
        rd[r] = as_count(c.offset, me, where);
      }
      // Open MPI's non-blocking collectives take sendbuf == recvbuf for MPI_IN_PLACE. The two
      // coincide only when one of them is empty (a zero-byte region at the same workspace
      // offset): give the empty one a distinct address.
      std::byte distinct[2] = {};
      if (send == recv) {
        if (t.send_bytes == 0) {
          send = distinct;
        } else {
          recv = distinct + 1;
        }
      }
      req.push_back(MPI_REQUEST_NULL);
      ORCH_MPI_CHECK(MPI_Ialltoallv(send, sc.data(), sd.data(), MPI_BYTE, recv, rc.data(),
                                    rd.data(), MPI_BYTE, map.comm, &req.back()),
                     me);
      wait_all(req, true, where);
    } else {
      for (const auto& c : t.recvs) {
        const auto [via, peer] = route(c.peer);
        req.push_back(MPI_REQUEST_NULL);
        ORCH_MPI_CHECK(MPI_Irecv(recv + c.offset, as_count(c.bytes, me, where), MPI_BYTE, peer, tag,
                                 via, &req.back()),
                       me);
      }
      for (const auto& c : t.sends) {
        const auto [via, peer] = route(c.peer);
        req.push_back(MPI_REQUEST_NULL);
        ORCH_MPI_CHECK(MPI_Isend(send + c.offset, as_count(c.bytes, me, where), MPI_BYTE, peer, tag,
                                 via, &req.back()),
                       me);
      }
      wait_all(req, false, where);
    }
    if (!p.unpack.identity) {
      ot::run_copies(
          p.unpack,
          std::span<const std::byte>(recv, static_cast<std::size_t>(p.workspace.recv_bytes)), dst);
    }
  }

  // The sub-communicators of `topo`, split on first use (collective: every rank arrives here
  // for the same topology, after the hash check proved them all present).
  const node_comms& comms_for(const orch::topology& topo) {
    const auto nodes = topo.node_of_ranks();
    for (const auto& c : topologies) {
      if (std::equal(c->node_of_rank.begin(), c->node_of_rank.end(), nodes.begin(), nodes.end())) {
        return *c;
      }
    }
    const rank_t me = watch.rank();
    auto c = std::make_unique<node_comms>();
    c->node_of_rank.assign(nodes.begin(), nodes.end());
    const auto local = topo.local_indices();
    const auto k = nodes.size();
    const auto my = static_cast<std::size_t>(me);
    ORCH_MPI_CHECK(MPI_Comm_split(comm, static_cast<int>(local[my]), me, &c->rail.comm), me);
    ORCH_MPI_CHECK(MPI_Comm_set_errhandler(c->rail.comm, MPI_ERRORS_RETURN), me);
    ORCH_MPI_CHECK(MPI_Comm_split(comm, static_cast<int>(nodes[my]), me, &c->node.comm), me);
    ORCH_MPI_CHECK(MPI_Comm_set_errhandler(c->node.comm, MPI_ERRORS_RETURN), me);
    // Split keys are world ranks, so a member's rank in a sub-communicator is its position
    // among the members in world order.
    c->rail.rank_of.assign(k, -1);
    c->node.rank_of.assign(k, -1);
    for (std::size_t r = 0; r < k; ++r) {
      if (local[r] == local[my]) {
        c->rail.rank_of[r] = c->rail.size++;
      }
      if (nodes[r] == nodes[my]) {
        c->node.rank_of[r] = c->node.size++;
      }
    }
    for (rank_t n = 0; n < topo.nodes(); ++n) {
      c->uniform = c->uniform && topo.ranks_on(n).size() == topo.ranks_on(0).size();
    }
    topologies.push_back(std::move(c));
    return *topologies.back();
  }
};

communicator::communicator(MPI_Comm comm, communicator_options options) : options_(options) {
  int initialized = 0;
  MPI_Initialized(&initialized);
  if (initialized == 0) {
    throw_invalid_argument("orch::mpi::communicator: MPI is not initialised (call MPI_Init first)");
  }
  if (comm == MPI_COMM_NULL) {
    throw_invalid_argument("orch::mpi::communicator: comm is MPI_COMM_NULL (this process is not "
                           "a member of it; pass a communicator it belongs to)");
  }
  // Checked, not silently ignored: datatype packing has no alltoallv form here.
  if (options.packing == packing::datatype && options.algorithm != flat_algorithm::p2p) {
    throw_invalid_argument("orch::mpi::communicator: packing::datatype needs "
                           "flat_algorithm::p2p (the default algorithm is alltoallv)");
  }
  int rank = 0;
  int size = 0;
  ORCH_MPI_CHECK(MPI_Comm_rank(comm, &rank), -1);
  ORCH_MPI_CHECK(MPI_Comm_size(comm, &size), rank);
  rank_ = rank;
  size_ = size;
  s_ = std::make_unique<state>(rank_, options.wait);
  ORCH_MPI_CHECK(MPI_Comm_dup(comm, &s_->comm), rank_);
  ORCH_MPI_CHECK(MPI_Comm_set_errhandler(s_->comm, MPI_ERRORS_RETURN), rank_);
  s_->world.comm = s_->comm;
  s_->world.size = size_;
  s_->world.rank_of.resize(static_cast<std::size_t>(size_));
  for (int r = 0; r < size_; ++r) {
    s_->world.rank_of[static_cast<std::size_t>(r)] = r;
  }
}

communicator::~communicator() = default;
communicator::communicator(communicator&& other) noexcept = default;
communicator& communicator::operator=(communicator&& other) noexcept = default;

bool communicator::aborted() const noexcept {
  return s_ == nullptr || s_->watch.aborted();
}

index_t communicator::last_messages() const noexcept {
  return s_ ? s_->last_messages : 0;
}

std::vector<std::int64_t> communicator::all_gather(std::span<const std::int64_t> words,
                                                   std::vector<std::int64_t>& counts) {
  const char* where = "orch::mpi::communicator::all_gather";
  if (s_ == nullptr) {
    throw aborted_error(
        orch::detail::message(where, ": rank ", rank_,
                              ": this communicator was moved from; use the one it was moved into"));
  }
  s_->watch.check_usable(where);
  // A count above MPI's int limit travels as -1 through the count all-gather, so that every
  // rank learns of it and throws together: thrown before the collective, the peers would wait
  // in it until their timeout.
  const bool too_many = words.size() > static_cast<std::size_t>(INT_MAX);
  const auto k = static_cast<std::size_t>(size_);
  auto sizes = std::make_shared<std::vector<int>>(k + 1, 0);
  (*sizes)[k] = too_many ? -1 : static_cast<int>(words.size()); // own count, sent from the tail
  std::vector<MPI_Request> req(1, MPI_REQUEST_NULL);
  ORCH_MPI_CHECK(MPI_Iallgather(sizes->data() + k, 1, MPI_INT, sizes->data(), 1, MPI_INT, s_->comm,
                                req.data()),
                 rank_);
  s_->wait_all(req, true, where, sizes);
  if (too_many) {
    throw_invalid_argument(where, ": rank ", rank_, " contributes ", words.size(),
                           " words, above MPI's int count limit of ", INT_MAX, " words");
  }
  for (std::size_t r = 0; r < k; ++r) {
    if ((*sizes)[r] < 0) {
      throw_invalid_argument(where, ": rank ", r, " contributes more than ", INT_MAX,
                             " words, above MPI's int count limit of ", INT_MAX,
                             " words (seen by rank ", rank_, "; nothing was gathered)");
    }
  }
  std::vector<int> displs(k, 0);
  counts.assign(k, 0);
  std::int64_t total = 0;
  for (std::size_t r = 0; r < k; ++r) {
    displs[r] = static_cast<int>(total);
    counts[r] = (*sizes)[r];
    total += (*sizes)[r];
    if (total > INT_MAX) {
      throw_invalid_argument(where, ": rank ", rank_, ": the buffers of ranks 0 to ", r,
                             " add up to ", total, " words, above MPI's int displacement limit of ",
                             INT_MAX, " words");
    }
  }
  auto out = std::make_shared<std::vector<std::int64_t>>(static_cast<std::size_t>(total));
  auto in = std::make_shared<std::vector<std::int64_t>>(words.begin(), words.end());
  ORCH_MPI_CHECK(MPI_Iallgatherv(in->data(), static_cast<int>(in->size()), MPI_INT64_T, out->data(),
                                 sizes->data(), displs.data(), MPI_INT64_T, s_->comm, req.data()),
                 rank_);
  s_->wait_all(req, true, where, std::make_shared<std::pair<decltype(in), decltype(out)>>(in, out));
  return std::move(*out);
}

item_table communicator::gather_metadata(const local_batch& batch) {
  std::vector<std::int64_t> counts;
  const auto words = all_gather(batch.serialize(rank_), counts);
  return table_from_metadata(words, counts);
}

namespace {

// The agreement all-reduce: the core's 2·n words and one status word (the highest failing rank
// + 1, or 0) in one MPI_Iallreduce with MPI_MAX.
struct agreement_buffer {
  std::vector<std::uint64_t> words;
};

} // namespace

void communicator::check_plan_hashes(std::span<const std::uint64_t> hashes, bool local_error) {
  const char* where = "orch::mpi::communicator::check_plan_hashes";
  if (s_ == nullptr) {
    throw aborted_error(
        orch::detail::message(where, ": rank ", rank_,
                              ": this communicator was moved from; use the one it was moved into"));
  }
  s_->watch.check_usable(where);
  const auto mine = ot::make_agreement_words(hashes);
  auto buf = std::make_shared<agreement_buffer>();
  buf->words.assign(mine.span().begin(), mine.span().end());
  buf->words.push_back(local_error ? static_cast<std::uint64_t>(rank_) + 1 : 0);
  std::vector<MPI_Request> req(1, MPI_REQUEST_NULL);
  ORCH_MPI_CHECK(MPI_Iallreduce(MPI_IN_PLACE, buf->words.data(),
                                static_cast<int>(buf->words.size()), MPI_UINT64_T, MPI_MAX,
                                s_->comm, req.data()),
                 rank_);
  s_->wait_all(req, true, where, buf);
  const std::uint64_t failed = buf->words.back();
  if (failed != 0 && !local_error) {
    throw_invalid_argument(where, ": rank ", rank_, ": rank ", failed - 1,
                           " rejected its arguments (see that rank's error); no payload was moved");
  }
  if (failed == 0) {
    ot::check_agreement(hashes, std::span(buf->words).first(buf->words.size() - 1), rank_,
                        "orch::mpi::communicator");
  }
}

namespace {

// Builds what an exchange of `view` needs on this rank.
std::unique_ptr<prepared> prepare(const rank_view& view, rank_t ranks, std::uint64_t hash,
                                  const std::array<std::uint64_t, 3>& key, bytes_t base,
                                  const communicator_options& options, bool types) {
  auto p = std::make_unique<prepared>();
  p->key = key;
  p->program = ot::make_flat_program(view, ranks, hash, base, 64);
  p->view = view;
  if (types && options.packing == packing::datatype) {
    p->has_types = true;
    const auto& v = p->view;
    const auto block = [&](const std::vector<bytes_t>& offsets, const std::vector<bytes_t>& sizes,
                           index_t first, index_t items) {
      return make_blocks(std::span(offsets).subspan(static_cast<std::size_t>(first),
                                                    static_cast<std::size_t>(items)),
                         std::span(sizes).subspan(static_cast<std::size_t>(first),
                                                  static_cast<std::size_t>(items)),
                         v.rank);
    };
    for (std::size_t q = 0; q < v.send_peers.size(); ++q) {
      if (v.send_peers[q] != v.rank && v.send_peer_bytes[q] > 0) {
        p->send_types.push_back(
            block(v.send_source_offsets, v.send_sizes, v.send_peer_first[q], v.send_peer_items[q]));
      }
    }
    for (std::size_t q = 0; q < v.recv_peers.size(); ++q) {
      if (v.recv_peers[q] != v.rank && v.recv_peer_bytes[q] > 0) {
        p->recv_types.push_back(block(v.recv_destination_offsets, v.recv_sizes,
                                      v.recv_peer_first[q], v.recv_peer_items[q]));
      }
    }
    // Self items: the same items in the same order on both sides of the self chunk.
    const auto s = std::lower_bound(v.send_peers.begin(), v.send_peers.end(), v.rank);
    const auto r = std::lower_bound(v.recv_peers.begin(), v.recv_peers.end(), v.rank);
    std::vector<bytes_t> from;
    std::vector<bytes_t> to;
    std::vector<bytes_t> sizes;
    if (s != v.send_peers.end() && *s == v.rank) {
      const auto qs = static_cast<std::size_t>(s - v.send_peers.begin());
      const auto qr = static_cast<std::size_t>(r - v.recv_peers.begin());
      for (index_t x = 0; x < v.send_peer_items[qs]; ++x) {
        const auto es = static_cast<std::size_t>(v.send_peer_first[qs] + x);
        const auto er = static_cast<std::size_t>(v.recv_peer_first[qr] + x);
        from.push_back(v.send_source_offsets[es]);
        to.push_back(v.recv_destination_offsets[er]);
        sizes.push_back(v.send_sizes[es]);
      }
    }
    p->self_direct = ot::make_copy_list(from, to, sizes, v.source_bytes, v.destination_bytes);
  }
  return p;
}

// Why MPI cannot move `t`'s chunks (a count, or with int displacements an offset, above
// 2^31 - 1 bytes), or "". Checked before the hash agreement, whose status word then fails every
// rank together, instead of only the two ends of the chunk once payload moves.
std::string chunk_limit_error(const ot::transfer_list& t, bool int_displacements, rank_t rank,
                              const char* where) {
  for (const bool sends : {true, false}) {
    for (const auto& c : sends ? t.sends : t.recvs) {
      if (c.bytes > INT_MAX || (int_displacements && c.offset > INT_MAX)) {
        return orch::detail::message(
            where, ": rank ", rank, sends ? " would send " : " would receive ", c.bytes,
            " bytes at offset ", c.offset, sends ? " to rank " : " from rank ", c.peer,
            ", above MPI's int count limit of ", INT_MAX,
            " bytes per chunk (and per displacement with alltoallv); no payload was moved");
      }
    }
  }
  return {};
}

// Order-sensitive hash of a topology (the node of every rank), agreed on with the stages'
// plan hashes: two ranks that staged alike on different topologies must not pass.
std::uint64_t topology_hash(std::span<const rank_t> node_of_rank) {
  orch::detail::word_hash h;
  h.add(0x6F72636874706F31ULL);
  for (const rank_t n : node_of_rank) {
    h.add_signed(n);
  }
  return h.value();
}

} // namespace

namespace {

std::array<std::uint64_t, 3> cache_key(std::uint64_t hash, std::uint64_t other,
                                       std::uint64_t kind) {
  return {hash, other, kind};
}

} // namespace

void communicator::exchange(const exchange_plan& plan, std::span<const std::byte> src,
                            std::span<std::byte> dst) {
  const char* where = "orch::mpi::communicator::exchange";
  if (s_ == nullptr) {
    throw aborted_error(
        orch::detail::message(where, ": rank ", rank_,
                              ": this communicator was moved from; use the one it was moved into"));
  }
  s_->watch.check_usable(where);
  std::string bad;
  if (plan.ranks() != size_) {
    bad = orch::detail::message(where, ": rank ", rank_, " holds a plan on ", plan.ranks(),
                                " ranks but the communicator has ", size_);
  } else if (src.size() != static_cast<std::size_t>(plan.source_bytes(rank_)) ||
             dst.size() != static_cast<std::size_t>(plan.destination_bytes(rank_))) {
    bad = orch::detail::message(where, ": rank ", rank_, " passed a source buffer of ", src.size(),
                                " bytes and a destination buffer of ", dst.size(),
                                " bytes; the plan needs ", plan.source_bytes(rank_), " and ",
                                plan.destination_bytes(rank_));
  }
  const std::uint64_t hash = plan.hash();
  prepared* prep = nullptr;
  if (bad.empty()) {
    try {
      prep = &s_->get(cache_key(hash, 0, 0), [&] {
        return prepare(plan.view(rank_), size_, hash, cache_key(hash, 0, 0), 0, options_, true);
      });
      bad = chunk_limit_error(prep->program.transfers,
                              options_.algorithm == flat_algorithm::alltoallv, rank_, where);
    } catch (const orch::invalid_argument& e) {
      bad = e.what(); // a datatype block above MPI's int count: reported like the rest
    }
  }
  if (options_.check_plan_hash) {
    check_plan_hashes(std::span(&hash, 1), !bad.empty());
  }
  if (!bad.empty()) {
    throw orch::invalid_argument(bad);
  }
  s_->last_messages = 0;
  prepared& p = *prep;
  // MPI's datatypes gather and scatter in place: no send or receive buffer to reserve.
  const bool in_place = p.has_types && options_.algorithm == flat_algorithm::p2p;
  std::byte* ws = in_place ? nullptr : s_->reserve(p.program.workspace.end);
  s_->run_stage(p, s_->world, src, dst, ws, options_.algorithm, tag_flat, where);
}

void communicator::exchange(const node_schedule& schedule, std::span<const std::byte> src,
                            std::span<std::byte> dst) {
  const char* where = "orch::mpi::communicator::exchange(node_schedule)";
  if (s_ == nullptr) {
    throw aborted_error(
        orch::detail::message(where, ": rank ", rank_,
                              ": this communicator was moved from; use the one it was moved into"));
  }
  s_->watch.check_usable(where);
  std::string bad;
  const auto& a = schedule.inter_node;
  const auto& b = schedule.intra_node;
  if (a.ranks() != size_ || b.ranks() != size_ || schedule.topology.ranks() != size_) {
    bad = orch::detail::message(where, ": rank ", rank_, " holds a schedule on ", a.ranks(),
                                " ranks (intra-node plan on ", b.ranks(), ", topology of ",
                                schedule.topology.ranks(), ") but the communicator has ", size_);
  } else if (src.size() != static_cast<std::size_t>(a.source_bytes(rank_)) ||
             dst.size() != static_cast<std::size_t>(b.destination_bytes(rank_))) {
    bad = orch::detail::message(where, ": rank ", rank_, " passed a source buffer of ", src.size(),
                                " bytes and a destination buffer of ", dst.size(),
                                " bytes; the schedule needs ", a.source_bytes(rank_), " and ",
                                b.destination_bytes(rank_));
  }
  const std::uint64_t hashes[3] = {a.hash(), b.hash(),
                                   topology_hash(schedule.topology.node_of_ranks())};
  // One cache entry per stage; key salted with the other stage's hash so that a stage plan
  // shared by two schedules keeps the workspace offsets of its own schedule.
  const auto k1 = cache_key(hashes[0], hashes[1], 1);
  const auto k2 = cache_key(hashes[1], hashes[0], 2);
  prepared* prep1 = nullptr;
  prepared* prep2 = nullptr;
  if (bad.empty()) {
    try {
      prep1 = &s_->get(
          k1, [&] { return prepare(a.view(rank_), size_, hashes[0], k1, 0, options_, true); });
      prep2 = &s_->get(
          k2, [&] { return prepare(b.view(rank_), size_, hashes[1], k2, 0, options_, true); });
      const bool int_displs = options_.algorithm == flat_algorithm::alltoallv;
      bad = chunk_limit_error(prep1->program.transfers, int_displs, rank_, where);
      if (bad.empty()) {
        bad = chunk_limit_error(prep2->program.transfers, int_displs, rank_, where);
      }
    } catch (const orch::invalid_argument& e) {
      bad = e.what();
    }
  }
  if (options_.check_plan_hash) {
    check_plan_hashes(hashes, !bad.empty());
  }
  if (!bad.empty()) {
    throw orch::invalid_argument(bad);
  }
  s_->last_messages = 0;
  const node_comms& comms = s_->comms_for(schedule.topology);
  prepared& p1 = *prep1;
  prepared& p2 = *prep2;
  // The workspace: staging first, then the stages' regions (orch::transport::nodewise_workspace).
  const auto w =
      ot::make_nodewise_workspace(p1.program.destination_bytes, p1.program.pack, p1.program.unpack,
                                  p2.program.pack, p2.program.unpack, 64);
  p1.program.workspace = w.inter_node;
  p2.program.workspace = w.intra_node;
  std::byte* ws = s_->reserve(w.end);
  const std::span<std::byte> staging(ws + w.staging_offset,
                                     static_cast<std::size_t>(w.staging_bytes));
  // Stage 1 stays on the rail when every node has the same size; otherwise a rank may send to
  // another local index of a smaller node, so point-to-point with the world as fallback.
  const auto first = comms.uniform ? options_.algorithm : flat_algorithm::p2p;
  s_->run_stage(p1, comms.rail, src, staging, ws, first, tag_flat + 1, where);
  s_->run_stage(p2, comms.node, staging, dst, ws, options_.algorithm, tag_flat + 2, where);
}

} // namespace orch::mpi
