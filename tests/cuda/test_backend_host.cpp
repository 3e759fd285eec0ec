// SPDX-License-Identifier: Apache-2.0
// The host path of the NCCL backend and of the loopback transport on the CPU: every rank runs
// the exchange core's program (transport::make_flat_program / make_nodewise_program) the way
// communicator::run_flat does — one workspace buffer per rank addressed by the program's
// offsets (staging first in a node-wise exchange), pack and unpack through this module's copy
// programs (the tile decoding the kernel runs), the self copy, every send matched to the one
// receive of its pair — and the loopback's routes; byte for byte against orch::execute.
#include "cuda_scenarios.hpp"

#include <orch/cuda/copy_program.hpp>
#include <orch/exchange/execute.hpp>
#include <orch/exchange/plan.hpp>
#include <orch/exchange/schedule.hpp>
#include <orch/transport/program.hpp>
#include <orch/transport/routes.hpp>

#include <doctest/doctest.h>

#include <cstddef>
#include <cstdint>
#include <cstring>
#include <map>
#include <tuple>
#include <vector>

using orch::bytes_t;
using orch::rank_t;
namespace oc = orch::cuda;
namespace ot = orch::transport;

namespace {

void emulate(const ot::copy_list& list, bytes_t tile, const std::byte* src, std::byte* dst) {
  std::vector<std::int64_t> words;
  const auto slots = oc::append_program(words, oc::make_copy_program(list, tile));
  oc::run_copy_program(oc::program_at(words.data(), slots), src, dst);
}

// Every rank's buffers: source, destination and the workspace (filled with a marker so that a
// region read before it is written shows up as wrong bytes).
struct rank_memory {
  std::vector<std::byte> src;
  std::vector<std::byte> dst;
  std::vector<std::byte> workspace;
};

// One flat stage of every rank, as communicator::run_flat runs it. `src_in_workspace` /
// `dst_in_workspace`: the stage reads its source from / writes its destination to the rank's
// staging buffer (workspace offset 0) instead of src / dst.
void run_stage(const std::vector<ot::flat_program>& programs, std::vector<rank_memory>& mem,
               bool src_in_workspace, bool dst_in_workspace, bytes_t tile) {
  const auto k = programs.size();
  std::vector<const std::byte*> send(k);
  std::vector<std::byte*> recv(k);
  std::map<std::tuple<rank_t, rank_t>, std::tuple<const std::byte*, bytes_t>> posted;
  for (std::size_t r = 0; r < k; ++r) {
    const auto& p = programs[r];
    auto& m = mem[r];
    const std::byte* source = src_in_workspace ? m.workspace.data() : m.src.data();
    std::byte* destination = dst_in_workspace ? m.workspace.data() : m.dst.data();
    send[r] = source;
    if (!p.pack.identity) {
      emulate(p.pack, tile, source, m.workspace.data() + p.workspace.send_offset);
      send[r] = m.workspace.data() + p.workspace.send_offset;
    }
    recv[r] = p.unpack.identity ? destination : m.workspace.data() + p.workspace.recv_offset;
    for (const auto& c : p.transfers.sends) {
      const bool fresh =
          posted.emplace(std::tuple{p.rank, c.peer}, std::tuple{send[r] + c.offset, c.bytes})
              .second;
      CHECK(fresh); // one send per pair
    }
  }
  for (std::size_t r = 0; r < k; ++r) {
    const auto& t = programs[r].transfers;
    if (t.self.bytes > 0) {
      std::memcpy(recv[r] + t.self.recv_offset, send[r] + t.self.send_offset,
                  static_cast<std::size_t>(t.self.bytes));
    }
    for (const auto& c : t.recvs) {
      const auto it = posted.find(std::tuple{c.peer, t.rank});
      REQUIRE(it != posted.end());
      CHECK(std::get<1>(it->second) == c.bytes);
      std::memcpy(recv[r] + c.offset, std::get<0>(it->second), static_cast<std::size_t>(c.bytes));
      posted.erase(it);
    }
  }
  CHECK(posted.empty()); // no send without its receive: no hang
  for (std::size_t r = 0; r < k; ++r) {
    const auto& p = programs[r];
    if (!p.unpack.identity) {
      auto& m = mem[r];
      std::byte* destination = dst_in_workspace ? m.workspace.data() : m.dst.data();
      emulate(p.unpack, tile, recv[r], destination);
    }
  }
}

std::vector<rank_memory> make_memory(const orch::exchange_plan& plan, const orch::rank_buffers& src,
                                     const std::vector<bytes_t>& workspace_bytes) {
  std::vector<rank_memory> mem(src.size());
  for (std::size_t r = 0; r < src.size(); ++r) {
    mem[r].src = src[r];
    mem[r].dst.assign(static_cast<std::size_t>(plan.destination_bytes(static_cast<rank_t>(r))),
                      std::byte{0x3C});
    mem[r].workspace.assign(static_cast<std::size_t>(workspace_bytes[r]), std::byte{0xA5});
  }
  return mem;
}

orch::rank_buffers destinations(const std::vector<rank_memory>& mem) {
  orch::rank_buffers out;
  for (const auto& m : mem) {
    out.push_back(m.dst);
  }
  return out;
}

orch::rank_buffers run_flat(const orch::exchange_plan& plan, const orch::rank_buffers& src,
                            bytes_t tile) {
  std::vector<ot::flat_program> programs;
  std::vector<bytes_t> ws;
  for (rank_t r = 0; r < plan.ranks(); ++r) {
    programs.push_back(ot::make_flat_program(plan, r));
    ws.push_back(programs.back().workspace.end);
  }
  auto mem = make_memory(plan, src, ws);
  run_stage(programs, mem, false, false, tile);
  return destinations(mem);
}

orch::rank_buffers run_nodewise(const orch::exchange_plan& plan, const orch::node_schedule& sched,
                                const orch::rank_buffers& src, bytes_t tile) {
  std::vector<ot::flat_program> inter;
  std::vector<ot::flat_program> intra;
  std::vector<bytes_t> ws;
  for (rank_t r = 0; r < plan.ranks(); ++r) {
    auto p = ot::make_nodewise_program(sched, r);
    CHECK(p.intra_node.pack.identity); // stage 2 sends straight from the staging buffer
    ws.push_back(p.workspace.end);
    inter.push_back(std::move(p.inter_node));
    intra.push_back(std::move(p.intra_node));
  }
  auto mem = make_memory(plan, src, ws);
  run_stage(inter, mem, false, true, tile);
  run_stage(intra, mem, true, false, tile);
  return destinations(mem);
}

// What the loopback does: pack, the routes between the ranks' send and receive buffers, unpack.
orch::rank_buffers run_routes(const orch::exchange_plan& plan, const orch::rank_buffers& src) {
  const auto k = static_cast<std::size_t>(plan.ranks());
  std::vector<orch::rank_view> views;
  orch::rank_buffers send(k);
  orch::rank_buffers recv(k);
  orch::rank_buffers dst(k);
  for (std::size_t r = 0; r < k; ++r) {
    views.push_back(plan.view(static_cast<rank_t>(r)));
    const auto p = ot::make_flat_program(views[r], plan.ranks(), plan.hash());
    send[r].assign(src[r].size(), std::byte{0x5A});
    emulate(p.pack, oc::default_tile_bytes, src[r].data(), send[r].data());
    recv[r].assign(static_cast<std::size_t>(views[r].destination_bytes), std::byte{0xA5});
    dst[r].assign(recv[r].size(), std::byte{0x3C});
  }
  for (const auto& c : ot::make_routes(views)) {
    std::memcpy(recv[static_cast<std::size_t>(c.destination)].data() + c.destination_offset,
                send[static_cast<std::size_t>(c.source)].data() + c.source_offset,
                static_cast<std::size_t>(c.bytes));
  }
  for (std::size_t r = 0; r < k; ++r) {
    const auto p = ot::make_flat_program(views[r], plan.ranks(), plan.hash());
    emulate(p.unpack, oc::default_tile_bytes, recv[r].data(), dst[r].data());
  }
  return dst;
}

} // namespace

TEST_CASE("cuda backend host path: flat, node-wise and loopback equal the reference executor") {
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
    const bytes_t tile = seed % 3 == 0 ? 16 : oc::default_tile_bytes;
    CHECK(run_flat(plan, src, tile) == want);
    CHECK(run_nodewise(plan, orch::make_schedule(plan, s.topo), src, tile) == want);
    CHECK(run_routes(plan, src) == want);
    ++kinds[static_cast<std::size_t>(s.kind)];
  }
  for (const int k : kinds) {
    CHECK(k >= 25); // every shape is exercised
  }
}
