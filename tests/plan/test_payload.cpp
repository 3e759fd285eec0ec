// SPDX-License-Identifier: Apache-2.0
// Payload helpers for one rank against the reference executor: pack_items from per-item
// spans equals orch::pack byte for byte; item_offsets, rank_offsets and received_items find
// every item's bytes (payload regenerated from (item, byte)) in the right buffer.
#include "plan_support.hpp"

#include <orch/exchange/execute.hpp>
#include <orch/exchange/layout.hpp>
#include <orch/exchange/payload.hpp>
#include <orch/exchange/plan.hpp>

#include <support/generators.hpp>

#include <doctest/doctest.h>

#include <cstddef>
#include <cstdint>
#include <random>
#include <span>
#include <string>
#include <vector>

using orch::bytes_t;
using orch::index_t;
using orch::rank_t;

namespace {

// A seeded plan: 1 to 9 ranks, some of them empty on either side, zero-byte items.
orch::exchange_plan random_plan(std::uint64_t seed) {
  return orch::test::random_unit_plan(seed, 1, 200);
}

// Every item's payload, regenerated from (item, byte) as the plan tests do.
std::vector<std::vector<std::byte>> payloads(const orch::exchange_plan& plan) {
  std::vector<std::vector<std::byte>> out(static_cast<std::size_t>(plan.items()));
  for (index_t i = 0; i < plan.items(); ++i) {
    auto& p = out[static_cast<std::size_t>(i)];
    p.resize(static_cast<std::size_t>(plan.item_bytes()[static_cast<std::size_t>(i)]));
    for (std::size_t b = 0; b < p.size(); ++b) {
      p[b] = orch::test::payload_byte(i, static_cast<bytes_t>(b));
    }
  }
  return out;
}

// Bytes of `got` that are not item's payload, or -1 for the wrong size.
bytes_t wrong(std::span<const std::byte> got, index_t item, bytes_t size) {
  if (got.size() != static_cast<std::size_t>(size)) {
    return -1;
  }
  bytes_t bad = 0;
  for (std::size_t b = 0; b < got.size(); ++b) {
    bad += got[b] != orch::test::payload_byte(item, static_cast<bytes_t>(b)) ? 1 : 0;
  }
  return bad;
}

template <class F>
std::string error_of(F&& f) {
  try {
    f();
  } catch (const orch::error& e) {
    return e.what();
  }
  return "";
}

bool has(const std::string& message, const std::string& part) {
  return message.find(part) != std::string::npos;
}

} // namespace

TEST_CASE("payload: pack_items equals pack, and every helper finds every item's bytes") {
  int zero_byte_items = 0;
  int empty_ranks = 0;
  for (std::uint64_t seed = 1; seed <= 150; ++seed) {
    CAPTURE(seed);
    const auto plan = random_plan(seed);
    const auto items = payloads(plan);
    const auto source = orch::test::make_source(plan);
    const auto src_offsets = orch::item_offsets::source(plan);
    const auto dst_offsets = orch::item_offsets::destination(plan);
    for (index_t i = 0; i < plan.items(); ++i) {
      CHECK(src_offsets.offset(i) == plan.source_offset(i));
      CHECK(dst_offsets.offset(i) == plan.destination_offset(i));
      CHECK(src_offsets.size(i) == plan.item_bytes()[static_cast<std::size_t>(i)]);
      zero_byte_items += src_offsets.size(i) == 0 ? 1 : 0;
    }
    std::vector<orch::rank_view> views;
    orch::rank_buffers send(static_cast<std::size_t>(plan.ranks()));
    for (rank_t r = 0; r < plan.ranks(); ++r) {
      CAPTURE(r);
      const auto u = static_cast<std::size_t>(r);
      views.push_back(plan.view(r));
      const auto& v = views.back();
      empty_ranks += v.send_items.empty() || v.recv_items.empty() ? 1 : 0;
      CHECK(src_offsets.rank_bytes(r) == plan.source_bytes(r));
      CHECK(dst_offsets.rank_bytes(r) == plan.destination_bytes(r));
      std::vector<std::byte> expected(static_cast<std::size_t>(v.source_bytes));
      orch::pack(v, source[u], expected);
      send[u].assign(expected.size(), std::byte{0x5A});
      std::vector<index_t> asked;
      orch::pack_items(
          v,
          [&](index_t item) {
            asked.push_back(item);
            return std::span<const std::byte>(items[static_cast<std::size_t>(item)]);
          },
          send[u]);
      CHECK(send[u] == expected);
      CHECK(asked == v.send_items); // once per item, in send order
      // The source buffer slot by slot.
      const auto src = orch::rank_offsets::source(plan, r);
      REQUIRE(src.slots() == plan.from().count_on(r));
      CHECK(src.buffer_bytes() == plan.source_bytes(r));
      for (index_t s = 0; s < src.slots(); ++s) {
        const auto at = src.at(s);
        CHECK(at.item == plan.from().item_at(r, s));
        CHECK(at.offset == src_offsets.offset(at.item));
        CHECK(wrong(src.slot_bytes(source[u], s), at.item, at.size) == 0);
      }
    }
    const auto recv = orch::all_to_all(views, send);
    for (rank_t r = 0; r < plan.ranks(); ++r) {
      CAPTURE(r);
      const auto u = static_cast<std::size_t>(r);
      const auto& v = views[u];
      std::vector<std::byte> destination(recv[u].size());
      orch::unpack(v, recv[u], destination);
      const orch::received_items got(v);
      REQUIRE(got.size() == plan.to().count_on(r));
      CHECK(got.rank() == r);
      for (const index_t i : plan.to().items_on(r)) {
        const bytes_t size = plan.item_bytes()[static_cast<std::size_t>(i)];
        REQUIRE(got.contains(i));
        CHECK(got.in_destination(i).offset == dst_offsets.offset(i));
        CHECK(got.in_receive(i).size == size);
        CHECK(wrong(got.receive_bytes(recv[u], i), i, size) == 0);
        CHECK(wrong(got.destination_bytes(destination, i), i, size) == 0);
      }
      for (index_t i = 0; i < plan.items(); ++i) {
        CHECK(got.contains(i) == (plan.to().rank_of(i) == r));
      }
      CHECK_FALSE(got.contains(-1));
      CHECK_FALSE(got.contains(plan.items()));
      // The destination buffer slot by slot, and by item.
      const auto dst = orch::rank_offsets::destination(plan, r);
      REQUIRE(dst.slots() == plan.to().count_on(r));
      CHECK(dst.buffer_bytes() == plan.destination_bytes(r));
      bytes_t next = 0;
      for (index_t s = 0; s < dst.slots(); ++s) {
        const auto at = dst.at(s);
        CHECK(at.item == plan.to().item_at(r, s));
        CHECK(at.offset == next); // back to back in slot order
        next += at.size;
        CHECK(dst.find(at.item) == at);
        CHECK(got.in_destination(at.item) == at);
        CHECK(wrong(dst.slot_bytes(destination, s), at.item, at.size) == 0);
        CHECK(wrong(dst.item_bytes(destination, at.item), at.item, at.size) == 0);
      }
      CHECK(next == plan.destination_bytes(r));
    }
  }
  // The seeds cover the edge cases the helpers must handle.
  CHECK(zero_byte_items > 50);
  CHECK(empty_ranks > 20);
}

TEST_CASE("payload: errors name the item, the rank and both sizes") {
  // Items 0, 1 on rank 0 and item 2 on rank 1, all to rank 1.
  const auto from = orch::layout::from_assignment(std::vector<rank_t>{0, 0, 1}, 2);
  const auto to = orch::layout::from_assignment(std::vector<rank_t>{1, 1, 1}, 2);
  const auto plan = orch::make_plan(from, to, std::vector<bytes_t>{4, 0, 3});
  const auto v0 = plan.view(0);
  std::vector<std::byte> four(4);
  std::vector<std::byte> five(5);
  std::vector<std::byte> send(4);
  // Item 0 comes with 5 bytes where the plan sends 4 (item 1 with its 0).
  const auto sized = [&](index_t item) {
    return item == 0 ? std::span<const std::byte>(five) : std::span<const std::byte>(four).first(0);
  };
  CHECK(has(error_of([&] { orch::pack_items(v0, sized, send); }),
            "pack_items: item 0 of rank 0 has 5 bytes, the plan sends 4"));
  const auto right = [&](index_t item) {
    return std::span<const std::byte>(four).first(item == 0 ? 4 : 0);
  };
  std::vector<std::byte> small(3);
  CHECK(has(error_of([&] { orch::pack_items(v0, right, small); }),
            "rank 0 needs a send buffer of 4 bytes, got 3"));
  CHECK(error_of([&] { orch::pack_items(v0, right, send); }).empty());

  const orch::received_items got(plan.view(1));
  CHECK(got.size() == 3);
  const orch::received_items none(plan.view(0));
  CHECK(none.size() == 0);
  CHECK(has(error_of([&] { (void)none.in_receive(0); }), "rank 0 does not receive item 0"));
  std::vector<std::byte> short_recv(6);
  CHECK(has(error_of([&] { (void)got.receive_bytes(short_recv, 2); }),
            "rank 1 needs a buffer of 7 bytes, got 6"));

  const auto dst = orch::rank_offsets::destination(plan, 1);
  const auto src0 = orch::rank_offsets::source(plan, 0);
  CHECK(has(error_of([&] { (void)src0.find(2); }), "item 2 is on rank 1, not on rank 0"));
  CHECK(has(error_of([&] { (void)src0.find(3); }), "item 3 is outside [0, 3)"));
  CHECK(has(error_of([&] { (void)dst.at(3); }), "rank 1 has 3 slots, no slot 3"));
  CHECK(has(error_of([&] { (void)orch::rank_offsets::source(plan, 2); }), "rank 2"));
  CHECK(has(error_of([&] { (void)dst.slot_bytes(short_recv, 2); }),
            "item 2 of rank 1 is at bytes [4, 7) but the buffer has 6"));

  CHECK(has(error_of([&] {
              (void)orch::item_offsets(from, std::vector<bytes_t>{1, 2});
            }),
            "2 item sizes for 3 items"));
  CHECK(has(error_of([&] {
              (void)orch::item_offsets(from, std::vector<bytes_t>{1, -2, 0});
            }),
            "item 1 has negative size -2"));
  const std::vector<bytes_t> huge{INT64_MAX, 1, 0};
  CHECK_THROWS_AS((void)orch::item_offsets(from, huge), orch::overflow);
  CHECK_THROWS_AS((void)orch::rank_offsets(from, 0, huge), orch::overflow);
  const orch::item_offsets offsets(from, std::vector<bytes_t>{4, 0, 3});
  CHECK(has(error_of([&] { (void)offsets.offset(3); }), "item 3 is outside [0, 3)"));
  CHECK(has(error_of([&] { (void)offsets.rank_bytes(2); }), "rank 2 is outside [0, 2)"));
}

TEST_CASE("payload: empty plans and ranks without items") {
  const orch::exchange_plan empty;
  const auto offsets = orch::item_offsets::source(empty);
  CHECK(offsets.items() == 0);
  CHECK(offsets.rank_bytes(0) == 0);
  const auto v = empty.view(0);
  std::vector<std::byte> send;
  int calls = 0;
  orch::pack_items(
      v,
      [&](index_t) {
        ++calls;
        return std::span<const std::byte>{};
      },
      send);
  CHECK(calls == 0);
  const orch::received_items got(v);
  CHECK(got.size() == 0);
  CHECK_FALSE(got.contains(0));
  const auto slots = orch::rank_offsets::destination(empty, 0);
  CHECK(slots.slots() == 0);
  CHECK(slots.buffer_bytes() == 0);
  // Zero-byte items only: every range is empty, at offset 0.
  const auto l = orch::layout::from_assignment(std::vector<rank_t>{1, 1, 1}, 3);
  const auto zeros = orch::make_plan(l, l, std::vector<bytes_t>{0, 0, 0});
  const auto d = orch::rank_offsets::destination(zeros, 1);
  for (index_t s = 0; s < 3; ++s) {
    CHECK(d.at(s) == orch::item_range{s, 0, 0});
  }
  CHECK(orch::rank_offsets::destination(zeros, 0).slots() == 0);
}
