// SPDX-License-Identifier: Apache-2.0
#include <orch/partition/budget.hpp>

#include <doctest/doctest.h>

TEST_CASE("work_meter: counts units and stops exactly at the limit") {
  orch::work_meter m(10);
  CHECK(m.left() == 10);
  CHECK(m.spend(4));
  CHECK(m.spend(6)); // exactly at the limit is still within it
  CHECK_FALSE(m.exhausted());
  CHECK(m.left() == 0);
  CHECK_FALSE(m.spend());
  CHECK(m.exhausted());
  CHECK_FALSE(m.spend()); // stays exhausted
  CHECK(m.used() == 12);
}

TEST_CASE("work_meter: slices draw from the parent and are charged back") {
  orch::work_meter m(100);
  CHECK(m.spend(30));
  auto s = m.slice(50);
  CHECK(s.left() == 50);
  CHECK(s.spend(20));
  m.absorb(s);
  CHECK(m.used() == 50);
  auto big = m.slice(1000); // never more than the parent has left
  CHECK(big.left() == 50);
  orch::work_meter none(0);
  CHECK_FALSE(none.spend());
}

TEST_CASE("work_meter: the opt-in clock stops a search") {
  orch::work_meter m(INT64_MAX, 1e-6); // a deadline already in the past
  bool stopped = false;
  for (int i = 0; i < 100000 && !stopped; ++i) {
    stopped = !m.spend();
  }
  CHECK(stopped);
}
