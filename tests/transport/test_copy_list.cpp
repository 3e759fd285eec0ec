// SPDX-License-Identifier: Apache-2.0
// Copy lists (merged runs, identity detection, checks) and workspace layouts.
#include "transport_scenarios.hpp"

#include <orch/exchange/execute.hpp>
#include <orch/exchange/plan.hpp>
#include <orch/transport/copy_list.hpp>
#include <orch/transport/workspace.hpp>

#include <doctest/doctest.h>

#include <cstddef>
#include <span>
#include <vector>

using orch::bytes_t;
using orch::rank_t;
namespace ot = orch::transport;

TEST_CASE("copy lists: contiguous runs merge, zero-byte entries drop, identity is detected") {
  const std::vector<bytes_t> src{0, 4, 4, 10, 20};
  const std::vector<bytes_t> dst{30, 34, 34, 0, 5};
  const std::vector<bytes_t> size{4, 0, 6, 5, 5};
  const auto c = ot::make_copy_list(src, dst, size, 40, 40);
  CHECK_FALSE(c.identity);
  CHECK(c.entries() == 3); // [0,10) → 30 merged; 10 → 0; 20 → 5 (source not contiguous)
  CHECK(c.src_offsets == std::vector<bytes_t>{0, 10, 20});
  CHECK(c.dst_offsets == std::vector<bytes_t>{30, 0, 5});
  CHECK(c.sizes == std::vector<bytes_t>{10, 5, 5});
  CHECK(c.bytes() == 20);

  // Identity: every byte keeps its offset; merged into one copy.
  const std::vector<bytes_t> same{0, 3, 3, 9};
  const std::vector<bytes_t> sizes{3, 0, 6, 1};
  const auto id = ot::make_copy_list(same, same, sizes, 10, 10);
  CHECK(id.identity);
  CHECK(id.entries() == 1);
  // A zero-byte entry at a stray offset does not break the identity.
  const auto stray = ot::make_copy_list(std::vector<bytes_t>{0, 7}, std::vector<bytes_t>{0, 2},
                                        std::vector<bytes_t>{10, 0}, 10, 10);
  CHECK(stray.identity);

  std::vector<std::byte> a(10);
  for (std::size_t i = 0; i < a.size(); ++i) {
    a[i] = static_cast<std::byte>(i + 1);
  }
  std::vector<std::byte> b(10, std::byte{0});
  ot::run_copies(id, a, b); // distinct buffers: the identity still copies
  CHECK(a == b);
  ot::run_copies(id, a, a); // in place: nothing to do
  CHECK_THROWS_AS(ot::run_copies(c, std::vector<std::byte>(40), std::span<std::byte>(b)),
                  orch::invalid_argument);
  std::vector<std::byte> big(40);
  CHECK_THROWS_WITH_AS(ot::run_copies(c, big, big), doctest::Contains("in place"),
                       orch::invalid_argument);
}

TEST_CASE("copy lists: malformed input is rejected naming the entry") {
  const std::vector<bytes_t> one{0};
  CHECK_THROWS_AS(static_cast<void>(ot::make_copy_list(one, std::vector<bytes_t>{}, one, 1, 1)),
                  orch::invalid_argument);
  CHECK_THROWS_WITH_AS(
      static_cast<void>(ot::make_copy_list(std::vector<bytes_t>{0, 5}, std::vector<bytes_t>{0, 5},
                                           std::vector<bytes_t>{5, 6}, 10, 12)),
      doctest::Contains("entry 1 copies 6 bytes"), orch::invalid_argument);
  CHECK_THROWS_AS(static_cast<void>(ot::make_copy_list(one, one, std::vector<bytes_t>{-1}, 1, 1)),
                  orch::invalid_argument);
  CHECK_THROWS_AS(static_cast<void>(ot::make_copy_list(one, one, one, -1, 1)),
                  orch::invalid_argument);
}

TEST_CASE("copy lists: pack and unpack lists do what orch::pack and orch::unpack do") {
  int identities = 0;
  for (std::uint64_t seed = 1; seed <= 96; ++seed) {
    const auto s = orch::test::make_transport_scenario(seed, 4, 2, 70'000);
    CAPTURE(seed);
    const auto plan = orch::make_plan(s.from, s.to, s.bytes);
    const auto src = orch::test::make_source(plan);
    for (rank_t r = 0; r < plan.ranks(); ++r) {
      CAPTURE(r);
      const auto v = plan.view(r);
      const auto& in = src[static_cast<std::size_t>(r)];
      const auto pl = ot::make_pack_list(v);
      CHECK(pl.entries() <= static_cast<orch::index_t>(v.send_items.size()));
      CHECK((!v.pack_is_identity || pl.identity)); // at least as strong as the view's flag
      std::vector<std::byte> want(in.size(), std::byte{0x11});
      orch::pack(v, in, want);
      std::vector<std::byte> got(in.size(), std::byte{0x22});
      ot::run_copies(pl, in, got);
      CHECK(got == want);
      if (pl.identity) {
        CHECK(want == in); // the skipped copy would have changed nothing
        ++identities;
      }
      const auto ul = ot::make_unpack_list(v);
      CHECK((!v.unpack_is_identity || ul.identity));
      std::vector<std::byte> recv(static_cast<std::size_t>(v.destination_bytes));
      for (std::size_t i = 0; i < recv.size(); ++i) {
        recv[i] = static_cast<std::byte>(orch::test::mix64(seed * 131 + i) & 0xFF);
      }
      std::vector<std::byte> d1(recv.size(), std::byte{0x33});
      orch::unpack(v, recv, d1);
      std::vector<std::byte> d2(recv.size(), std::byte{0x44});
      ot::run_copies(ul, recv, d2);
      CHECK(d1 == d2);
      if (ul.identity) {
        CHECK(d1 == recv);
      }
    }
  }
  CHECK(identities > 0);
}

TEST_CASE("workspaces: regions only where copies are needed, aligned, staging first") {
  const auto id = ot::make_copy_list(std::vector<bytes_t>{0}, std::vector<bytes_t>{0},
                                     std::vector<bytes_t>{100}, 100, 100);
  const auto moved = ot::make_copy_list(std::vector<bytes_t>{0, 50}, std::vector<bytes_t>{50, 0},
                                        std::vector<bytes_t>{50, 50}, 100, 100);
  const auto none = ot::make_flat_workspace(id, id);
  CHECK(none == ot::flat_workspace{0, 0, 0, 0, 0});
  const auto both = ot::make_flat_workspace(moved, moved);
  CHECK(both == ot::flat_workspace{0, 100, 256, 100, 512});
  const auto recv_only = ot::make_flat_workspace(id, moved, 512, 64);
  CHECK(recv_only == ot::flat_workspace{512, 0, 512, 100, 640});
  CHECK_THROWS_AS(static_cast<void>(ot::make_flat_workspace(id, id, 3)), orch::invalid_argument);

  const auto nw = ot::make_nodewise_workspace(300, moved, moved, id, moved);
  CHECK(nw.staging_offset == 0);
  CHECK(nw.staging_bytes == 300);
  CHECK(nw.inter_node == ot::flat_workspace{512, 100, 768, 100, 1024});
  CHECK(nw.intra_node == ot::flat_workspace{512, 0, 512, 100, 768});
  CHECK(nw.end == 1024);
  CHECK(ot::align_up(0) == 0);
  CHECK(ot::align_up(1) == 256);
  CHECK(ot::align_up(257, 16) == 272);
  CHECK_THROWS_AS(static_cast<void>(ot::align_up(-1)), orch::invalid_argument);
  CHECK_THROWS_AS(static_cast<void>(ot::align_up(std::numeric_limits<bytes_t>::max())),
                  orch::overflow);
}
