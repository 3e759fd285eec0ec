// SPDX-License-Identifier: Apache-2.0
#include <orch/partition/lpt_speeds.hpp>

#include <support/generators.hpp>

#include <doctest/doctest.h>

#include <algorithm>
#include <cstdint>
#include <vector>

using orch::cost_t;
using orch::rank_t;

namespace {

/// A time L / s as an exact fraction.
struct frac {
  cost_t num;
  cost_t den;
};

bool less(frac a, frac b) {
  return static_cast<orch::detail::int128>(a.num) * b.den <
         static_cast<orch::detail::int128>(b.num) * a.den;
}

/// Largest load / speed of an assignment.
frac max_time(const std::vector<cost_t>& c, const std::vector<rank_t>& bin_of,
              const std::vector<cost_t>& speeds) {
  std::vector<cost_t> load(speeds.size(), 0);
  for (std::size_t i = 0; i < c.size(); ++i) {
    load[static_cast<std::size_t>(bin_of[i])] += c[i];
  }
  frac worst{0, 1};
  for (std::size_t b = 0; b < speeds.size(); ++b) {
    if (less(worst, frac{load[b], speeds[b]})) {
      worst = {load[b], speeds[b]};
    }
  }
  return worst;
}

/// Q||Cmax optimum by enumerating every assignment (n ≤ 8, k ≤ 3).
frac brute_force(const std::vector<cost_t>& c, const std::vector<cost_t>& speeds) {
  const std::size_t k = speeds.size();
  std::vector<rank_t> a(c.size(), 0);
  frac best{-1, 1};
  for (;;) {
    const frac t = max_time(c, a, speeds);
    if (best.num < 0 || less(t, best)) {
      best = t;
    }
    std::size_t i = 0;
    while (i < a.size() && static_cast<std::size_t>(++a[i]) == k) {
      a[i++] = 0;
    }
    if (i == a.size()) {
      return best;
    }
  }
}

} // namespace

TEST_CASE("lpt_speeds: within 2 − 2/(k+1) of the brute-force optimum; bound and proof valid") {
  for (std::uint64_t seed = 1; seed <= 300; ++seed) {
    std::mt19937_64 rng(seed);
    const auto n = static_cast<std::size_t>(orch::test::uniform_int(rng, 0, 8));
    const auto k = static_cast<std::size_t>(orch::test::uniform_int(rng, 1, 3));
    const auto c = orch::test::uniform_costs(seed, n, 0, 100);
    const auto speeds = orch::test::uniform_costs(seed + 500, k, 1, 4);
    CAPTURE(seed);
    const auto r = orch::lpt_speeds(c, speeds);
    REQUIRE(r.bin_of.size() == n);
    const frac t = max_time(c, r.bin_of, speeds);
    const frac opt = brute_force(c, speeds);
    CHECK(!less(t, opt));
    // t ≤ (2 − 2/(k+1))·opt  ⇔  t·(k+1) ≤ 2k·opt.
    const auto kk = static_cast<cost_t>(k);
    CHECK_FALSE(less(frac{2 * kk * opt.num, opt.den}, frac{(kk + 1) * t.num, t.den}));
    CHECK(r.max_time == doctest::Approx(static_cast<double>(t.num) / static_cast<double>(t.den)));
    CHECK(r.time_lower_bound <= static_cast<double>(opt.num) / static_cast<double>(opt.den) + 1e-9);
    if (r.proven_optimal) {
      CHECK_FALSE(less(opt, t));
    }
  }
}

TEST_CASE("lpt_speeds: equal speeds are plain LPT; a slow rank gets less work") {
  const auto c = orch::test::uniform_costs(3, 200, 1, 1000);
  const std::vector<cost_t> same(8, 3);
  CHECK(orch::lpt_speeds(c, same).bin_of == orch::lpt(c, 8).bin_of);
  std::vector<cost_t> speeds(8, 2);
  speeds[5] = 1; // a straggler at half speed
  const auto r = orch::lpt_speeds(c, speeds);
  CHECK(r.loads[5] * 3 < r.loads[0] * 2); // about half of a full-speed rank's load
  CHECK(r.max_time >= r.time_lower_bound);
  CHECK(r.max_time <= r.time_lower_bound * 1.05);
}

TEST_CASE("lpt_speeds: bad speeds throw") {
  const std::vector<cost_t> c{1, 2};
  CHECK_THROWS_AS((void)orch::lpt_speeds(c, std::vector<cost_t>{}), orch::invalid_argument);
  CHECK_THROWS_AS((void)orch::lpt_speeds(c, std::vector<cost_t>{1, 0}), orch::invalid_argument);
  CHECK_THROWS_AS((void)orch::lpt_speeds(c, std::vector<cost_t>{1, -2}), orch::invalid_argument);
  const std::vector<cost_t> huge{orch::max_cost, orch::max_cost};
  CHECK_THROWS_AS((void)orch::lpt_speeds(c, huge), orch::overflow);
}
