// SPDX-License-Identifier: Apache-2.0
#include <orch/detail/primitives/radix_sort.hpp>
#include <orch/partition/order.hpp>

#include <support/generators.hpp>

#include <doctest/doctest.h>

#include <algorithm>
#include <bit>
#include <cstdint>
#include <numeric>
#include <vector>

using orch::cost_t;

namespace {

std::vector<std::uint32_t> reference_order(const std::vector<cost_t>& c) {
  std::vector<std::uint32_t> idx(c.size());
  std::iota(idx.begin(), idx.end(), std::uint32_t{0});
  std::stable_sort(idx.begin(), idx.end(),
                   [&](std::uint32_t a, std::uint32_t b) { return c[a] > c[b]; });
  return idx;
}

} // namespace

TEST_CASE("order_desc: cost descending, ties by index, for narrow and wide cost ranges") {
  for (std::uint64_t seed = 1; seed <= 60; ++seed) {
    std::mt19937_64 rng(seed);
    const auto n = static_cast<std::size_t>(orch::test::uniform_int(rng, 0, 3000));
    // Ranges: tiny (many ties), 2^20, 2^31 (packed keys), 2^40 and 2^62 (16-byte fallback).
    const cost_t ranges[] = {3, 1 << 20, cost_t{1} << 31, cost_t{1} << 40, cost_t{1} << 62};
    const cost_t hi = ranges[seed % 5];
    const cost_t lo = seed % 2 == 0 ? 0 : hi / 2;
    const auto c = orch::test::uniform_costs(seed, n, lo, hi);
    CAPTURE(seed);
    CAPTURE(n);
    CHECK(orch::detail::order_desc(c) == reference_order(c));
  }
}

TEST_CASE("order_by_cost_desc (public): the partitioners' order, with checked input") {
  for (std::uint64_t seed = 1; seed <= 10; ++seed) {
    const auto c = orch::test::uniform_costs(seed, 500, 0, seed % 2 == 0 ? 7 : cost_t{1} << 40);
    CAPTURE(seed);
    CHECK(orch::order_by_cost_desc(c) == reference_order(c));
  }
  CHECK(orch::order_by_cost_desc(std::vector<cost_t>{}).empty());
  CHECK_THROWS_AS(static_cast<void>(orch::order_by_cost_desc(std::vector<cost_t>{1, -2})),
                  orch::invalid_argument);
}

TEST_CASE("visit_desc: passes each item's own cost, in order") {
  const std::vector<cost_t> c{5, 0, 9, 5, 9, 1};
  std::vector<std::uint32_t> seen;
  orch::detail::visit_desc(c, [&](std::uint32_t i, cost_t cost) {
    CHECK(cost == c[i]);
    seen.push_back(i);
  });
  CHECK(seen == std::vector<std::uint32_t>{2, 4, 0, 3, 5, 1});
  const std::vector<cost_t> same(4, 7);
  CHECK(orch::detail::order_desc(same) == std::vector<std::uint32_t>{0, 1, 2, 3});
  CHECK(orch::detail::order_desc(std::vector<cost_t>{}).empty());
}

TEST_CASE("sort_keys: equals std::sort for every size, key width and duplicate rate") {
  std::vector<std::uint64_t> scratch; // reused across calls, as node_placer does
  for (std::uint64_t seed = 1; seed <= 120; ++seed) {
    std::mt19937_64 rng(seed);
    // Sizes around the comparison-sort cut-over and well above it.
    const auto n = static_cast<std::size_t>(seed % 3 == 0 ? orch::test::uniform_int(rng, 0, 130)
                                                          : orch::test::uniform_int(rng, 0, 2000));
    // Bits that vary: a few (many duplicates), one byte, several bytes, all 64.
    const int bits[] = {2, 8, 35, 64};
    const int width = bits[seed % 4];
    // A common high part shared by every key: the passes over its bytes are skipped.
    const std::uint64_t common = seed % 2 == 0 ? 0 : (std::uint64_t{0xA5} << 56);
    std::vector<std::uint64_t> keys(n);
    for (auto& k : keys) {
      const std::uint64_t r = rng();
      k = width == 64 ? r : (common | (r & ((std::uint64_t{1} << width) - 1)));
    }
    auto expected = keys;
    std::sort(expected.begin(), expected.end());
    CAPTURE(seed);
    CAPTURE(n);
    orch::detail::sort_keys(keys, scratch);
    CHECK(keys == expected);
  }
}

TEST_CASE("sort_keys: keys already sorted in their low bits (value << b | position) need no "
          "pass over those bits") {
  std::vector<std::uint64_t> scratch;
  for (std::uint64_t seed = 1; seed <= 180; ++seed) {
    std::mt19937_64 rng(seed);
    const auto n = static_cast<std::size_t>(orch::test::uniform_int(rng, 0, 1500));
    // Position bits as the callers pack them (at least enough for n), sometimes more; the
    // extra bits and the value width are drawn independently, so every pairing occurs.
    const int b =
        static_cast<int>(std::bit_width(n)) + static_cast<int>(orch::test::uniform_int(rng, 0, 12));
    // Values: many duplicates (so the input order decides ties), one byte, several bytes.
    const int widths[] = {3, 8, 30};
    const int width = std::min(widths[orch::test::uniform_int(rng, 0, 2)], 63 - b);
    std::vector<std::uint64_t> keys(n);
    for (std::size_t p = 0; p < n; ++p) {
      const std::uint64_t value = rng() & ((std::uint64_t{1} << width) - 1);
      keys[p] = value << b | p;
    }
    auto expected = keys;
    std::sort(expected.begin(), expected.end());
    CAPTURE(seed);
    CAPTURE(n);
    CAPTURE(b);
    orch::detail::sort_keys(keys, scratch, b);
    CHECK(keys == expected);
  }
}
