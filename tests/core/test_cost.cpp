// SPDX-License-Identifier: Apache-2.0
#include <orch/cost.hpp>

#include <doctest/doctest.h>

#include <cstdint>
#include <limits>
#include <string>
#include <vector>

TEST_CASE("linear_cost is per_unit * l + per_item") {
  const orch::linear_cost m{3, 5};
  CHECK(m(0) == 5);
  CHECK(m(10) == 35);
  CHECK(orch::linear_cost{}(123) == 123);
}

TEST_CASE("attention_cost is linear * l + quadratic * l^2 + per_item") {
  const orch::attention_cost m{2, 3, 7};
  CHECK(m(0) == 7);
  CHECK(m(1) == 12);
  CHECK(m(10) == 2 * 10 + 3 * 100 + 7);
  // Lengths near 2^31 with a unit quadratic term fit (2^62) ...
  const orch::length_t l = (orch::length_t{1} << 31) - 1;
  CHECK(orch::attention_cost{0, 1, 0}(l) == l * l);
  // ... but a coefficient of 2 on l = 2^31 is 2^63: overflow is reported, not wrapped.
  CHECK_THROWS_AS(((void)orch::attention_cost{0, 2, 0}(orch::length_t{1} << 31)), orch::overflow);
  CHECK_THROWS_AS(((void)orch::attention_cost{1, 1, 0}(orch::length_t{1} << 32)), orch::error);
}

TEST_CASE("memory_cost is bytes_per_unit * l + bytes_per_item") {
  const orch::memory_cost m{4096, 1 << 20};
  CHECK(m(2) == 2 * 4096 + (1 << 20));
}

TEST_CASE("cost models reject negative lengths and coefficients") {
  CHECK_THROWS_AS(((void)orch::linear_cost{}(-1)), orch::invalid_argument);
  CHECK_THROWS_AS(((void)orch::attention_cost{}(-5)), orch::invalid_argument);
  CHECK_THROWS_AS(((void)orch::memory_cost{}(-5)), orch::invalid_argument);
  CHECK_THROWS_AS(((void)orch::linear_cost{-1, 0}(5)), orch::invalid_argument);
  CHECK_THROWS_AS(((void)orch::attention_cost{1, -1, 0}(5)), orch::invalid_argument);
}

TEST_CASE("linear_cost overflow is reported") {
  const orch::linear_cost steep{orch::cost_t{1} << 40, 0};
  CHECK_THROWS_AS((void)steep(orch::length_t{1} << 30), orch::overflow);
  CHECK_THROWS_AS(((void)orch::linear_cost{1, orch::max_cost}(1)), orch::overflow);
}

TEST_CASE("compute_costs names the offending item") {
  const std::vector<orch::length_t> lengths{4, 8, -3, 2};
  try {
    (void)orch::compute_costs(orch::linear_cost{}, lengths);
    FAIL("expected orch::invalid_argument");
  } catch (const orch::invalid_argument& e) {
    const std::string what = e.what();
    CHECK(what.find("item 2") != std::string::npos);
    CHECK(what.find("-3") != std::string::npos);
  }
  const std::vector<orch::length_t> huge{1, orch::length_t{1} << 33};
  try {
    (void)orch::compute_costs(orch::attention_cost{0, 1, 0}, huge);
    FAIL("expected orch::overflow");
  } catch (const orch::overflow& e) {
    CHECK(std::string(e.what()).find("item 1") != std::string::npos);
  }
  const std::vector<orch::length_t> ok{1, 2, 3};
  CHECK(orch::compute_costs(orch::attention_cost{1, 1, 0}, ok) ==
        std::vector<orch::cost_t>{2, 6, 12});
  CHECK(orch::compute_costs(orch::linear_cost{}, std::vector<orch::length_t>{}).empty());
}

TEST_CASE("orch errors are catchable as orch::error and as standard exceptions") {
  CHECK_THROWS_AS(orch::throw_invalid_argument("x"), std::invalid_argument);
  CHECK_THROWS_AS(orch::throw_infeasible("x"), std::runtime_error);
  CHECK_THROWS_AS(orch::throw_overflow("x"), std::overflow_error);
  try {
    orch::throw_infeasible("capacity ", 5, " below item of cost ", 9);
  } catch (const orch::error& e) {
    CHECK(std::string(e.what()) == "capacity 5 below item of cost 9");
  }
  CHECK(orch::version == ORCH_VERSION);
}

TEST_CASE("attention_cost: lengths near 2^63 report overflow without wrapping 128 bits") {
  // (quadratic · l) · l passes 2^127 here; the fuzzer found the wrap (fuzz/corpus/orchestrate/
  // crash-quadratic-length-near-2p63.bin).
  const orch::length_t huge = std::numeric_limits<orch::length_t>::max();
  CHECK_THROWS_AS(static_cast<void>(orch::attention_cost{1, 1, 0}(huge)), orch::overflow);
  CHECK_THROWS_AS(static_cast<void>(orch::attention_cost{0, 1, 0}(orch::length_t{1} << 62)),
                  orch::overflow);
  CHECK(orch::attention_cost{2, 3, 5}(1000) == 3'002'005);
  CHECK(orch::attention_cost{1, 1, 0}(3'037'000'499) == 9'223'372'033'963'249'500);
}
