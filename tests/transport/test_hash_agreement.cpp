// SPDX-License-Identifier: Apache-2.0
// The plan-hash agreement protocol, every rank's all-reduce simulated in one process.
#include <orch/transport/errors.hpp>
#include <orch/transport/hash_agreement.hpp>

#include <doctest/doctest.h>

#include <algorithm>
#include <cstdint>
#include <string>
#include <vector>

namespace ot = orch::transport;

namespace {

// What the backend's all-reduce (unsigned maximum) returns to every rank.
std::vector<std::uint64_t> all_reduce_max(const std::vector<std::vector<std::uint64_t>>& hashes) {
  std::vector<std::uint64_t> out;
  for (const auto& h : hashes) {
    const auto w = ot::make_agreement_words(h);
    const auto words = w.span();
    if (out.empty()) {
      out.assign(words.begin(), words.end());
    } else {
      REQUIRE(out.size() == words.size());
      for (std::size_t i = 0; i < out.size(); ++i) {
        out[i] = std::max(out[i], words[i]);
      }
    }
  }
  return out;
}

} // namespace

TEST_CASE("hash agreement: equal hashes agree, any difference is seen by every rank") {
  const std::vector<std::uint64_t> plan{0x1234'5678'9ABC'DEF0ULL, 42};
  std::vector<std::vector<std::uint64_t>> ranks(8, plan);
  auto reduced = all_reduce_max(ranks);
  CHECK(reduced.size() == 4);
  CHECK(ot::decide_agreement(reduced).agree);
  for (int r = 0; r < 8; ++r) {
    CHECK_NOTHROW(ot::check_agreement(ranks[static_cast<std::size_t>(r)], reduced, r, "test"));
  }
  // One rank holds another second-stage plan; every rank must throw, naming both hashes.
  for (const std::uint64_t other :
       {std::uint64_t{41}, std::uint64_t{43}, ~std::uint64_t{0}, std::uint64_t{0}}) {
    CAPTURE(other);
    ranks[5][1] = other;
    reduced = all_reduce_max(ranks);
    const auto v = ot::decide_agreement(reduced);
    CHECK_FALSE(v.agree);
    CHECK(v.first_mismatch == 1);
    CHECK(v.min == std::min<std::uint64_t>(42, other));
    CHECK(v.max == std::max<std::uint64_t>(42, other));
    for (int r = 0; r < 8; ++r) {
      CAPTURE(r);
      try {
        ot::check_agreement(ranks[static_cast<std::size_t>(r)], reduced, r, "orch::test");
        FAIL("no plan_mismatch_error");
      } catch (const ot::plan_mismatch_error& e) {
        const std::string what = e.what();
        CHECK(what.find("orch::test: rank " + std::to_string(r)) != std::string::npos);
        CHECK(what.find(std::to_string(42)) != std::string::npos);
        CHECK(what.find(std::to_string(other)) != std::string::npos);
        CHECK(what.find("no payload was moved") != std::string::npos);
      }
    }
    ranks[5][1] = 42;
  }
  // A difference in the first hash is reported first.
  ranks[0][0] = 7;
  CHECK(ot::decide_agreement(all_reduce_max(ranks)).first_mismatch == 0);
}

TEST_CASE("hash agreement: word counts are checked") {
  CHECK_THROWS_AS(static_cast<void>(ot::make_agreement_words({})), orch::invalid_argument);
  const std::vector<std::uint64_t> nine(9, 1);
  CHECK_THROWS_AS(static_cast<void>(ot::make_agreement_words(nine)), orch::invalid_argument);
  const std::vector<std::uint64_t> eight(8, 1);
  CHECK(ot::make_agreement_words(eight).span().size() == 16);
  const std::vector<std::uint64_t> odd(3, 1);
  CHECK_THROWS_AS(static_cast<void>(ot::decide_agreement(odd)), orch::invalid_argument);
  const std::vector<std::uint64_t> one{1};
  const std::vector<std::uint64_t> four(4, 1);
  CHECK_THROWS_AS(ot::check_agreement(one, four, 0, "test"), orch::invalid_argument);
}
