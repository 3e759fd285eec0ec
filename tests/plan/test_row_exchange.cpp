// SPDX-License-Identifier: Apache-2.0
// The row form of a plan (what orch.torch runs): gather by pack_index, an all_to_all_single
// with the split sizes, gather by unpack_index — simulated for every rank on rows that carry
// (item, row) ids — delivers exactly what the reference executor delivers.
#include "plan_support.hpp"

#include <orch/exchange/execute.hpp>
#include <orch/exchange/layout.hpp>
#include <orch/exchange/plan.hpp>
#include <orch/exchange/row_exchange.hpp>

#include <support/generators.hpp>

#include <doctest/doctest.h>

#include <cstdint>
#include <random>
#include <string>
#include <utility>
#include <vector>

using orch::bytes_t;
using orch::index_t;
using orch::rank_t;

namespace {

using row = std::pair<index_t, index_t>; // (item, row within the item)

// Rank r's rows in slot order of `l`.
std::vector<row> rows_on(const orch::layout& l, std::span<const bytes_t> bytes, bytes_t bpr,
                         rank_t r) {
  std::vector<row> out;
  for (const index_t i : l.items_on(r)) {
    for (index_t j = 0; j < bytes[static_cast<std::size_t>(i)] / bpr; ++j) {
      out.emplace_back(i, j);
    }
  }
  return out;
}

} // namespace

TEST_CASE("make_row_exchange: gather, all_to_all_single, gather deliver the plan's layout") {
  int identity_packs = 0;
  int identity_unpacks = 0;
  for (std::uint64_t seed = 1; seed <= 300; ++seed) {
    const bytes_t bpr = seed % 3 == 0 ? 1 : 8;
    const auto plan = orch::test::random_unit_plan(seed, bpr, 20);
    CAPTURE(seed);
    const auto ranks = static_cast<std::size_t>(plan.ranks());
    std::vector<orch::row_exchange> xs;
    std::vector<std::vector<row>> send(ranks);
    for (rank_t r = 0; r < plan.ranks(); ++r) {
      xs.push_back(orch::make_row_exchange(plan, r, bpr));
      const auto& x = xs.back();
      const auto source = rows_on(plan.from(), plan.item_bytes(), bpr, r);
      REQUIRE(static_cast<index_t>(source.size()) == x.source_rows);
      if (x.pack_index.empty()) {
        send[static_cast<std::size_t>(r)] = source;
        ++identity_packs;
      } else {
        REQUIRE(static_cast<index_t>(x.pack_index.size()) == x.source_rows);
        for (const index_t p : x.pack_index) {
          send[static_cast<std::size_t>(r)].push_back(source[static_cast<std::size_t>(p)]);
        }
      }
    }
    // all_to_all_single: chunk d of rank s's send (send_splits) lands as chunk s of rank d's
    // receive buffer; both sides must agree on the sizes.
    for (std::size_t d = 0; d < ranks; ++d) {
      std::vector<row> received;
      for (std::size_t s = 0; s < ranks; ++s) {
        REQUIRE(xs[s].send_splits.size() == ranks);
        CHECK(xs[s].send_splits[d] == xs[d].recv_splits[s]);
        index_t begin = 0;
        for (std::size_t q = 0; q < d; ++q) {
          begin += xs[s].send_splits[q];
        }
        for (index_t k = 0; k < xs[s].send_splits[d]; ++k) {
          received.push_back(send[s][static_cast<std::size_t>(begin + k)]);
        }
      }
      const auto& x = xs[d];
      REQUIRE(static_cast<index_t>(received.size()) == x.destination_rows);
      std::vector<row> destination;
      if (x.unpack_index.empty()) {
        destination = received;
        ++identity_unpacks;
      } else {
        for (const index_t p : x.unpack_index) {
          destination.push_back(received[static_cast<std::size_t>(p)]);
        }
      }
      CHECK(destination == rows_on(plan.to(), plan.item_bytes(), bpr, static_cast<rank_t>(d)));
    }
  }
  // Both the copying and the identity paths were exercised.
  CHECK(identity_packs > 0);
  CHECK(identity_unpacks > 0);
}

TEST_CASE("make_row_exchange: an identity plan copies nothing; bad rows are named") {
  const auto l = orch::layout::from_assignment(std::vector<rank_t>{0, 1, 1, 0}, 2);
  const std::vector<bytes_t> bytes{16, 8, 0, 24};
  const auto same = orch::make_plan(l, l, bytes);
  for (rank_t r = 0; r < 2; ++r) {
    const auto x = orch::make_row_exchange(same, r, 8);
    CHECK(x.pack_index.empty());
    CHECK(x.unpack_index.empty());
    CHECK(x.send_splits[static_cast<std::size_t>(r)] == x.source_rows);
  }
  CHECK(orch::make_row_exchange(same, 0, 8).source_rows == 5);
  CHECK_THROWS_WITH_AS((void)orch::make_row_exchange(same, 0, 16),
                       "make_row_exchange: item 3 of rank 0 has 24 bytes, not a multiple of the "
                       "16 bytes of a row",
                       orch::invalid_argument);
  CHECK_THROWS_AS((void)orch::make_row_exchange(same, 0, 0), orch::invalid_argument);
  CHECK_THROWS_AS((void)orch::make_row_exchange(same, 2, 8), orch::invalid_argument);
}
