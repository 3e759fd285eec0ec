// SPDX-License-Identifier: Apache-2.0
// Transfer lists, all-to-all(v) arrays and all-rank routes of the backend-neutral exchange core.
#include "transport_scenarios.hpp"

#include <orch/exchange/execute.hpp>
#include <orch/exchange/plan.hpp>
#include <orch/transport/routes.hpp>
#include <orch/transport/transfers.hpp>

#include <doctest/doctest.h>

#include <cstddef>
#include <cstring>
#include <vector>

using orch::bytes_t;
using orch::rank_t;
namespace ot = orch::transport;

TEST_CASE("transport transfers: zero-byte peers are skipped on both sides") {
  // Rank 0 sends one empty item to rank 1 and 5 bytes to itself.
  const auto from = orch::layout::from_assignment(std::vector<rank_t>{0, 0}, 2);
  const auto to = orch::layout::from_assignment(std::vector<rank_t>{1, 0}, 2);
  const auto plan = orch::make_plan(from, to, std::vector<bytes_t>{0, 5});
  const auto v0 = plan.view(0);
  const auto v1 = plan.view(1);
  REQUIRE(v0.send_peers.size() == 2); // the empty chunk is still a peer in the plan
  const auto t0 = ot::make_transfers(v0);
  CHECK(t0.rank == 0);
  CHECK(t0.self == ot::self_copy{v0.send_peer_displs[0], 0, 5});
  CHECK(t0.sends.empty());
  CHECK(t0.recvs.empty());
  CHECK(t0.messages() == 0);
  const auto t1 = ot::make_transfers(v1);
  CHECK(t1.self.bytes == 0);
  CHECK(t1.messages() == 0);
  const std::vector<orch::rank_view> views{v0, v1};
  const auto routes = ot::make_routes(views);
  REQUIRE(routes.size() == 1);
  CHECK(routes[0] == ot::route{0, v0.send_peer_displs[0], 0, 0, 5});
}

TEST_CASE("transport transfers: sends and receives mirror each other, peers ascending") {
  for (std::uint64_t seed = 1; seed <= 64; ++seed) {
    const auto s = orch::test::make_transport_scenario(seed, 6, 2, 5000);
    CAPTURE(seed);
    const auto plan = orch::make_plan(s.from, s.to, s.bytes);
    std::vector<ot::transfer_list> lists;
    for (rank_t r = 0; r < plan.ranks(); ++r) {
      lists.push_back(ot::make_transfers(plan.view(r)));
    }
    bytes_t moved = 0;
    for (rank_t r = 0; r < plan.ranks(); ++r) {
      const auto& t = lists[static_cast<std::size_t>(r)];
      CHECK(t.self.bytes == plan.self_bytes(r));
      CHECK(t.send_bytes == plan.source_bytes(r));
      CHECK(t.recv_bytes == plan.destination_bytes(r));
      for (std::size_t i = 0; i < t.sends.size(); ++i) {
        const auto& c = t.sends[i];
        CHECK(c.bytes == plan.pair(r, c.peer).bytes);
        CHECK((i == 0 || t.sends[i - 1].peer < c.peer));
        // The peer receives exactly this chunk.
        const auto& u = lists[static_cast<std::size_t>(c.peer)];
        int matches = 0;
        for (const auto& back : u.recvs) {
          matches += back.peer == r && back.bytes == c.bytes ? 1 : 0;
        }
        CHECK(matches == 1);
        moved += c.bytes;
      }
      for (std::size_t i = 1; i < t.recvs.size(); ++i) {
        CHECK(t.recvs[i - 1].peer < t.recvs[i].peer);
      }
      CHECK(t.remote_send_bytes() + t.self.bytes == t.send_bytes);
    }
    bytes_t remote = 0;
    for (const auto& p : plan.pairs()) {
      remote += p.source != p.destination ? p.bytes : 0;
    }
    CHECK(moved == remote);

    // The dense arrays carry the same chunks; self only when asked.
    for (rank_t r = 0; r < plan.ranks(); ++r) {
      const auto& t = lists[static_cast<std::size_t>(r)];
      for (const bool self : {false, true}) {
        const auto a = ot::make_alltoallv_arrays(t, plan.ranks(), self);
        bytes_t sent = 0;
        bytes_t received = 0;
        for (rank_t q = 0; q < plan.ranks(); ++q) {
          const auto i = static_cast<std::size_t>(q);
          if (q == r) {
            CHECK(a.send_counts[i] == (self ? t.self.bytes : 0));
            CHECK(a.recv_counts[i] == (self ? t.self.bytes : 0));
          } else {
            CHECK(a.send_counts[i] == plan.pair(r, q).bytes);
            CHECK(a.recv_counts[i] == plan.pair(q, r).bytes);
          }
          sent += a.send_counts[i];
          received += a.recv_counts[i];
        }
        CHECK(sent == t.remote_send_bytes() + (self ? t.self.bytes : 0));
        CHECK(received <= t.recv_bytes);
      }
    }
    CHECK_THROWS_AS(static_cast<void>(ot::make_alltoallv_arrays(lists[0], 0, false)),
                    orch::invalid_argument);
  }
}

TEST_CASE("transport routes: deliver like the reference executor; disagreeing views rejected") {
  for (std::uint64_t seed = 1; seed <= 48; ++seed) {
    const auto s = orch::test::make_transport_scenario(seed, 5, 2, 4000);
    CAPTURE(seed);
    const auto plan = orch::make_plan(s.from, s.to, s.bytes);
    std::vector<orch::rank_view> views;
    orch::rank_buffers send(5);
    const auto src = orch::test::make_source(plan);
    for (rank_t r = 0; r < 5; ++r) {
      views.push_back(plan.view(r));
      send[static_cast<std::size_t>(r)].resize(src[static_cast<std::size_t>(r)].size());
      orch::pack(views.back(), src[static_cast<std::size_t>(r)], send[static_cast<std::size_t>(r)]);
    }
    const auto want = orch::all_to_all(views, send);
    orch::rank_buffers recv(5);
    for (rank_t r = 0; r < 5; ++r) {
      recv[static_cast<std::size_t>(r)].assign(want[static_cast<std::size_t>(r)].size(),
                                               std::byte{0x77});
    }
    for (const auto& c : ot::make_routes(views)) {
      CHECK(c.bytes > 0);
      std::memcpy(recv[static_cast<std::size_t>(c.destination)].data() + c.destination_offset,
                  send[static_cast<std::size_t>(c.source)].data() + c.source_offset,
                  static_cast<std::size_t>(c.bytes));
    }
    CHECK(recv == want);
  }
  const auto from = orch::layout::from_assignment(std::vector<rank_t>{0, 1}, 2);
  const auto to = orch::layout::from_assignment(std::vector<rank_t>{1, 0}, 2);
  const auto a = orch::make_plan(from, to, std::vector<bytes_t>{3, 5});
  const auto b = orch::make_plan(from, to, std::vector<bytes_t>{4, 5});
  const std::vector<orch::rank_view> mixed{a.view(0), b.view(1)};
  CHECK_THROWS_WITH_AS(static_cast<void>(ot::make_routes(mixed)),
                       doctest::Contains("rank 0 sends 1 items of 3 bytes to rank 1"),
                       orch::invalid_argument);
  const std::vector<orch::rank_view> swapped{a.view(1), a.view(0)};
  CHECK_THROWS_WITH_AS(static_cast<void>(ot::make_routes(swapped)),
                       doctest::Contains("view 0 belongs to rank 1"), orch::invalid_argument);
}

TEST_CASE("transport transfers: a view with a one-sided self chunk is rejected") {
  const auto from = orch::layout::from_assignment(std::vector<rank_t>{0}, 1);
  const auto plan = orch::make_plan(from, from, std::vector<bytes_t>{4});
  auto v = plan.view(0);
  v.recv_peer_bytes[0] = 3;
  CHECK_THROWS_WITH_AS(static_cast<void>(ot::make_transfers(v)),
                       doctest::Contains("sends 4 bytes to itself but receives 3"),
                       orch::invalid_argument);
  v.recv_peers.clear();
  CHECK_THROWS_AS(static_cast<void>(ot::make_transfers(v)), orch::invalid_argument);
}
