// SPDX-License-Identifier: Apache-2.0
// The MPI module's rows of the error catalogue (docs/errors.md, E11xx) raised entry by entry
// under mpirun: every trigger runs on every rank, in id order, and must throw its row's type
// with a message the row's pattern matches on every rank. Errors found inside a collective
// are made to hold on all ranks alike (every rank passes the same bad argument), so that no
// rank waits for a peer that has already thrown.
#include <errors/catalogue.hpp>
#include <errors/triggers.hpp>
#include <plan/plan_support.hpp>

#include <orch/exchange/layout.hpp>
#include <orch/exchange/plan.hpp>
#include <orch/exchange/schedule.hpp>
#include <orch/mpi/communicator.hpp>
#include <orch/topology.hpp>

#include <doctest/doctest.h>
#include <mpi.h>

#include <chrono>
#include <climits>
#include <cstddef>
#include <cstdint>
#include <exception>
#include <map>
#include <span>
#include <string>
#include <sys/mman.h>
#include <utility>
#include <vector>

using orch::bytes_t;
using orch::rank_t;
namespace om = orch::mpi;
using namespace std::chrono_literals;

namespace {

rank_t rank_of_world() {
  int r = 0;
  MPI_Comm_rank(MPI_COMM_WORLD, &r);
  return r;
}

rank_t size_of_world() {
  int n = 0;
  MPI_Comm_size(MPI_COMM_WORLD, &n);
  return n;
}

// The communicator's construction before MPI_Init: this runs at static initialisation, before
// main (tests/mpi/test_mpi.cpp) initialises MPI. E1101's trigger rethrows what it threw.
const std::exception_ptr error_before_init = [] {
  try {
    const om::communicator c(MPI_COMM_WORLD);
  } catch (...) {
    return std::current_exception();
  }
  return std::exception_ptr{};
}();

// `bytes` of address space that nothing may touch (PROT_NONE, no memory committed): a buffer
// of the size a call needs for a check that must fail before any byte is read or written.
class reserved_bytes {
public:
  explicit reserved_bytes(std::size_t bytes) : size_(bytes) {
    void* p = mmap(nullptr, bytes, PROT_NONE, MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);
    REQUIRE(p != MAP_FAILED);
    data_ = static_cast<std::byte*>(p);
  }
  reserved_bytes(const reserved_bytes&) = delete;
  reserved_bytes& operator=(const reserved_bytes&) = delete;
  ~reserved_bytes() { munmap(data_, size_); }
  [[nodiscard]] std::span<std::byte> bytes() const { return {data_, size_}; }
  [[nodiscard]] std::span<const std::int64_t> words() const {
    return {reinterpret_cast<const std::int64_t*>(data_), size_ / sizeof(std::int64_t)};
  }

private:
  std::byte* data_ = nullptr;
  std::size_t size_ = 0;
};

om::communicator_options timeout_of(std::chrono::milliseconds t) {
  om::communicator_options o;
  o.wait.timeout = t;
  return o;
}

// A communicator over the world with a timeout that ends a trigger gone wrong instead of
// hanging the suite.
om::communicator world(om::communicator_options o = timeout_of(30s)) {
  return om::communicator(MPI_COMM_WORLD, o);
}

// Every rank's item of `bytes` bytes moves to the next rank (of `ranks`, the world's by default).
orch::exchange_plan ring_plan(bytes_t bytes, rank_t ranks = size_of_world()) {
  return orch::test::ring_plan(ranks, bytes);
}

// A ring of items of 2^31 bytes, one over MPI's int count, exchanged from and into untouchable
// buffers of the right sizes: every rank sends and receives one chunk above the limit.
void exchange_huge_ring(om::communicator_options o) {
  const auto plan = ring_plan(bytes_t{1} << 31);
  const rank_t me = rank_of_world();
  const reserved_bytes src(static_cast<std::size_t>(plan.source_bytes(me)));
  const reserved_bytes dst(static_cast<std::size_t>(plan.destination_bytes(me)));
  auto comm = world(o);
  comm.exchange(plan, src.bytes(), dst.bytes());
}

// Rank r's plan: the item of rank r - 1 moves to rank r, every other item stays. Every rank
// then waits for a receive that its peer, holding another plan, never sends.
void exchange_unmatched(om::communicator& comm) {
  const rank_t k = comm.size();
  const rank_t me = comm.rank();
  std::vector<rank_t> from;
  std::vector<rank_t> to;
  for (rank_t r = 0; r < k; ++r) {
    from.push_back(r);
    to.push_back(r == (me + k - 1) % k ? me : r);
  }
  const auto plan =
      orch::make_plan(orch::layout::from_assignment(from, k), orch::layout::from_assignment(to, k),
                      std::vector<bytes_t>(static_cast<std::size_t>(k), 8));
  std::vector<std::byte> src(static_cast<std::size_t>(plan.source_bytes(me)));
  std::vector<std::byte> dst(static_cast<std::size_t>(plan.destination_bytes(me)));
  comm.exchange(plan, src, dst);
}

om::communicator_options unmatched_options() {
  auto o = timeout_of(200ms);
  o.algorithm = om::flat_algorithm::p2p;
  o.check_plan_hash = false; // the exchange's own receive, not the agreement, must time out
  return o;
}

const orch_errors::trigger_table& mpi_triggers() {
  static const orch_errors::trigger_table table{
      {"E1101",
       [] {
         if (error_before_init) {
           std::rethrow_exception(error_before_init);
         }
       }},
      {"E1102", [] { static_cast<void>(om::communicator(MPI_COMM_NULL)); }},
      {"E1103",
       [] {
         om::communicator_options o;
         o.packing = om::packing::datatype; // with the default algorithm, alltoallv
         static_cast<void>(om::communicator(MPI_COMM_WORLD, o));
       }},
      {"E1104",
       [] {
         // One word over the limit on rank 0 only, one word elsewhere: every rank must throw
         // this row's error (rank 0 naming its count, the others rank 0), none time out.
         auto comm = world();
         const reserved_bytes words(comm.rank() == 0
                                        ? (std::size_t{INT_MAX} + 1) * sizeof(std::int64_t)
                                        : sizeof(std::int64_t));
         std::vector<std::int64_t> counts;
         static_cast<void>(comm.all_gather(words.words(), counts));
       }},
      {"E1105",
       [] {
         // 2^30 words per rank: from two ranks on, the total is past 2^31 - 1.
         const reserved_bytes words((std::size_t{1} << 30) * sizeof(std::int64_t));
         auto comm = world();
         std::vector<std::int64_t> counts;
         static_cast<void>(comm.all_gather(words.words(), counts));
       }},
      {"E1106",
       [] {
         // Rank 0 reports a local error in the first agreement, rank 1 in the second: every
         // rank hears of another's in one of them (the reporting rank itself is not told).
         auto comm = world();
         const std::uint64_t hash = 7;
         std::exception_ptr first;
         for (const rank_t failing : {0, 1}) {
           try {
             comm.check_plan_hashes(std::span(&hash, 1), comm.rank() == failing);
           } catch (...) {
             if (!first) {
               first = std::current_exception();
             }
           }
         }
         if (first) {
           std::rethrow_exception(first);
         }
       }},
      {"E1107",
       [] {
         auto comm = world();
         comm.exchange(ring_plan(8, comm.size() + 1), {}, {});
       }},
      {"E1108",
       [] {
         auto comm = world();
         comm.exchange(ring_plan(8), {}, {});
       }},
      {"E1109", [] { exchange_huge_ring(timeout_of(30s)); }},
      {"E1110",
       [] {
         auto o = timeout_of(30s);
         o.algorithm = om::flat_algorithm::p2p;
         o.packing = om::packing::datatype;
         exchange_huge_ring(o);
       }},
      {"E1111",
       [] {
         auto comm = world();
         const rank_t k = comm.size() + 1;
         comm.exchange(orch::make_schedule(ring_plan(8, k), orch::topology::uniform(k, 1)), {}, {});
       }},
      {"E1112",
       [] {
         auto comm = world();
         const rank_t k = comm.size();
         comm.exchange(orch::make_schedule(ring_plan(8), orch::topology::uniform(k, 1)), {}, {});
       }},
      {"E1113",
       [] {
         auto a = world();
         const om::communicator b(std::move(a));
         // NOLINTNEXTLINE(bugprone-use-after-move): a moved-from communicator's state is specified
         a.exchange(ring_plan(8), {}, {});
       }},
      {"E1114",
       [] {
         // Every rank's items have another size: k different plans of the same shape.
         auto comm = world();
         const rank_t k = comm.size();
         const rank_t me = comm.rank();
         std::vector<rank_t> ranks;
         for (rank_t r = 0; r < k; ++r) {
           ranks.push_back(r);
         }
         const auto l = orch::layout::from_assignment(ranks, k);
         const auto plan =
             orch::make_plan(l, l, std::vector<bytes_t>(static_cast<std::size_t>(k), me + 1));
         std::vector<std::byte> src(static_cast<std::size_t>(plan.source_bytes(me)));
         std::vector<std::byte> dst(static_cast<std::size_t>(plan.destination_bytes(me)));
         comm.exchange(plan, src, dst);
       }},
      {"E1115",
       [] {
         auto comm = world(unmatched_options());
         exchange_unmatched(comm);
       }},
      {"E1116",
       [] {
         auto comm = world(unmatched_options());
         try {
           exchange_unmatched(comm);
         } catch (const om::timeout_error&) {
         }
         exchange_unmatched(comm); // aborted: refused at once
       }},
      {"E1117",
       [] {
         // A send to a rank outside MPI_COMM_SELF, on a duplicate that returns errors.
         MPI_Comm self = MPI_COMM_NULL;
         MPI_Comm_dup(MPI_COMM_SELF, &self);
         MPI_Comm_set_errhandler(self, MPI_ERRORS_RETURN);
         try {
           ORCH_MPI_CHECK(MPI_Send(nullptr, 0, MPI_BYTE, 5, 0, self), rank_of_world());
         } catch (...) {
           MPI_Comm_free(&self);
           throw;
         }
         MPI_Comm_free(&self);
       }},
  };
  return table;
}

std::string mpi_type_of(const orch::error& e) {
  if (dynamic_cast<const om::mpi_error*>(&e) != nullptr) {
    return "mpi_error";
  }
  return orch_errors::type_of(e);
}

bool is_mpi_row(const std::string& id) {
  return id.size() == 5 && id.starts_with("E11");
}

} // namespace

TEST_CASE("mpi errors: every E11xx catalogue entry is raised on every rank with its type and "
          "message") {
  if (size_of_world() < 2) {
    MESSAGE("the MPI error triggers need at least 2 processes");
    return;
  }
  const auto doc = orch_errors::catalogue(ORCH_ERRORS_DOC);
  for (const auto& entry : mpi_triggers()) {
    CHECK(is_mpi_row(entry.first));
    orch_errors::check_raises(entry.first, doc, entry.second, mpi_type_of);
  }
}

TEST_CASE("mpi errors: every E11xx catalogue entry has exactly one trigger") {
  const auto& t = mpi_triggers();
  int rows = 0;
  for (const auto& entry : orch_errors::catalogue(ORCH_ERRORS_DOC)) {
    const std::string& id = entry.first;
    if (is_mpi_row(id)) {
      CAPTURE(id);
      CHECK(t.count(id) == 1);
      ++rows;
    }
  }
  CHECK(rows == static_cast<int>(t.size()));
}
