// SPDX-License-Identifier: Apache-2.0
#include <orch/quality.hpp>

#include <doctest/doctest.h>

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
