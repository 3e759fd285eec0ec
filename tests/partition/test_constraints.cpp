// SPDX-License-Identifier: Apache-2.0
#include <orch/partition/constrained_lpt.hpp>
#include <orch/partition/constraints.hpp>

#include <support/generators.hpp>
#include <support/partition_checks.hpp>

#include <doctest/doctest.h>

#include <algorithm>
#include <cstdint>
#include <string>
#include <vector>

using orch::cost_t;
using orch::index_t;
using orch::rank_t;

namespace {

/// Runs f, expects orch::infeasible (or invalid_argument when `invalid`), and returns what().
template <class F>
std::string message_of(F&& f, bool invalid = false) {
  try {
    f();
  } catch (const orch::infeasible& e) {
    CHECK_FALSE(invalid);
    return e.what();
  } catch (const orch::invalid_argument& e) {
    CHECK(invalid);
    return e.what();
  }
  FAIL("expected an orch::error");
  return {};
}

bool contains(const std::string& s, const std::string& part) {
  return s.find(part) != std::string::npos;
}

std::vector<index_t> counts_of(const std::vector<rank_t>& bin_of, rank_t bins) {
  std::vector<index_t> n(static_cast<std::size_t>(bins), 0);
  for (const auto b : bin_of) {
    ++n[static_cast<std::size_t>(b)];
  }
  return n;
}

} // namespace

TEST_CASE("constrained_lpt: max items per bin, equal counts, second resource") {
  for (std::uint64_t seed = 1; seed <= 80; ++seed) {
    std::mt19937_64 rng(seed);
    const auto k = static_cast<rank_t>(orch::test::uniform_int(rng, 1, 12));
    const auto n = static_cast<std::size_t>(orch::test::uniform_int(rng, 0, 100));
    const auto c = orch::test::uniform_costs(seed, n, 0, 5000);
    const auto mem = orch::test::uniform_costs(seed + 99, n, 0, 50);
    CAPTURE(seed);
    orch::bin_constraints cap;
    cap.max_items_per_bin =
        static_cast<index_t>((n + static_cast<std::size_t>(k) - 1) / static_cast<std::size_t>(k)) +
        1;
    const auto a = orch::constrained_lpt(c, k, cap);
    orch::test::check_partition_invariants(c, k, a);
    for (const auto cnt : counts_of(a.bin_of, k)) {
      CHECK(cnt <= cap.max_items_per_bin);
    }
    orch::bin_constraints eq;
    eq.equal_counts = true;
    const auto b = orch::constrained_lpt(c, k, eq);
    orch::test::check_partition_invariants(c, k, b);
    const auto cb = counts_of(b.bin_of, k);
    CHECK(*std::max_element(cb.begin(), cb.end()) - *std::min_element(cb.begin(), cb.end()) <= 1);
    orch::bin_constraints res;
    res.second_resource = mem;
    cost_t total_mem = 0;
    for (const auto m : mem) {
      total_mem += m;
    }
    res.second_capacity = std::max<cost_t>(50, total_mem / k + 60);
    const auto r = orch::constrained_lpt(c, k, res);
    orch::test::check_partition_invariants(c, k, r);
    std::vector<cost_t> used(static_cast<std::size_t>(k), 0);
    for (std::size_t i = 0; i < n; ++i) {
      used[static_cast<std::size_t>(r.bin_of[i])] += mem[i];
    }
    for (const auto u : used) {
      CHECK(u <= res.second_capacity);
    }
  }
}

TEST_CASE("constraints: infeasible limits throw orch::infeasible naming the limit") {
  const std::vector<cost_t> c{5, 4, 3, 2, 1, 1, 1};
  orch::bin_constraints cap;
  cap.max_items_per_bin = 2;
  auto m = message_of([&] { (void)orch::constrained_lpt(c, 3, cap); });
  CHECK(contains(m, "max_items_per_bin = 2"));
  CHECK(contains(m, "constrained_lpt"));
  orch::bin_constraints eq;
  eq.equal_counts = true;
  eq.max_items_per_bin = 2; // 7 items in 3 bins need 3 in one bin, with or without equal counts
  m = message_of([&] { (void)orch::constrained_lpt(c, 3, eq); });
  CHECK(contains(m, "7 items do not fit in 3 bins"));
  CHECK(contains(m, "max_items_per_bin = 2"));
  const std::vector<cost_t> mem{1, 1, 9, 1, 1, 1, 1};
  orch::bin_constraints res;
  res.second_resource = mem;
  res.second_capacity = 8;
  m = message_of([&] { (void)orch::constrained_lpt(c, 3, res); });
  CHECK(contains(m, "item 2"));
  CHECK(contains(m, "second_capacity = 8"));
  const std::vector<cost_t> heavy(7, 5);
  res.second_resource = heavy;
  m = message_of([&] { (void)orch::constrained_lpt(c, 3, res); });
  CHECK(contains(m, "second_capacity = 8"));
  // Large totals print as integers (a floating cast printed 4.2e+07).
  const std::vector<cost_t> huge(7, 6'000'000);
  res.second_resource = huge;
  res.second_capacity = 10'000'000;
  m = message_of([&] { (void)orch::constrained_lpt(c, 3, res); });
  CHECK(contains(m, "the items need 42000000 of the second resource in total, above 3 bins × "
                    "second_capacity = 10000000"));
}

TEST_CASE("constraints: malformed ones are invalid arguments") {
  const std::vector<cost_t> c{1, 2, 3};
  orch::bin_constraints bad;
  bad.max_items_per_bin = -1;
  CHECK(contains(message_of([&] { (void)orch::constrained_lpt(c, 2, bad); }, true),
                 "max_items_per_bin"));
  orch::bin_constraints size;
  const std::vector<cost_t> two{1, 1};
  size.second_resource = two;
  size.second_capacity = 4;
  CHECK(contains(message_of([&] { (void)orch::constrained_lpt(c, 2, size); }, true),
                 "second_resource has 2 entries"));
  orch::bin_constraints nocap;
  const std::vector<cost_t> three{1, 1, 1};
  nocap.second_resource = three;
  CHECK(contains(message_of([&] { (void)orch::constrained_lpt(c, 2, nocap); }, true),
                 "second_capacity"));
  orch::bin_constraints orphan;
  orphan.second_capacity = 3;
  CHECK(contains(message_of([&] { (void)orch::constrained_lpt(c, 2, orphan); }, true),
                 "without second_resource"));
  const std::vector<cost_t> neg{1, -1, 1};
  orch::bin_constraints negres;
  negres.second_resource = neg;
  negres.second_capacity = 3;
  CHECK(contains(message_of([&] { (void)orch::constrained_lpt(c, 2, negres); }, true), "item 1"));
}

TEST_CASE("constraints: a tight second resource needs the first-fit retry") {
  // Two bins of resource capacity 10; (cost, resource): A(10,3) B(9,3) C(8,5) D(1,5) E(1,4).
  // By cost: A, B, C, D go to the least loaded bins (resource 3+5, 3+5), and E (4) fits
  // nowhere. By resource, least loaded: C, D, E, A and then B fits nowhere. First fit on the
  // resource packs {C, D} and {E, A, B}, exactly 10 each.
  const std::vector<cost_t> c{10, 9, 8, 1, 1};
  const std::vector<cost_t> mem{3, 3, 5, 5, 4};
  orch::bin_constraints res;
  res.second_resource = mem;
  res.second_capacity = 10;
  const auto r = orch::constrained_lpt(c, 2, res);
  orch::test::check_partition_invariants(c, 2, r);
  std::vector<cost_t> used(2, 0);
  for (std::size_t i = 0; i < c.size(); ++i) {
    used[static_cast<std::size_t>(r.bin_of[i])] += mem[i];
  }
  CHECK(used[0] == 10);
  CHECK(used[1] == 10);
}

TEST_CASE("cardinality_bound and speed_time_bound") {
  const std::vector<cost_t> sorted{10, 5, 4, 3, 2, 1};
  CHECK(orch::detail::cardinality_bound(sorted, 3) == 10 + 1 + 2);
  CHECK(orch::detail::cardinality_bound(sorted, 1) == 0);
  const std::vector<cost_t> speeds{1, 3};
  // j = 1: 10 / 3; j = 2 (all): 25 / 4.
  const auto tb = orch::detail::speed_time_bound(sorted, speeds);
  CHECK(tb.num * 4 == 25 * tb.den);
}
