// SPDX-License-Identifier: Apache-2.0
/// Exchanges between CPU processes over MPI: the metadata all-gather, the plan-hash agreement
/// and flat and node-wise exchanges of orch plans on one rank's byte buffers, over a
/// communicator the application owns. A backend of the exchange core (orch/transport/).
#pragma once

#include <orch/exchange/plan.hpp>
#include <orch/exchange/schedule.hpp>
#include <orch/mpi/error.hpp>
#include <orch/orchestrate/item_table.hpp>
#include <orch/orchestrate/metadata.hpp>
#include <orch/transport/program.hpp>
#include <orch/transport/watchdog.hpp>
#include <orch/types.hpp>

#include <mpi.h>

#include <chrono>
#include <cstddef>
#include <cstdint>
#include <memory>
#include <span>
#include <vector>

namespace orch::mpi {

/// How a flat exchange (and each stage of a node-wise one) moves its chunks.
enum class flat_algorithm {
  p2p,      ///< MPI_Irecv / MPI_Isend of the non-empty pairs only, then MPI_Testall polling
  alltoallv ///< one MPI_Ialltoallv over all ranks (counts of 0 for silent pairs)
};

/// Where the scattered items of a rank are gathered into per-peer chunks.
enum class packing {
  copy,    ///< pack into a contiguous send buffer and unpack from a contiguous receive buffer
           ///< (memcpy of merged runs; skipped where the copy is the identity)
  datatype ///< MPI gathers and scatters the items itself: one MPI_Type_create_hindexed per peer
           ///< over the source and destination buffers (with flat_algorithm::p2p only)
};

/// Options of a communicator. Every rank must pass the same options (they decide which
/// collectives run).
struct communicator_options {
  /// All-reduce the plan hashes (and every rank's buffer check) before moving payload: a plan
  /// that differs on one rank, or a wrong-size buffer on one rank, then fails on every rank
  /// with nothing moved. Without it a rank that fails alone leaves its peers to time out.
  bool check_plan_hash = true;
  /// How long any wait (collective or exchange) may take before the communicator is aborted
  /// and timeout_error thrown, and how it polls.
  orch::transport::wait_options wait{};
  /// alltoallv + copy is the default: the fastest of the three variants in every run of
  /// bench/mpi at 8 processes (docs/benchmarks.md, "MPI exchange"). p2p posts only the plan's
  /// non-empty pairs, which may pay off on sparse plans over many more ranks (not measured).
  flat_algorithm algorithm = flat_algorithm::alltoallv;
  orch::mpi::packing packing = orch::mpi::packing::copy;
};

/// Runs orch's collectives and exchanges on one rank over a duplicate of an MPI communicator
/// that the application owns (MPI_Comm_dup at construction, so orch's messages never match the
/// application's; the duplicate has MPI_ERRORS_RETURN, the application's communicator is left
/// as it is). Every wait is bounded: MPI_Test polling against options.wait.timeout; a timeout
/// or a failed MPI call aborts this communicator (pending requests are cancelled or
/// abandoned: buffers of an aborted exchange must stay alive until MPI_Finalize) and throws;
/// later calls throw aborted_error. Move-only; not thread-safe. Destroy it before
/// MPI_Finalize.
///
/// Every member that communicates is collective: all ranks of the communicator call it with
/// the same arguments (plans, schedules, options), in the same order.
class communicator {
public:
  /// Borrows `comm` (which must outlive this object) through a duplicate.
  /// Collective over `comm` (MPI_Comm_dup). Throws: mpi_error, orch::invalid_argument
  /// (MPI_COMM_NULL, MPI not initialised, or packing::datatype without flat_algorithm::p2p).
  explicit communicator(MPI_Comm comm, communicator_options options = {});
  ~communicator();
  communicator(communicator&& other) noexcept;
  communicator& operator=(communicator&& other) noexcept;
  communicator(const communicator&) = delete;
  communicator& operator=(const communicator&) = delete;

  /// This rank. Complexity: O(1).
  [[nodiscard]] rank_t rank() const noexcept { return rank_; }
  /// Number of ranks. Complexity: O(1).
  [[nodiscard]] rank_t size() const noexcept { return size_; }
  /// The options. Complexity: O(1).
  [[nodiscard]] const communicator_options& options() const noexcept { return options_; }
  /// Whether a timeout or failure aborted this communicator. Complexity: O(1).
  [[nodiscard]] bool aborted() const noexcept;

  /// The metadata all-gather: every rank's serialised batch (local_batch::serialize) over
  /// MPI_Iallgather (word counts) and MPI_Iallgatherv (words), decoded into the item table
  /// that is then identical on every rank (orch/orchestrate/metadata.hpp, table_from_metadata).
  /// Collective. Throws: timeout_error, mpi_error, aborted_error, and whatever
  /// table_from_metadata throws for a malformed buffer (naming the rank).
  [[nodiscard]] item_table gather_metadata(const local_batch& batch);
  /// The raw all-gather of int64 words: every rank's `words`, rank 0's first, and each rank's
  /// word count into `counts` (resized to size()). Collective. Throws: as above, and
  /// orch::invalid_argument on every rank when any rank's count is above 2^31 - 1 words (the
  /// counts are gathered first, so no rank waits for one that rejected its own buffer).
  [[nodiscard]] std::vector<std::int64_t> all_gather(std::span<const std::int64_t> words,
                                                     std::vector<std::int64_t>& counts);

  /// Collective: checks that every rank passed the same hashes (at most 8) with one
  /// MPI_Iallreduce (orch/transport/hash_agreement.hpp). `local_error`: this rank found its
  /// own arguments bad (the same reduction tells every rank so). Throws on every rank:
  /// plan_mismatch_error naming this rank's hash and the smallest and largest of all ranks;
  /// orch::invalid_argument naming the (highest) rank that reported a local error, which the
  /// caller on that rank replaces by its own message; timeout_error, mpi_error, aborted_error.
  void check_plan_hashes(std::span<const std::uint64_t> hashes, bool local_error = false);

  /// Flat exchange of `plan` (plan.ranks() == size()): `src` holds plan.source_bytes(rank())
  /// bytes (the rank's items in `from` slot order), `dst` receives plan.destination_bytes
  /// (rank()) bytes; they must not overlap. With options.check_plan_hash, first agrees on the
  /// plan with every rank. Collective.
  /// Throws: orch::invalid_argument (plan of another size; a buffer of the wrong size — naming
  /// the rank, on every rank when the hash check is on), plan_mismatch_error, timeout_error,
  /// mpi_error, aborted_error.
  void exchange(const exchange_plan& plan, std::span<const std::byte> src,
                std::span<std::byte> dst);
  /// Node-wise exchange: stage 1 (inter-node: ranks with the same local index, over a
  /// sub-communicator of each local index) into a staging buffer, stage 2 (intra-node, over a
  /// sub-communicator of each node). Byte-identical to the flat exchange of the schedule's
  /// plan. The sub-communicators are created (MPI_Comm_split, after the hash check) the first
  /// time a topology is used and kept. Collective. Throws: as the flat exchange.
  void exchange(const node_schedule& schedule, std::span<const std::byte> src,
                std::span<std::byte> dst);

  /// Messages (sends + receives) this rank posted in its last exchange. Complexity: O(1).
  [[nodiscard]] index_t last_messages() const noexcept;

private:
  struct state;
  std::unique_ptr<state> s_;
  rank_t rank_ = 0;
  rank_t size_ = 1;
  communicator_options options_;
};

} // namespace orch::mpi
