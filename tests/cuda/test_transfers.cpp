// SPDX-License-Identifier: Apache-2.0
// The transfers of the NCCL communicator (make_p2p_ops) and of the loopback transport
// (make_routes), emulated on the CPU with the kernels' copy programs, byte for byte against the
// core's reference executor — flat and node-wise.
#include "cuda_scenarios.hpp"

#include <orch/cuda/copy_program.hpp>
#include <orch/cuda/transfers.hpp>
#include <orch/exchange.hpp>
#include <orch/plan.hpp>
#include <orch/schedule.hpp>

#include <doctest/doctest.h>

#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <cstring>
#include <map>
#include <tuple>
#include <vector>

using orch::bytes_t;
using orch::index_t;
using orch::rank_t;
namespace oc = orch::cuda;

namespace {

void emulate(const oc::copy_program& p, const std::byte* src, std::byte* dst) {
  std::vector<std::int64_t> words;
  const auto slots = oc::append_program(words, p);
  oc::run_copy_program(oc::program_at(words.data(), slots), src, dst);
}

// What every rank of the NCCL communicator does, all ranks in one process: pack (unless the
// identity), self copy, each recv matched with the peer's send, unpack (unless the identity).
// Checks that every send has exactly one matching receive of the same size.
orch::rank_buffers run_p2p(const orch::exchange_plan& plan, const orch::rank_buffers& src) {
  const auto k = static_cast<std::size_t>(plan.ranks());
  std::vector<orch::rank_view> views;
  orch::rank_buffers send(k);
  orch::rank_buffers recv(k);
  orch::rank_buffers dst(k);
  std::map<std::tuple<rank_t, rank_t>, std::tuple<bytes_t, bytes_t>> sends; // (s, d) → offset, n
  for (std::size_t r = 0; r < k; ++r) {
    views.push_back(plan.view(static_cast<rank_t>(r)));
    const auto& v = views.back();
    send[r] = src[r];
    if (!v.pack_is_identity) {
      std::fill(send[r].begin(), send[r].end(), std::byte{0x5A});
      emulate(oc::make_pack_program(v), src[r].data(), send[r].data());
    }
    recv[r].assign(static_cast<std::size_t>(v.destination_bytes), std::byte{0xA5});
    for (const auto& op : oc::make_p2p_ops(v)) {
      CHECK(op.bytes > 0);
      if (op.what == oc::p2p_op::kind::send) {
        CHECK(op.peer != v.rank);
        const bool fresh =
            sends.emplace(std::tuple{v.rank, op.peer}, std::tuple{op.send_offset, op.bytes}).second;
        CHECK(fresh);
      }
    }
  }
  for (std::size_t r = 0; r < k; ++r) {
    const auto& v = views[r];
    for (const auto& op : oc::make_p2p_ops(v)) {
      if (op.what == oc::p2p_op::kind::self_copy) {
        CHECK(op.peer == v.rank);
        std::memcpy(recv[r].data() + op.recv_offset, send[r].data() + op.send_offset,
                    static_cast<std::size_t>(op.bytes));
      } else if (op.what == oc::p2p_op::kind::recv) {
        const auto it = sends.find(std::tuple{op.peer, v.rank});
        REQUIRE(it != sends.end());
        CHECK(std::get<1>(it->second) == op.bytes);
        std::memcpy(recv[r].data() + op.recv_offset,
                    send[static_cast<std::size_t>(op.peer)].data() + std::get<0>(it->second),
                    static_cast<std::size_t>(op.bytes));
        sends.erase(it);
      }
    }
  }
  CHECK(sends.empty()); // no send without its receive: no hang
  for (std::size_t r = 0; r < k; ++r) {
    const auto& v = views[r];
    if (v.unpack_is_identity) {
      dst[r] = recv[r];
    } else {
      dst[r].assign(recv[r].size(), std::byte{0x3C});
      emulate(oc::make_unpack_program(v), recv[r].data(), dst[r].data());
    }
  }
  return dst;
}

// What the loopback transport does: pack, make_routes copies, unpack.
orch::rank_buffers run_routes(const orch::exchange_plan& plan, const orch::rank_buffers& src) {
  const auto k = static_cast<std::size_t>(plan.ranks());
  std::vector<orch::rank_view> views;
  for (std::size_t r = 0; r < k; ++r) {
    views.push_back(plan.view(static_cast<rank_t>(r)));
  }
  orch::rank_buffers send(k);
  orch::rank_buffers recv(k);
  orch::rank_buffers dst(k);
  for (std::size_t r = 0; r < k; ++r) {
    send[r].assign(src[r].size(), std::byte{0x5A});
    emulate(oc::make_pack_program(views[r]), src[r].data(), send[r].data());
    recv[r].assign(static_cast<std::size_t>(views[r].destination_bytes), std::byte{0xA5});
  }
  for (const auto& c : oc::make_routes(views)) {
    CHECK(c.bytes > 0);
    std::memcpy(recv[static_cast<std::size_t>(c.destination)].data() + c.destination_offset,
                send[static_cast<std::size_t>(c.source)].data() + c.source_offset,
                static_cast<std::size_t>(c.bytes));
  }
  for (std::size_t r = 0; r < k; ++r) {
    dst[r].assign(recv[r].size(), std::byte{0x3C});
    emulate(oc::make_unpack_program(views[r]), recv[r].data(), dst[r].data());
  }
  return dst;
}

} // namespace

TEST_CASE("cuda transfers: p2p ops and loopback routes deliver like the reference executor") {
  std::vector<int> kinds(orch::test::cuda_shapes, 0);
  for (std::uint64_t seed = 1; seed <= 240; ++seed) {
    const auto s = orch::test::make_cuda_scenario(seed, 40'000 + static_cast<bytes_t>(seed));
    CAPTURE(seed);
    CAPTURE(s.topo.ranks());
    CAPTURE(s.from.items());
    const auto plan = orch::make_plan(s.from, s.to, s.bytes);
    const auto src = orch::test::make_source(plan);
    const auto want = orch::execute(plan, src);
    REQUIRE(orch::test::wrong_in_destination(plan, want) == 0);
    CHECK(run_p2p(plan, src) == want);
    CHECK(run_routes(plan, src) == want);

    // Node-wise: both stages through the staging buffers.
    const auto sched = orch::make_schedule(plan, s.topo);
    const auto staged_p2p = run_p2p(sched.intra_node, run_p2p(sched.inter_node, src));
    CHECK(staged_p2p == want);
    const auto staged_routes = run_routes(sched.intra_node, run_routes(sched.inter_node, src));
    CHECK(staged_routes == want);
    ++kinds[static_cast<std::size_t>(s.kind)];
  }
  for (const int k : kinds) {
    CHECK(k >= 25); // every shape is exercised
  }
}

TEST_CASE("cuda transfers: zero-byte peers are skipped on both sides") {
  // Rank 0 sends one empty item to rank 1 and 5 bytes to itself.
  const auto from = orch::layout::from_assignment(std::vector<rank_t>{0, 0}, 2);
  const auto to = orch::layout::from_assignment(std::vector<rank_t>{1, 0}, 2);
  const auto plan = orch::make_plan(from, to, std::vector<bytes_t>{0, 5});
  const auto v0 = plan.view(0);
  const auto v1 = plan.view(1);
  REQUIRE(v0.send_peers.size() == 2); // the empty chunk is still a peer in the plan
  REQUIRE(v0.send_peers[0] == 0);
  const auto ops0 = oc::make_p2p_ops(v0);
  REQUIRE(ops0.size() == 1);
  CHECK(ops0[0].what == oc::p2p_op::kind::self_copy);
  CHECK(ops0[0].bytes == 5);
  CHECK(oc::make_p2p_ops(v1).empty());
  const std::vector<orch::rank_view> views{v0, v1};
  const auto routes = oc::make_routes(views);
  REQUIRE(routes.size() == 1);
  CHECK(routes[0] == oc::route{0, v0.send_peer_displs[0], 0, 0, 5});
}

TEST_CASE("cuda transfers: views that disagree are rejected before any copy") {
  const auto from = orch::layout::from_assignment(std::vector<rank_t>{0, 1}, 2);
  const auto to = orch::layout::from_assignment(std::vector<rank_t>{1, 0}, 2);
  const auto a = orch::make_plan(from, to, std::vector<bytes_t>{3, 5});
  const auto b = orch::make_plan(from, to, std::vector<bytes_t>{4, 5});
  const std::vector<orch::rank_view> mixed{a.view(0), b.view(1)};
  CHECK_THROWS_WITH_AS(static_cast<void>(oc::make_routes(mixed)),
                       doctest::Contains("rank 0 sends 1 items of 3 bytes to rank 1"),
                       orch::invalid_argument);
  const std::vector<orch::rank_view> swapped{a.view(1), a.view(0)};
  CHECK_THROWS_WITH_AS(static_cast<void>(oc::make_routes(swapped)),
                       doctest::Contains("view 0 belongs to rank 1"), orch::invalid_argument);
  const auto same = orch::make_plan(from, from, std::vector<bytes_t>{3, 5});
  const std::vector<orch::rank_view> half{a.view(0), same.view(1)};
  CHECK_THROWS_AS(static_cast<void>(oc::make_routes(half)), orch::invalid_argument);
}
