// SPDX-License-Identifier: Apache-2.0
// The seeded P||Cmax instance families of the quality study.
#include "pcmax_instances.hpp"

#include <orch/quality.hpp>

#include <doctest/doctest.h>

#include <algorithm>
#include <numeric>
#include <string>
#include <vector>

using orch::cost_t;

TEST_CASE("pcmax instances: reproducible, sized, within each family's range") {
  for (const auto& family : orch_bench::pcmax_families()) {
    const std::string name(family.name);
    CAPTURE(name);
    for (const orch::rank_t k : {3, 8, 17}) {
      for (const std::size_t per_x2 : {4U, 5U, 7U, 10U}) {
        const std::size_t n = per_x2 * static_cast<std::size_t>(k) / 2;
        const auto a = orch_bench::pcmax_costs(family.name, n, k, 42);
        CHECK(a.size() == n);
        CHECK(a == orch_bench::pcmax_costs(family.name, n, k, 42));
        CHECK(a != orch_bench::pcmax_costs(family.name, n, k, 43));
        const auto [lo, hi] = std::minmax_element(a.begin(), a.end());
        CHECK(*lo >= 1);
        if (name == "u100") {
          CHECK(*hi <= 100);
        } else if (name == "u20_100") {
          CHECK(*lo >= 20);
          CHECK(*hi <= 100);
        } else if (name == "u50_100") {
          CHECK(*lo >= 50);
          CHECK(*hi <= 100);
        } else if (name == "u100_800") {
          CHECK(*lo >= 100);
          CHECK(*hi <= 800);
        } else if (name == "nonuniform") {
          CHECK(*hi <= 1000);
          for (const auto c : a) {
            CHECK((c <= 200 || c >= 900));
          }
        } else if (family.optimum_known) {
          // k hidden bins of sum exactly 10^4: the plain bound is the optimum.
          CHECK(std::accumulate(a.begin(), a.end(), cost_t{0}) == 10000 * cost_t{k});
          CHECK(*hi <= 10000);
          CHECK(orch::lower_bound(a, k) == 10000);
        }
      }
    }
  }
}

TEST_CASE("pcmax instances: perfect_narrow items lie strictly between C/(r+1) and C/(r-1)") {
  const auto a = orch_bench::pcmax_costs("perfect_narrow", 30, 10, 7); // r = 3 per hidden bin
  for (const auto c : a) {
    CHECK(c * 4 > 10000);
    CHECK(c * 2 < 10000);
  }
}

TEST_CASE("pcmax instances: the study grid") {
  const std::vector<orch::rank_t> bins{4, 8};
  const std::vector<int> ratios{4, 5};
  const auto suite = orch_bench::pcmax_suite(1, 2, bins, ratios);
  CHECK(suite.size() == orch_bench::pcmax_families().size() * 2 * 2 * 2);
  for (const auto& inst : suite) {
    CHECK(inst.costs.size() == static_cast<std::size_t>(inst.items_per_bin_x2) *
                                   static_cast<std::size_t>(inst.bins) / 2);
  }
  // A sub-grid reproduces the same instances as the full grid.
  const std::vector<orch::rank_t> only8{8};
  const auto sub = orch_bench::pcmax_suite(1, 2, only8, ratios);
  for (const auto& s : sub) {
    const auto same = std::find_if(suite.begin(), suite.end(), [&](const auto& f) {
      return f.family == s.family && f.bins == s.bins && f.items_per_bin_x2 == s.items_per_bin_x2 &&
             f.replicate == s.replicate;
    });
    REQUIRE(same != suite.end());
    CHECK(same->costs == s.costs);
  }
  CHECK_THROWS_AS(static_cast<void>(orch_bench::pcmax_costs("nope", 4, 2, 1)),
                  std::invalid_argument);
}
