// SPDX-License-Identifier: Apache-2.0
// A real multi-process exchange: one process per GPU, NCCL bootstrapped through MPI (rank 0
// creates the ncclUniqueId, MPI_Bcast shares it). Every rank builds the same plan from a fixed
// seed, runs the flat and the node-wise exchange and checks every byte it received.
//
//   mpirun -np 8 orch_example_cuda_mpi [--ranks-per-node 8] [--items-per-rank 256]
#include <orch/cuda/communicator.hpp>
#include <orch/cuda/device_buffer.hpp>
#include <orch/cuda/error.hpp>
#include <orch/exchange/item_offsets.hpp>
#include <orch/exchange/layout.hpp>
#include <orch/exchange/plan.hpp>
#include <orch/exchange/schedule.hpp>
#include <orch/topology.hpp>

#include <cuda_runtime_api.h>
#include <mpi.h>

#include <algorithm>
#include <chrono>
#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <exception>
#include <string>
#include <vector>

using orch::bytes_t;
using orch::index_t;
using orch::rank_t;
namespace oc = orch::cuda;

namespace {

std::uint64_t mix(std::uint64_t x) {
  x += 0x9E3779B97F4A7C15ULL;
  x = (x ^ (x >> 30)) * 0xBF58476D1CE4E5B9ULL;
  x = (x ^ (x >> 27)) * 0x94D049BB133111EBULL;
  return x ^ (x >> 31);
}

// Byte b of item i: receivers check without a reference copy.
std::byte payload(index_t item, bytes_t b) {
  return static_cast<std::byte>(
      mix((static_cast<std::uint64_t>(item) << 32) ^ static_cast<std::uint64_t>(b)) & 0xFFU);
}

struct options {
  rank_t ranks_per_node = 0; // 0: the ranks of this host (MPI shared-memory split)
  index_t items_per_rank = 256;
};

options parse(int argc, char** argv) {
  options o;
  for (int i = 1; i + 1 < argc; i += 2) {
    const std::string flag = argv[i];
    if (flag == "--ranks-per-node") {
      o.ranks_per_node = static_cast<rank_t>(std::atoi(argv[i + 1]));
    } else if (flag == "--items-per-rank") {
      o.items_per_rank = std::atoll(argv[i + 1]);
    }
  }
  return o;
}

// Checks the destination buffer of `rank`; returns the number of wrong bytes. rank_offsets
// walks the rank's slots once (exchange_plan::destination_offset scans them on every call).
bytes_t check(const orch::exchange_plan& plan, rank_t rank, const std::vector<std::byte>& dst) {
  const auto received = orch::rank_offsets::destination(plan, rank);
  bytes_t wrong = 0;
  for (index_t s = 0; s < received.slots(); ++s) {
    const orch::item_range r = received.at(s);
    for (bytes_t b = 0; b < r.size; ++b) {
      wrong += dst[static_cast<std::size_t>(r.offset + b)] != payload(r.item, b) ? 1 : 0;
    }
  }
  return wrong;
}

int run(int argc, char** argv) {
  int world_rank = 0;
  int world = 1;
  MPI_Comm_rank(MPI_COMM_WORLD, &world_rank);
  MPI_Comm_size(MPI_COMM_WORLD, &world);
  MPI_Comm local = MPI_COMM_NULL;
  MPI_Comm_split_type(MPI_COMM_WORLD, MPI_COMM_TYPE_SHARED, world_rank, MPI_INFO_NULL, &local);
  int local_rank = 0;
  int local_size = 1;
  MPI_Comm_rank(local, &local_rank);
  MPI_Comm_size(local, &local_size);
  MPI_Comm_free(&local);
  options opt = parse(argc, argv);
  if (opt.ranks_per_node <= 0) {
    opt.ranks_per_node = local_size;
  }

  int devices = 0;
  ORCH_CUDA_CHECK(cudaGetDeviceCount(&devices));
  ORCH_CUDA_CHECK(cudaSetDevice(local_rank % devices));

  ncclUniqueId id{};
  if (world_rank == 0) {
    ORCH_NCCL_CHECK(ncclGetUniqueId(&id));
  }
  MPI_Bcast(&id, sizeof id, MPI_BYTE, 0, MPI_COMM_WORLD);
  oc::communicator comm(oc::nccl_comm::init_rank(world, id, world_rank));

  // The same plan on every rank: items on random ranks, of 0..64 KiB, to random ranks.
  const auto n = static_cast<std::size_t>(opt.items_per_rank) * static_cast<std::size_t>(world);
  std::vector<rank_t> from(n);
  std::vector<rank_t> to(n);
  std::vector<bytes_t> bytes(n);
  for (std::size_t i = 0; i < n; ++i) {
    const std::uint64_t r = mix(i);
    from[i] = static_cast<rank_t>(r % static_cast<std::uint64_t>(world));
    to[i] = static_cast<rank_t>((r >> 20) % static_cast<std::uint64_t>(world));
    bytes[i] = (r >> 40) % 8 == 0 ? 0 : static_cast<bytes_t>((r >> 44) % 65536);
  }
  const auto plan = orch::make_plan(orch::layout::from_assignment(from, world),
                                    orch::layout::from_assignment(to, world), bytes);
  const auto topo = orch::topology::from_node_of_rank([&] {
    std::vector<rank_t> node(static_cast<std::size_t>(world));
    for (rank_t r = 0; r < world; ++r) {
      node[static_cast<std::size_t>(r)] = r / opt.ranks_per_node;
    }
    return node;
  }());
  const auto schedule = orch::make_schedule(plan, topo);

  const rank_t me = comm.rank();
  std::vector<std::byte> src(static_cast<std::size_t>(plan.source_bytes(me)));
  const auto sent = orch::rank_offsets::source(plan, me);
  for (index_t s = 0; s < sent.slots(); ++s) {
    const orch::item_range r = sent.at(s);
    for (bytes_t b = 0; b < r.size; ++b) {
      src[static_cast<std::size_t>(r.offset + b)] = payload(r.item, b);
    }
  }
  const bytes_t dst_bytes = plan.destination_bytes(me);
  oc::device_buffer d_src(static_cast<bytes_t>(src.size()) + 1);
  oc::device_buffer d_dst(dst_bytes + 1);
  if (!src.empty()) {
    ORCH_CUDA_CHECK(cudaMemcpy(d_src.data(), src.data(), src.size(), cudaMemcpyHostToDevice));
  }
  comm.reserve(std::max(oc::communicator::workspace_bytes(plan, me),
                        oc::communicator::staging_bytes(schedule, me)));
  cudaStream_t stream = nullptr;
  ORCH_CUDA_CHECK(cudaStreamCreate(&stream));

  int failures = 0;
  for (const bool nodewise : {false, true}) {
    ORCH_CUDA_CHECK(cudaMemset(d_dst.data(), 0, static_cast<std::size_t>(dst_bytes)));
    MPI_Barrier(MPI_COMM_WORLD);
    const auto t0 = std::chrono::steady_clock::now();
    if (nodewise) {
      comm.exchange(schedule, d_src.data(), d_dst.data(), stream);
    } else {
      comm.exchange(plan, d_src.data(), d_dst.data(), stream);
    }
    comm.synchronize(stream);
    const double ms =
        std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - t0).count();
    std::vector<std::byte> dst(static_cast<std::size_t>(dst_bytes));
    if (!dst.empty()) {
      ORCH_CUDA_CHECK(cudaMemcpy(dst.data(), d_dst.data(), dst.size(), cudaMemcpyDeviceToHost));
    }
    const bytes_t wrong = check(plan, me, dst);
    long long wrong_all = 0;
    const long long mine = wrong;
    MPI_Reduce(&mine, &wrong_all, 1, MPI_LONG_LONG, MPI_SUM, 0, MPI_COMM_WORLD);
    if (world_rank == 0) {
      std::printf("%s exchange: %d ranks (%d per node), %lld bytes in total, %.3f ms on rank 0, "
                  "%s\n",
                  nodewise ? "node-wise" : "flat", world, opt.ranks_per_node,
                  static_cast<long long>(plan.total_bytes()), ms,
                  wrong_all == 0 ? "OK" : "WRONG BYTES");
    }
    if (wrong != 0) {
      std::fprintf(stderr, "rank %d: %lld wrong bytes in the %s exchange\n", me,
                   static_cast<long long>(wrong), nodewise ? "node-wise" : "flat");
      ++failures;
    }
  }
  ORCH_CUDA_CHECK(cudaStreamDestroy(stream));
  return failures == 0 ? 0 : 1;
}

} // namespace

int main(int argc, char** argv) {
  MPI_Init(&argc, &argv);
  int rc = 1;
  try {
    rc = run(argc, argv);
  } catch (const std::exception& e) {
    std::fprintf(stderr, "orch_example_cuda_mpi: %s\n", e.what());
    MPI_Abort(MPI_COMM_WORLD, 1);
  }
  MPI_Finalize();
  return rc;
}
