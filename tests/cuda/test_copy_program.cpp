// SPDX-License-Identifier: Apache-2.0
// Copy programs (the arrays the pack / unpack kernels consume): tiling, validation and the CPU
// emulation of the kernel on the exchange core's copy lists against orch::pack / orch::unpack.
#include "cuda_scenarios.hpp"

#include <orch/cuda/copy_program.hpp>
#include <orch/exchange/execute.hpp>
#include <orch/exchange/plan.hpp>
#include <orch/transport/copy_list.hpp>

#include <doctest/doctest.h>

#include <cstddef>
#include <cstdint>
#include <vector>

using orch::bytes_t;
using orch::index_t;
using orch::rank_t;
namespace oc = orch::cuda;

namespace {

// Runs `p` through exactly the path of the GPU: serialised to words, decoded by tile_at.
void emulate(const oc::copy_program& p, const std::vector<std::byte>& src,
             std::vector<std::byte>& dst) {
  std::vector<std::int64_t> words{-1, -2}; // a non-zero start, as when programs are appended
  const auto slots = oc::append_program(words, p);
  oc::run_copy_program(oc::program_at(words.data(), slots), src.data(), dst.data());
}

} // namespace

TEST_CASE("cuda copy_program: tiles cover every entry exactly once, in order") {
  const std::vector<bytes_t> sizes{0, 1, 15, 16, 17, 64, 65, 0, 130, 1000};
  std::vector<bytes_t> src_off(sizes.size());
  std::vector<bytes_t> dst_off(sizes.size());
  bytes_t total = 0;
  for (std::size_t e = 0; e < sizes.size(); ++e) {
    src_off[e] = total;
    dst_off[e] = 2000 - total - sizes[e]; // reversed order in the destination
    total += sizes[e];
  }
  for (const bytes_t tile : {16, 32, 48, 64, 1024}) {
    CAPTURE(tile);
    const auto p = oc::make_copy_program(src_off, dst_off, sizes, total, 2000, tile);
    REQUIRE(p.entries() == static_cast<index_t>(sizes.size()));
    REQUIRE(p.first_tile.size() == sizes.size() + 1);
    std::vector<std::int64_t> words;
    const auto slots = oc::append_program(words, p); // before words.data(): it reallocates
    const auto ref = oc::program_at(words.data(), slots);
    std::vector<bytes_t> covered(sizes.size(), 0);
    for (std::int64_t t = 0; t < p.tiles(); ++t) {
      const auto c = oc::tile_at(ref, t);
      const auto e = static_cast<std::size_t>(p.tile_entry[static_cast<std::size_t>(t)]);
      CHECK(c.bytes > 0);
      CHECK(c.bytes <= tile);
      CHECK(c.src == src_off[e] + covered[e]); // contiguous, ascending
      CHECK(c.dst == dst_off[e] + covered[e]);
      CHECK((c.src - src_off[e]) % 16 == 0); // tiles keep the entry's 16-byte alignment
      covered[e] += c.bytes;
    }
    CHECK(covered == sizes);
    for (std::size_t e = 0; e < sizes.size(); ++e) {
      CHECK(p.first_tile[e + 1] - p.first_tile[e] == (sizes[e] + tile - 1) / tile);
    }
  }
}

TEST_CASE("cuda copy_program: malformed input is rejected with the entry named") {
  const std::vector<bytes_t> off{0, 4};
  const std::vector<bytes_t> sizes{4, 4};
  CHECK_THROWS_WITH_AS(static_cast<void>(oc::make_copy_program(off, off, sizes, 8, 8, 24)),
                       doctest::Contains("multiple of 16"), orch::invalid_argument);
  CHECK_THROWS_AS(static_cast<void>(oc::make_copy_program(off, off, sizes, 8, 8, 0)),
                  orch::invalid_argument);
  CHECK_THROWS_WITH_AS(static_cast<void>(oc::make_copy_program(off, off, sizes, 7, 8)),
                       doctest::Contains("entry 1"), orch::invalid_argument);
  CHECK_THROWS_AS(
      static_cast<void>(oc::make_copy_program(off, std::vector<bytes_t>{0}, sizes, 8, 8)),
      orch::invalid_argument);
  CHECK_THROWS_WITH_AS(
      static_cast<void>(oc::make_copy_program(off, off, std::vector<bytes_t>{4, -1}, 8, 8)),
      doctest::Contains("entry 1"), orch::invalid_argument);
  const std::vector<bytes_t> big{orch::max_cost - 1};
  const std::vector<bytes_t> two{2};
  CHECK_THROWS_AS(
      static_cast<void>(oc::make_copy_program(big, big, two, orch::max_cost, orch::max_cost)),
      orch::overflow);
  CHECK(oc::make_copy_program(off, off, sizes, 8, 8).tiles() == 2);
}

TEST_CASE("cuda copy_program: emulated pack and unpack equal orch::pack / orch::unpack") {
  int checked = 0;
  for (std::uint64_t seed = 1; seed <= 200; ++seed) {
    const auto s = orch::test::make_cuda_scenario(seed, 70'000 + static_cast<bytes_t>(seed));
    CAPTURE(seed);
    const auto plan = orch::make_plan(s.from, s.to, s.bytes);
    const auto src = orch::test::make_source(plan);
    const bytes_t tile = seed % 3 == 0 ? 16 : oc::default_tile_bytes;
    for (rank_t r = 0; r < plan.ranks(); ++r) {
      CAPTURE(r);
      const auto v = plan.view(r);
      const auto& source = src[static_cast<std::size_t>(r)];
      std::vector<std::byte> want(source.size(), std::byte{0x11});
      orch::pack(v, source, want);
      std::vector<std::byte> got(source.size(), std::byte{0x11});
      emulate(oc::make_copy_program(orch::transport::make_pack_list(v), tile), source, got);
      CHECK(got == want);

      std::vector<std::byte> recv(static_cast<std::size_t>(v.destination_bytes));
      for (std::size_t b = 0; b < recv.size(); ++b) {
        recv[b] = static_cast<std::byte>((b * 7 + static_cast<std::size_t>(seed)) & 0xFFU);
      }
      std::vector<std::byte> want_dst(recv.size(), std::byte{0x22});
      orch::unpack(v, recv, want_dst);
      std::vector<std::byte> got_dst(recv.size(), std::byte{0x22});
      emulate(oc::make_copy_program(orch::transport::make_unpack_list(v), tile), recv, got_dst);
      CHECK(got_dst == want_dst);
      ++checked;
    }
  }
  CHECK(checked > 500);
}

TEST_CASE("cuda copy_program: a merged copy list makes fewer tiles than its items") {
  // Three contiguous items of 10 bytes each, moved as one block: the core merges them into one
  // copy, so one 16-byte-tiled program has ceil(30 / 16) = 2 tiles, not 3.
  const std::vector<bytes_t> src_off{0, 10, 20};
  const std::vector<bytes_t> dst_off{8, 18, 28};
  const std::vector<bytes_t> sizes{10, 10, 10};
  const auto list = orch::transport::make_copy_list(src_off, dst_off, sizes, 30, 38);
  REQUIRE(list.entries() == 1);
  const auto p = oc::make_copy_program(list, 16);
  CHECK(p.entries() == 1);
  CHECK(p.tiles() == 2);
  CHECK(p.src_bytes == 30);
  CHECK(p.dst_bytes == 38);
}
