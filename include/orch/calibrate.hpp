// SPDX-License-Identifier: Apache-2.0
/// Cost-model calibration: fits a·Σl + b·Σl² (+ c·items) to measured batch times by
/// non-negative least squares (Eigen) and rounds the fit to integer cost units.
#pragma once

#include <orch/config.hpp>
#include <orch/cost.hpp>
#include <orch/types.hpp>

#include <Eigen/Dense>

#include <algorithm>
#include <cmath>
#include <cstddef>
#include <limits>
#include <span>
#include <vector>

namespace orch {

/// One measured batch of a phase: the input lengths of the items it processed and the time
/// it took (any time unit; seconds in orch-bench).
struct calibration_sample {
  std::vector<length_t> lengths;
  double time = 0.0;
};

/// What calibrate_attention_cost fits.
struct calibration_options {
  /// Fit a per-item term c (launch overhead, padding to a tile) besides a and b.
  bool fit_per_item = true;
};

/// A fitted per-phase cost model in time units: time(batch) ≈ linear·Σl + quadratic·Σl² +
/// per_item·|batch|, every coefficient non-negative, and the quality of the fit.
struct calibration_fit {
  double linear = 0.0;    ///< time per length unit (projections, MLP)
  double quadratic = 0.0; ///< time per squared length unit (attention scores)
  double per_item = 0.0;  ///< time per item (0 when not fitted)
  double r_squared = 0.0; ///< 1 − SS_res / SS_tot (1 when both are 0, 0 when only SS_tot is)
  std::vector<double> residuals; ///< measured − predicted, per sample in input order
  double rms_residual = 0.0;     ///< sqrt(mean residual²)
  double max_abs_residual = 0.0; ///< the largest |residual|

  /// The modelled time of a batch with these item lengths.
  /// Complexity: O(n).
  [[nodiscard]] double predict(std::span<const length_t> lengths) const noexcept {
    double t = 0.0;
    for (const length_t l : lengths) {
      const auto x = static_cast<double>(l);
      t += linear * x + quadratic * x * x + per_item;
    }
    return t;
  }
};

namespace detail {

/// Non-negative least squares min ‖A·x − b‖₂ subject to x ≥ 0, by the Lawson–Hanson active-set
/// method. Columns are scaled to unit norm first (Σl and Σl² differ by orders of magnitude);
/// a zero column gets x = 0.
/// Complexity: at most 3·n outer iterations, each a QR solve of an m × |P| system.
/// Guarantee: returns the exact NNLS minimiser up to floating-point rounding (Lawson–Hanson
/// terminates finitely; the iteration cap is never reached in exact arithmetic).
[[nodiscard]] inline Eigen::VectorXd nnls(const Eigen::MatrixXd& a, const Eigen::VectorXd& b) {
  const Eigen::Index n = a.cols();
  Eigen::VectorXd scale = Eigen::VectorXd::Zero(n);
  Eigen::MatrixXd as = a;
  for (Eigen::Index j = 0; j < n; ++j) {
    const double norm = a.col(j).norm();
    if (norm > 0.0) {
      scale(j) = 1.0 / norm;
      as.col(j) *= scale(j);
    }
  }
  Eigen::VectorXd x = Eigen::VectorXd::Zero(n);
  std::vector<bool> passive(static_cast<std::size_t>(n), false);
  const double tol =
      1e-12 * std::max(1.0, b.norm()) * static_cast<double>(std::max<Eigen::Index>(n, 1));

  // Unconstrained least squares on the passive columns; others stay 0.
  const auto solve_passive = [&] {
    std::vector<Eigen::Index> cols;
    for (Eigen::Index j = 0; j < n; ++j) {
      if (passive[static_cast<std::size_t>(j)]) {
        cols.push_back(j);
      }
    }
    Eigen::MatrixXd sub(as.rows(), static_cast<Eigen::Index>(cols.size()));
    for (std::size_t k = 0; k < cols.size(); ++k) {
      sub.col(static_cast<Eigen::Index>(k)) = as.col(cols[k]);
    }
    const Eigen::VectorXd s = sub.colPivHouseholderQr().solve(b);
    Eigen::VectorXd full = Eigen::VectorXd::Zero(n);
    for (std::size_t k = 0; k < cols.size(); ++k) {
      full(cols[k]) = s(static_cast<Eigen::Index>(k));
    }
    return full;
  };

  for (Eigen::Index outer = 0; outer < 3 * n + 3; ++outer) {
    const Eigen::VectorXd w = as.transpose() * (b - as * x);
    Eigen::Index best = -1;
    for (Eigen::Index j = 0; j < n; ++j) {
      const bool usable = !passive[static_cast<std::size_t>(j)] && scale(j) > 0.0;
      if (usable && w(j) > tol && (best < 0 || w(j) > w(best))) {
        best = j;
      }
    }
    if (best < 0) {
      break; // KKT: every active-set gradient is ≤ 0, x is optimal
    }
    passive[static_cast<std::size_t>(best)] = true;
    for (Eigen::Index inner = 0; inner <= n; ++inner) {
      const Eigen::VectorXd s = solve_passive();
      double alpha = 1.0;
      bool feasible = true;
      for (Eigen::Index j = 0; j < n; ++j) {
        if (passive[static_cast<std::size_t>(j)] && s(j) <= 0.0) {
          feasible = false;
          const double denom = x(j) - s(j);
          if (denom > 0.0) {
            alpha = std::min(alpha, x(j) / denom);
          }
        }
      }
      if (feasible) {
        x = s;
        break;
      }
      // Step towards s until the first passive variable hits 0, then release those at 0.
      x += alpha * (s - x);
      for (Eigen::Index j = 0; j < n; ++j) {
        if (passive[static_cast<std::size_t>(j)] && x(j) <= tol * 1e-3) {
          passive[static_cast<std::size_t>(j)] = false;
          x(j) = 0.0;
        }
      }
    }
  }
  return x.cwiseProduct(scale);
}

} // namespace detail

/// Fits time(batch) ≈ a·Σl + b·Σl² (+ c·|batch|) with a, b, c ≥ 0 to measured batches by
/// non-negative least squares, and reports R² and the residuals.
/// Complexity: O(Σ batch sizes + samples · terms²).
/// Guarantee: the coefficients minimise the sum of squared residuals over all non-negative
/// coefficient vectors (see detail::nnls).
/// Throws: orch::invalid_argument for no samples, fewer samples than fitted terms, a negative
/// length, or a time that is negative or not finite (naming the sample).
[[nodiscard]] inline calibration_fit
calibrate_attention_cost(std::span<const calibration_sample> samples,
                         const calibration_options& options = {}) {
  const Eigen::Index terms = options.fit_per_item ? 3 : 2;
  if (static_cast<Eigen::Index>(samples.size()) < terms) {
    throw_invalid_argument("calibrate_attention_cost: ", samples.size(), " samples, need at least ",
                           terms, " (one per fitted term)");
  }
  const auto m = static_cast<Eigen::Index>(samples.size());
  Eigen::MatrixXd a(m, terms);
  Eigen::VectorXd y(m);
  for (Eigen::Index i = 0; i < m; ++i) {
    const auto& s = samples[static_cast<std::size_t>(i)];
    if (!std::isfinite(s.time) || s.time < 0.0) {
      throw_invalid_argument("calibrate_attention_cost: sample ", i, " has time ", s.time,
                             " (must be finite and non-negative)");
    }
    double sum = 0.0;
    double sum_sq = 0.0;
    for (std::size_t k = 0; k < s.lengths.size(); ++k) {
      if (s.lengths[k] < 0) {
        throw_invalid_argument("calibrate_attention_cost: sample ", i, " item ", k,
                               " has negative length ", s.lengths[k]);
      }
      const auto l = static_cast<double>(s.lengths[k]);
      sum += l;
      sum_sq += l * l;
    }
    a(i, 0) = sum;
    a(i, 1) = sum_sq;
    if (options.fit_per_item) {
      a(i, 2) = static_cast<double>(s.lengths.size());
    }
    y(i) = s.time;
  }
  const Eigen::VectorXd x = detail::nnls(a, y);
  calibration_fit fit;
  fit.linear = x(0);
  fit.quadratic = x(1);
  fit.per_item = options.fit_per_item ? x(2) : 0.0;
  const Eigen::VectorXd r = y - a * x;
  fit.residuals.assign(r.data(), r.data() + r.size());
  const double ss_res = r.squaredNorm();
  const double ss_tot = (y.array() - y.mean()).matrix().squaredNorm();
  fit.r_squared = ss_tot > 0.0 ? 1.0 - ss_res / ss_tot : (ss_res > 0.0 ? 0.0 : 1.0);
  fit.rms_residual = std::sqrt(ss_res / static_cast<double>(m));
  fit.max_abs_residual = r.cwiseAbs().maxCoeff();
  return fit;
}

/// Rounds a fit to integer cost units of `time_per_unit` each (the time one cost unit
/// stands for): coefficient = round(fitted time / time_per_unit). A coefficient smaller than
/// half a unit becomes 0, so pick the unit small enough for the quadratic term.
/// Complexity: O(1).
/// Throws: orch::invalid_argument when time_per_unit is not positive and finite;
/// orch::overflow when a coefficient does not fit in cost_t.
[[nodiscard]] inline attention_cost to_cost_units(const calibration_fit& fit,
                                                  double time_per_unit) {
  if (!(time_per_unit > 0.0) || !std::isfinite(time_per_unit)) {
    throw_invalid_argument("to_cost_units: time per cost unit ", time_per_unit,
                           " must be positive and finite");
  }
  const auto round = [&](double coefficient, const char* name) {
    const double units = std::round(coefficient / time_per_unit);
    // 2^63 is exactly representable; anything at or above it does not fit.
    if (!(units < 9223372036854775808.0)) {
      throw_overflow("to_cost_units: coefficient ", name, " = ", coefficient, " is ", units,
                     " units at ", time_per_unit, " per unit, above 2^63 - 1");
    }
    return static_cast<cost_t>(std::max(0.0, units));
  };
  return attention_cost{round(fit.linear, "linear"), round(fit.quadratic, "quadratic"),
                        round(fit.per_item, "per_item")};
}

} // namespace orch
