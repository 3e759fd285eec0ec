// SPDX-License-Identifier: Apache-2.0
// orch/calibrate.hpp: non-negative least squares and the cost-model fit on synthetic timings
// with known coefficients and noise.
#include <orch/calibrate.hpp>

#include <support/generators.hpp>

#include <doctest/doctest.h>

#include <cmath>
#include <cstdint>
#include <random>
#include <vector>

namespace {

// Batches of 1–16 items with lognormal lengths, timed as a·Σl + b·Σl² + c·n, times
// (1 + noise·N(0,1)).
std::vector<orch::calibration_sample> synthetic(std::uint64_t seed, std::size_t batches, double a,
                                                double b, double c, double noise) {
  std::mt19937_64 rng(seed);
  std::vector<orch::calibration_sample> out(batches);
  for (auto& s : out) {
    const auto n = orch::test::uniform_int(rng, 1, 16);
    double t = 0.0;
    for (std::int64_t i = 0; i < n; ++i) {
      const auto l =
          std::max<orch::length_t>(1, std::llround(std::exp(6.5 + 1.0 * orch::test::normal(rng))));
      s.lengths.push_back(l);
      const auto x = static_cast<double>(l);
      t += a * x + b * x * x + c;
    }
    s.time = t * (1.0 + noise * orch::test::normal(rng));
  }
  return out;
}

// Brute-force NNLS for tiny problems: the best least-squares solution over every support set
// whose solution is non-negative.
Eigen::VectorXd nnls_brute_force(const Eigen::MatrixXd& a, const Eigen::VectorXd& b) {
  const auto n = a.cols();
  Eigen::VectorXd best = Eigen::VectorXd::Zero(n);
  double best_res = b.squaredNorm();
  for (unsigned mask = 1; mask < (1U << n); ++mask) {
    std::vector<Eigen::Index> cols;
    for (Eigen::Index j = 0; j < n; ++j) {
      if ((mask >> j) & 1U) {
        cols.push_back(j);
      }
    }
    Eigen::MatrixXd sub(a.rows(), static_cast<Eigen::Index>(cols.size()));
    for (std::size_t k = 0; k < cols.size(); ++k) {
      sub.col(static_cast<Eigen::Index>(k)) = a.col(cols[k]);
    }
    const Eigen::VectorXd s = sub.colPivHouseholderQr().solve(b);
    if ((s.array() < 0.0).any()) {
      continue;
    }
    Eigen::VectorXd x = Eigen::VectorXd::Zero(n);
    for (std::size_t k = 0; k < cols.size(); ++k) {
      x(cols[k]) = s(static_cast<Eigen::Index>(k));
    }
    const double res = (a * x - b).squaredNorm();
    if (res < best_res) {
      best_res = res;
      best = x;
    }
  }
  return best;
}

} // namespace

TEST_CASE("nnls matches brute force on random small problems") {
  for (std::uint64_t seed = 1; seed <= 200; ++seed) {
    CAPTURE(seed);
    std::mt19937_64 rng(seed);
    const auto m = orch::test::uniform_int(rng, 3, 8);
    const auto n = orch::test::uniform_int(rng, 1, 4);
    Eigen::MatrixXd a(m, n);
    Eigen::VectorXd b(m);
    for (Eigen::Index i = 0; i < m; ++i) {
      for (Eigen::Index j = 0; j < n; ++j) {
        a(i, j) = orch::test::normal(rng);
      }
      b(i) = orch::test::normal(rng);
    }
    const Eigen::VectorXd x = orch::detail::nnls(a, b);
    const Eigen::VectorXd ref = nnls_brute_force(a, b);
    CHECK((x.array() >= 0.0).all());
    CHECK((a * x - b).squaredNorm() == doctest::Approx((a * ref - b).squaredNorm()).epsilon(1e-9));
  }
}

TEST_CASE("exact synthetic timings recover the coefficients") {
  const double a = 2.5e-9;
  const double b = 1.2e-12;
  const double c = 3e-5;
  const auto samples = synthetic(11, 60, a, b, c, 0.0);
  const auto fit = orch::calibrate_attention_cost(samples);
  CHECK(fit.linear == doctest::Approx(a).epsilon(1e-6));
  CHECK(fit.quadratic == doctest::Approx(b).epsilon(1e-6));
  CHECK(fit.per_item == doctest::Approx(c).epsilon(1e-6));
  CHECK(fit.r_squared == doctest::Approx(1.0).epsilon(1e-12));
  CHECK(fit.max_abs_residual < 1e-12);
  REQUIRE(fit.residuals.size() == samples.size());
  CHECK(fit.predict(samples[0].lengths) == doctest::Approx(samples[0].time));
}

TEST_CASE("noisy synthetic timings: coefficients within a few percent, R² reported") {
  for (const std::uint64_t seed : {1U, 2U, 3U}) {
    CAPTURE(seed);
    const double a = 1.3e-9;
    const double b = 1.6e-13;
    const double c = 2e-5;
    const auto samples = synthetic(seed, 400, a, b, c, 0.02);
    const auto fit = orch::calibrate_attention_cost(samples);
    CHECK(fit.linear == doctest::Approx(a).epsilon(0.05));
    CHECK(fit.quadratic == doctest::Approx(b).epsilon(0.05));
    CHECK(fit.r_squared > 0.99);
    CHECK(fit.r_squared < 1.0);
    double ss = 0.0;
    for (const double r : fit.residuals) {
      ss += r * r;
    }
    CHECK(fit.rms_residual == doctest::Approx(std::sqrt(ss / 400.0)));
  }
}

TEST_CASE("a negative true coefficient is clamped to 0, not fitted negative") {
  // Time falls with the per-item count (a negative c): NNLS must return c = 0 and refit a, b.
  const auto samples = synthetic(5, 100, 2e-9, 1e-12, -2e-8, 0.0);
  const auto fit = orch::calibrate_attention_cost(samples);
  CHECK(fit.per_item == 0.0);
  CHECK(fit.linear >= 0.0);
  CHECK(fit.quadratic >= 0.0);
  CHECK(fit.r_squared > 0.9);
  // Without the per-item term the fit is the same two-term problem.
  const auto two = orch::calibrate_attention_cost(samples, {false});
  CHECK(two.per_item == 0.0);
  CHECK(two.linear == doctest::Approx(fit.linear).epsilon(1e-6));
}

TEST_CASE("rounding to integer cost units at a scale") {
  orch::calibration_fit fit;
  fit.linear = 2.5e-9;
  fit.quadratic = 1.2e-12;
  fit.per_item = 3e-5;
  const auto c = orch::to_cost_units(fit, 1e-12); // 1 unit = 1 ps
  CHECK(c.linear == 2500);
  CHECK(c.quadratic == 1);
  CHECK(c.per_item == 30'000'000);
  const auto coarse = orch::to_cost_units(fit, 1e-9);
  CHECK(coarse.linear == 3); // 2.5 rounds half away from zero
  CHECK(coarse.quadratic == 0);
  CHECK_THROWS_AS((void)orch::to_cost_units(fit, 0.0), orch::invalid_argument);
  CHECK_THROWS_AS((void)orch::to_cost_units(fit, 1e-30), orch::overflow);
}

TEST_CASE("bad samples are rejected naming the sample") {
  std::vector<orch::calibration_sample> s{{{1, 2}, 1.0}, {{3}, 2.0}};
  CHECK_THROWS_AS((void)orch::calibrate_attention_cost(s), orch::invalid_argument); // 2 < 3
  s.push_back({{4}, -1.0});
  try {
    (void)orch::calibrate_attention_cost(s);
    FAIL("expected throw");
  } catch (const orch::invalid_argument& e) {
    CHECK(std::string(e.what()).find("sample 2") != std::string::npos);
  }
  s[2] = {{-4}, 1.0};
  CHECK_THROWS_AS((void)orch::calibrate_attention_cost(s), orch::invalid_argument);
  s[2] = {{4}, std::nan("")};
  CHECK_THROWS_AS((void)orch::calibrate_attention_cost(s), orch::invalid_argument);
}
