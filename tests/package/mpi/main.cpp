// SPDX-License-Identifier: Apache-2.0
// Uses orch::mpi as an installed or embedded package: every rank sends one item to the next
// rank; exits non-zero unless every rank received what its predecessor sent.
#include <orch/exchange/layout.hpp>
#include <orch/exchange/plan.hpp>
#include <orch/mpi/communicator.hpp>

#include <mpi.h>

#include <cstddef>
#include <cstdio>
#include <vector>

int main(int argc, char** argv) {
  MPI_Init(&argc, &argv);
  int me = 0;
  int k = 1;
  MPI_Comm_rank(MPI_COMM_WORLD, &me);
  MPI_Comm_size(MPI_COMM_WORLD, &k);
  int ok = 1;
  {
    orch::mpi::communicator comm(MPI_COMM_WORLD);
    std::vector<orch::rank_t> from;
    std::vector<orch::rank_t> to;
    for (orch::rank_t r = 0; r < k; ++r) {
      from.push_back(r);
      to.push_back((r + 1) % k);
    }
    const std::vector<orch::bytes_t> bytes(static_cast<std::size_t>(k), 16);
    const auto plan = orch::make_plan(orch::layout::from_assignment(from, k),
                                      orch::layout::from_assignment(to, k), bytes);
    const std::vector<std::byte> src(16, static_cast<std::byte>(me));
    std::vector<std::byte> dst(16);
    comm.exchange(plan, src, dst);
    for (const std::byte b : dst) {
      ok = ok != 0 && b == static_cast<std::byte>((me + k - 1) % k) ? 1 : 0;
    }
  }
  int all = 0;
  MPI_Allreduce(&ok, &all, 1, MPI_INT, MPI_MIN, MPI_COMM_WORLD);
  if (me == 0) {
    std::printf("orch::mpi consumer: %d ranks, exchange %s\n", k, all != 0 ? "ok" : "WRONG");
  }
  MPI_Finalize();
  return all != 0 ? 0 : 1;
}
