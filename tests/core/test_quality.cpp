// SPDX-License-Identifier: Apache-2.0
#include <orch/detail/primitives/checked.hpp>
#include <orch/quality.hpp>

#include <support/generators.hpp>

#include <doctest/doctest.h>

#include <algorithm>
#include <random>
#include <string>
#include <vector>

TEST_CASE("lower_bound is max(ceil(sum / k), max)") {
  const std::vector<orch::cost_t> c{5, 3, 3, 2};
  CHECK(orch::lower_bound(c, 1) == 13);
  CHECK(orch::lower_bound(c, 2) == 7);
  CHECK(orch::lower_bound(c, 3) == 5);
  CHECK(orch::lower_bound(c, 10) == 5);
  CHECK(orch::lower_bound(std::vector<orch::cost_t>{}, 4) == 0);
  CHECK_THROWS_AS((void)orch::lower_bound(c, 0), orch::invalid_argument);
  CHECK_THROWS_AS((void)orch::lower_bound(std::vector<orch::cost_t>{1, -1}, 2),
                  orch::invalid_argument);
  CHECK_THROWS_AS((void)orch::lower_bound(std::vector<orch::cost_t>{orch::max_cost, 1}, 2),
                  orch::overflow);
}

TEST_CASE("bin_loads sums per bin and validates") {
  const std::vector<orch::cost_t> c{5, 3, 3, 2};
  const std::vector<orch::rank_t> b{0, 1, 1, 0};
  CHECK(orch::bin_loads(c, b, 3) == std::vector<orch::cost_t>{7, 6, 0});
  CHECK_THROWS_AS((void)orch::bin_loads(c, std::vector<orch::rank_t>{0, 1}, 2),
                  orch::invalid_argument);
  try {
    (void)orch::bin_loads(c, std::vector<orch::rank_t>{0, 1, 3, 0}, 3);
    FAIL("expected throw");
  } catch (const orch::invalid_argument& e) {
    CHECK(std::string(e.what()).find("item 2") != std::string::npos);
  }
}

TEST_CASE("measure reports max/mean, max/lower bound and idle fraction") {
  const std::vector<orch::cost_t> c{5, 3, 3, 2};
  const auto m = orch::measure(c, std::vector<orch::rank_t>{0, 1, 1, 0}, 2);
  CHECK(m.max_load == 7);
  CHECK(m.total == 13);
  CHECK(m.lower_bound == 7);
  CHECK(m.mean_load == doctest::Approx(6.5));
  CHECK(m.max_over_mean == doctest::Approx(7.0 / 6.5));
  CHECK(m.max_over_lower_bound == doctest::Approx(1.0));
  CHECK(m.idle_fraction == doctest::Approx(1.0 - 6.5 / 7.0));

  const auto zero = orch::measure_loads(std::vector<orch::cost_t>{0, 0});
  CHECK(zero.max_over_mean == 1.0);
  CHECK(zero.idle_fraction == 0.0);
  CHECK_THROWS_AS((void)orch::measure_loads(std::vector<orch::cost_t>{}), orch::invalid_argument);
}

namespace {

// The checked walk that lower_bound's one-pass sum must agree with: the same value, or the
// same exception type and message for the first negative cost or overflowing prefix.
std::string reference_lower_bound(const std::vector<orch::cost_t>& c, orch::rank_t k) {
  orch::cost_t total = 0;
  orch::cost_t largest = 0;
  for (std::size_t i = 0; i < c.size(); ++i) {
    if (c[i] < 0) {
      return "invalid: lower_bound: item " + std::to_string(i) + " has negative cost " +
             std::to_string(c[i]);
    }
    if (__builtin_add_overflow(total, c[i], &total)) {
      return "overflow";
    }
    largest = std::max(largest, c[i]);
  }
  return std::to_string(std::max(total / k + (total % k != 0 ? 1 : 0), largest));
}

std::string outcome(const std::vector<orch::cost_t>& c, orch::rank_t k) {
  try {
    return std::to_string(orch::lower_bound(c, k));
  } catch (const orch::overflow&) {
    return "overflow";
  } catch (const orch::invalid_argument& e) {
    return std::string("invalid: ") + e.what();
  }
}

} // namespace

TEST_CASE("lower_bound: one-pass sum agrees with the checked walk, errors included") {
  constexpr orch::cost_t big = orch::max_cost / 3;
  // Every length up to 9 (the four-lane loop and its tail), values near the limits.
  std::mt19937_64 rng(77);
  for (int trial = 0; trial < 3000; ++trial) {
    CAPTURE(trial);
    const auto n = static_cast<std::size_t>(orch::test::uniform_int(rng, 0, 9));
    std::vector<orch::cost_t> c(n);
    const int kind = static_cast<int>(orch::test::uniform_int(rng, 0, 3));
    for (auto& x : c) {
      switch (kind) {
      case 0:
        x = orch::test::uniform_int(rng, 0, 1000);
        break;
      case 1:
        x = orch::test::uniform_int(rng, big, orch::max_cost);
        break; // sums may overflow
      case 2:
        x = orch::test::uniform_int(rng, -3, 1000);
        break; // some negative
      default:
        x = orch::test::uniform_int(rng, 0, 1) == 0 ? big : orch::test::uniform_int(rng, -1, 5);
      }
    }
    const auto k = static_cast<orch::rank_t>(orch::test::uniform_int(rng, 1, 5));
    CHECK(outcome(c, k) == reference_lower_bound(c, k));
  }
  // n · largest ≥ 2^64 but the total fits: the checked walk gives the value.
  const std::vector<orch::cost_t> wide{orch::max_cost - 5, 0, 0, 0, 0, 0, 0, 0, 1, 2};
  CHECK(orch::lower_bound(wide, 1) == orch::max_cost - 2);
  // An overflow before a negative cost reports the overflow (item order), and vice versa.
  CHECK(outcome({orch::max_cost, 1, -1}, 2) == "overflow");
  CHECK(outcome({1, -1, orch::max_cost, 1}, 2) ==
        "invalid: lower_bound: item 1 has negative cost -1");
}

TEST_CASE("int128_string prints every 128-bit integer in decimal") {
  using orch::detail::int128;
  CHECK(orch::detail::int128_string(0) == "0");
  CHECK(orch::detail::int128_string(-7) == "-7");
  CHECK(orch::detail::int128_string(int128{1} << 64) == "18446744073709551616");
  const int128 most = ~(static_cast<int128>(1) << 127);
  CHECK(orch::detail::int128_string(most) == "170141183460469231731687303715884105727");
  CHECK(orch::detail::int128_string(-most - 1) == "-170141183460469231731687303715884105728");
}
