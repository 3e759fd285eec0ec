// SPDX-License-Identifier: Apache-2.0
/// Work budgets: how long a search may run, counted in work units rather than wall-clock time.
#pragma once

#include <orch/config.hpp>

#include <chrono>
#include <cstdint>

namespace orch {

/// A search budget counted in work units (one unit: one search node, one evaluated local
/// move, one differencing step). Every rank that runs the same search with the same budget
/// stops at the same point and so returns the same plan; a clock could not promise that.
/// An optional wall-clock limit exists for offline use only (benchmarks, instance files): it
/// makes results depend on machine speed, so it is off unless asked for.
class work_meter {
public:
  /// `limit` work units (≤ 0: nothing may be spent); `time_limit_ms` > 0 adds a clock limit.
  explicit work_meter(std::int64_t limit, double time_limit_ms = 0) : limit_(limit) {
    if (time_limit_ms > 0) {
      timed_ = true;
      deadline_ = std::chrono::steady_clock::now() +
                  std::chrono::duration_cast<std::chrono::steady_clock::duration>(
                      std::chrono::duration<double, std::milli>(time_limit_ms));
    }
  }

  /// Spends `units`; false once the budget (or the opt-in clock) is exhausted.
  /// Complexity: O(1); reads the clock at most once per 4096 units.
  bool spend(std::int64_t units = 1) noexcept {
    used_ += units;
    if (used_ > limit_) {
      exhausted_ = true;
    } else if (timed_ && used_ >= next_clock_check_) {
      next_clock_check_ = used_ + 4096;
      if (std::chrono::steady_clock::now() >= deadline_) {
        exhausted_ = true;
      }
    }
    return !exhausted_;
  }

  /// Whether the budget is spent (further spend() calls keep returning false).
  [[nodiscard]] bool exhausted() const noexcept { return exhausted_; }
  /// Units spent so far (may exceed the limit by the last spend).
  [[nodiscard]] std::int64_t used() const noexcept { return used_; }
  /// Units left (0 when exhausted).
  [[nodiscard]] std::int64_t left() const noexcept {
    return exhausted_ || used_ >= limit_ ? 0 : limit_ - used_;
  }
  [[nodiscard]] std::int64_t limit() const noexcept { return limit_; }

  /// A sub-budget of at most `units` drawn from this one; give it back with absorb().
  [[nodiscard]] work_meter slice(std::int64_t units) const {
    work_meter sub(units < left() ? units : left());
    sub.timed_ = timed_;
    sub.deadline_ = deadline_;
    sub.exhausted_ = exhausted_;
    return sub;
  }

  /// Charges what a slice spent to this meter (and inherits a clock timeout).
  void absorb(const work_meter& sub) noexcept {
    const bool clock_out = sub.exhausted_ && sub.used_ <= sub.limit_;
    spend(sub.used_);
    if (clock_out && timed_) {
      exhausted_ = true;
    }
  }

private:
  std::int64_t limit_ = 0;
  std::int64_t used_ = 0;
  std::int64_t next_clock_check_ = 0;
  bool exhausted_ = false;
  bool timed_ = false;
  std::chrono::steady_clock::time_point deadline_{};
};

} // namespace orch
