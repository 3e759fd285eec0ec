// SPDX-License-Identifier: Apache-2.0
// Exchange programs of every rank run together in one process over plain buffers — pack, self
// copy, each receive matched with its peer's send, unpack, in the workspace layout a backend
// uses — byte for byte against the reference executor, flat and node-wise.
#include "transport_scenarios.hpp"

#include <orch/exchange/execute.hpp>
#include <orch/exchange/plan.hpp>
#include <orch/exchange/schedule.hpp>
#include <orch/transport/program.hpp>

#include <doctest/doctest.h>

#include <cstddef>
#include <cstring>
#include <map>
#include <span>
#include <utility>
#include <vector>

using orch::bytes_t;
using orch::rank_t;
namespace ot = orch::transport;

namespace {

using bytes = std::vector<std::byte>;

// One rank's buffers while a stage runs: where it sends from and receives into.
struct rank_state {
  std::span<std::byte> send;
  std::span<std::byte> recv;
};

// Runs one flat stage of every rank: programs[r] from src[r] into dst[r], scratch in ws[r].
// Every message is matched with exactly one message of the peer, of the same size.
void run_stage(const std::vector<ot::flat_program>& programs, std::vector<std::span<std::byte>> src,
               std::vector<std::span<std::byte>> dst, std::vector<bytes>& ws) {
  const std::size_t k = programs.size();
  std::vector<rank_state> state(k);
  std::map<std::pair<rank_t, rank_t>, ot::chunk> posted; // (source, destination) → send
  for (std::size_t r = 0; r < k; ++r) {
    const auto& p = programs[r];
    REQUIRE(src[r].size() == static_cast<std::size_t>(p.source_bytes));
    REQUIRE(dst[r].size() == static_cast<std::size_t>(p.destination_bytes));
    REQUIRE(ws[r].size() >= static_cast<std::size_t>(p.workspace.end));
    auto& s = state[r];
    if (p.pack.identity) {
      CHECK(p.workspace.send_bytes == 0);
      s.send = src[r];
    } else {
      s.send = std::span(ws[r]).subspan(static_cast<std::size_t>(p.workspace.send_offset),
                                        static_cast<std::size_t>(p.workspace.send_bytes));
      ot::run_copies(p.pack, src[r], s.send);
    }
    if (p.unpack.identity) {
      CHECK(p.workspace.recv_bytes == 0);
      s.recv = dst[r];
    } else {
      s.recv = std::span(ws[r]).subspan(static_cast<std::size_t>(p.workspace.recv_offset),
                                        static_cast<std::size_t>(p.workspace.recv_bytes));
    }
    REQUIRE(s.send.size() == static_cast<std::size_t>(p.transfers.send_bytes));
    REQUIRE(s.recv.size() == static_cast<std::size_t>(p.transfers.recv_bytes));
    for (const auto& c : p.transfers.sends) {
      CHECK(c.bytes > 0);
      CHECK(c.peer != p.rank);
      CHECK(posted.emplace(std::pair{p.rank, c.peer}, c).second);
    }
  }
  for (std::size_t r = 0; r < k; ++r) {
    const auto& t = programs[r].transfers;
    auto& s = state[r];
    if (t.self.bytes > 0) {
      std::memcpy(s.recv.data() + t.self.recv_offset, s.send.data() + t.self.send_offset,
                  static_cast<std::size_t>(t.self.bytes));
    }
    for (const auto& c : t.recvs) {
      CHECK(c.bytes > 0);
      const auto it = posted.find(std::pair{c.peer, t.rank});
      REQUIRE(it != posted.end());
      REQUIRE(it->second.bytes == c.bytes);
      std::memcpy(s.recv.data() + c.offset,
                  state[static_cast<std::size_t>(c.peer)].send.data() + it->second.offset,
                  static_cast<std::size_t>(c.bytes));
      posted.erase(it);
    }
  }
  CHECK(posted.empty()); // no send without its receive: no backend would hang
  for (std::size_t r = 0; r < k; ++r) {
    if (!programs[r].unpack.identity) {
      ot::run_copies(programs[r].unpack, state[r].recv, dst[r]);
    }
  }
}

orch::rank_buffers run_flat(const orch::exchange_plan& plan, const orch::rank_buffers& src) {
  const auto k = static_cast<std::size_t>(plan.ranks());
  std::vector<ot::flat_program> programs;
  orch::rank_buffers in = src; // pack reads, never writes, but spans are mutable
  orch::rank_buffers out(k);
  std::vector<bytes> ws(k);
  std::vector<std::span<std::byte>> s(k);
  std::vector<std::span<std::byte>> d(k);
  for (std::size_t r = 0; r < k; ++r) {
    programs.push_back(ot::make_flat_program(plan, static_cast<rank_t>(r)));
    CHECK(programs.back().plan_hash == plan.hash());
    out[r].assign(static_cast<std::size_t>(programs.back().destination_bytes), std::byte{0x3C});
    ws[r].assign(static_cast<std::size_t>(programs.back().workspace.end), std::byte{0xA5});
    s[r] = in[r];
    d[r] = out[r];
  }
  run_stage(programs, s, d, ws);
  return out;
}

orch::rank_buffers run_nodewise(const orch::node_schedule& sched, const orch::rank_buffers& src) {
  const auto k = static_cast<std::size_t>(sched.inter_node.ranks());
  std::vector<ot::flat_program> first;
  std::vector<ot::flat_program> second;
  orch::rank_buffers in = src;
  orch::rank_buffers out(k);
  std::vector<bytes> ws(k);
  std::vector<std::span<std::byte>> s(k);
  std::vector<std::span<std::byte>> staging(k);
  std::vector<std::span<std::byte>> d(k);
  for (std::size_t r = 0; r < k; ++r) {
    const auto p = ot::make_nodewise_program(sched, static_cast<rank_t>(r));
    CHECK(p.workspace.staging_bytes == sched.staging_bytes[r]);
    CHECK(p.intra_node.pack.identity); // stage 2 sends straight from the staging buffer
    CHECK(p.plan_hashes()[0] == sched.inter_node.hash());
    CHECK(p.plan_hashes()[1] == sched.intra_node.hash());
    ws[r].assign(static_cast<std::size_t>(p.workspace.end), std::byte{0xA5});
    out[r].assign(static_cast<std::size_t>(p.intra_node.destination_bytes), std::byte{0x3C});
    s[r] = in[r];
    staging[r] = std::span(ws[r]).subspan(static_cast<std::size_t>(p.workspace.staging_offset),
                                          static_cast<std::size_t>(p.workspace.staging_bytes));
    d[r] = out[r];
    // The stages' regions never overlap the staging buffer.
    for (const auto& w : {p.workspace.inter_node, p.workspace.intra_node}) {
      CHECK((w.send_bytes == 0 || w.send_offset >= p.workspace.staging_bytes));
      CHECK((w.recv_bytes == 0 || w.recv_offset >= p.workspace.staging_bytes));
      CHECK((w.send_bytes == 0 || w.recv_bytes == 0 ||
             w.send_offset + w.send_bytes <= w.recv_offset));
    }
    first.push_back(p.inter_node);
    second.push_back(p.intra_node);
  }
  run_stage(first, s, staging, ws);
  run_stage(second, staging, d, ws);
  return out;
}

} // namespace

TEST_CASE("transport programs: every rank's program delivers like the reference executor") {
  std::vector<int> kinds(orch::test::transport_shapes, 0);
  int scenarios = 0;
  for (const rank_t ranks : {1, 2, 3, 4, 5, 8, 16}) {
    for (const rank_t node_size : {1, 2, 4}) {
      for (std::uint64_t seed = 1; seed <= 24; ++seed) {
        const auto s = orch::test::make_transport_scenario(
            seed, ranks, node_size, (1 << 20) + 3 + static_cast<bytes_t>(seed));
        CAPTURE(seed);
        CAPTURE(ranks);
        CAPTURE(node_size);
        CAPTURE(static_cast<int>(s.kind));
        const auto plan = orch::make_plan(s.from, s.to, s.bytes);
        const auto src = orch::test::make_source(plan);
        const auto want = orch::execute(plan, src);
        REQUIRE(orch::test::wrong_in_destination(plan, want) == 0);
        CHECK(run_flat(plan, src) == want);
        const auto sched = orch::make_schedule(plan, s.topo);
        CHECK(run_nodewise(sched, src) == want);
        ++kinds[static_cast<std::size_t>(s.kind)];
        ++scenarios;
      }
    }
  }
  CHECK(scenarios == 7 * 3 * 24);
  for (const int k : kinds) {
    CHECK(k >= 60); // every shape is exercised
  }
}

TEST_CASE("transport programs: identity plans copy nothing and post no message") {
  const auto from = orch::layout::from_assignment(std::vector<rank_t>{0, 1, 1, 0}, 2);
  const auto plan = orch::make_plan(from, from, std::vector<bytes_t>{3, 0, 5, 7});
  for (rank_t r = 0; r < 2; ++r) {
    const auto p = ot::make_flat_program(plan, r);
    CHECK(p.pack.identity);
    CHECK(p.unpack.identity);
    CHECK(p.workspace.end == 0);
    CHECK(p.messages() == 0);
    CHECK(p.transfers.self.bytes == plan.source_bytes(r));
  }
}

TEST_CASE("transport programs: node-wise stage 1 talks to one rank per remote node") {
  // 8 ranks on 2 nodes of 4; every rank sends one item to every rank.
  std::vector<rank_t> f;
  std::vector<rank_t> t;
  for (rank_t s = 0; s < 8; ++s) {
    for (rank_t d = 0; d < 8; ++d) {
      f.push_back(s);
      t.push_back(d);
    }
  }
  const auto plan =
      orch::make_plan(orch::layout::from_assignment(f, 8), orch::layout::from_assignment(t, 8),
                      std::vector<bytes_t>(64, 10));
  const auto sched = orch::make_schedule(plan, orch::topology::uniform(8, 4));
  for (rank_t r = 0; r < 8; ++r) {
    CAPTURE(r);
    const auto flat = ot::make_flat_program(plan, r);
    const auto nw = ot::make_nodewise_program(sched, r);
    CHECK(flat.transfers.sends.size() == 7);
    CHECK(nw.inter_node.transfers.sends.size() == 1);
    CHECK(nw.intra_node.transfers.sends.size() == 3);
    CHECK(nw.messages() == 8);
    CHECK(flat.messages() == 14);
  }
  CHECK_THROWS_AS(static_cast<void>(ot::make_nodewise_program(sched, 8)), orch::invalid_argument);
  CHECK_THROWS_AS(static_cast<void>(ot::make_flat_program(plan, -1)), orch::invalid_argument);
}
