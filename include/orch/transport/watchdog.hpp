// SPDX-License-Identifier: Apache-2.0
/// The timeout / abort state machine of a transport: every wait polls the backend until it is
/// done or a deadline passes; a timeout or a backend failure aborts the transport first and
/// then throws, so that no rank hangs on a peer that died and no later call waits again.
#pragma once

#include <orch/config.hpp>
#include <orch/transport/errors.hpp>
#include <orch/types.hpp>

#include <algorithm>
#include <chrono>
#include <thread>

namespace orch::transport {

/// How a watchdog waits: the timeout of one wait, and the back-off between polls. The first
/// `spin_polls` polls follow each other with only a yield (a message that is about to complete
/// costs no sleep); after that the pause doubles from `min_pause` up to `max_pause`, so that
/// many ranks waiting on few cores (oversubscribed CI, a rank blocked on a dead peer) leave
/// the CPU to the ranks that still compute.
struct wait_options {
  std::chrono::milliseconds timeout{std::chrono::minutes(5)};
  int spin_polls = 64;
  std::chrono::microseconds min_pause{20};
  std::chrono::microseconds max_pause{1000};
};

/// What one poll of a backend found.
enum class poll_status {
  done,   ///< the awaited work has completed
  pending ///< not yet; poll again
};

/// The state of a transport of one rank:
///
///     usable ──wait(): poll → done──▶ usable
///        │
///        ├─ wait(): deadline passed ─▶ abort() ─▶ aborted, throws timeout_error
///        └─ wait(): poll throws     ─▶ abort() ─▶ aborted, rethrows the backend's error
///     aborted ──any wait() / check_usable()──▶ throws aborted_error (never waits)
///
/// `abort` is the backend's own abort (ncclCommAbort, MPI_Abort or freeing requests, ...) and
/// must not throw. Not thread-safe: one watchdog per transport, used by one thread.
/// `Clock` is a std::chrono clock (steady by default; tests pass a manual one).
template <class Clock = std::chrono::steady_clock>
class basic_watchdog {
public:
  /// A watchdog of `rank` with `options`.
  /// Throws: orch::invalid_argument (a negative timeout, spin count or pause, or
  /// min_pause > max_pause).
  explicit basic_watchdog(rank_t rank, wait_options options = {}) : rank_(rank), options_(options) {
    if (options.timeout.count() < 0 || options.spin_polls < 0 || options.min_pause.count() < 0 ||
        options.min_pause > options.max_pause) {
      throw_invalid_argument("orch::transport::watchdog: rank ", rank,
                             ": bad wait options (timeout ", options.timeout.count(), " ms, ",
                             options.spin_polls, " spin polls, pauses ", options.min_pause.count(),
                             " to ", options.max_pause.count(), " us)");
    }
  }

  /// The rank, named in every error. Complexity: O(1).
  [[nodiscard]] rank_t rank() const noexcept { return rank_; }
  /// The options. Complexity: O(1).
  [[nodiscard]] const wait_options& options() const noexcept { return options_; }
  /// Whether the transport was aborted (by a timeout or a failed poll). Complexity: O(1).
  [[nodiscard]] bool aborted() const noexcept { return aborted_; }

  /// Throws aborted_error, naming `operation`, if the transport was aborted.
  void check_usable(const char* operation) const {
    if (aborted_) {
      throw aborted_error(orch::detail::message(
          operation, ": rank ", rank_,
          " cannot use its transport: it was aborted after an earlier timeout or failure"));
    }
  }

  /// Calls `poll()` (returning poll_status, may throw) until it reports done. If the deadline
  /// of options().timeout from now passes first, calls `abort()` and throws timeout_error
  /// naming `operation`, the rank and the timeout; if `poll` throws, calls `abort()` and
  /// rethrows. Either way the watchdog is then aborted. The timeout is checked after each
  /// poll, so work that completes is never reported as timed out, and a zero timeout still
  /// polls once.
  /// Throws: timeout_error, aborted_error (aborted before), whatever `poll` throws.
  template <class Poll, class Abort>
  void wait(const char* operation, Poll&& poll, Abort&& abort) {
    check_usable(operation);
    const auto deadline = Clock::now() + options_.timeout;
    auto pause = options_.min_pause;
    for (int polls = 0;; ++polls) {
      poll_status status = poll_status::pending;
      try {
        status = poll();
      } catch (...) {
        fail(abort);
        throw;
      }
      if (status == poll_status::done) {
        return;
      }
      if (Clock::now() > deadline) {
        fail(abort);
        throw timeout_error(orch::detail::message(
            operation, ": rank ", rank_, " waited more than ", options_.timeout.count(),
            " ms (a peer that died or never joined, or ranks running different exchanges); the "
            "transport was aborted"));
      }
      if (polls < options_.spin_polls) {
        std::this_thread::yield();
      } else {
        std::this_thread::sleep_for(pause);
        pause = std::min(pause * 2, options_.max_pause);
      }
    }
  }

  /// Aborts the transport now (calls `abort()` unless already aborted): for a backend that
  /// fails outside a wait and must not let its peers' later calls hang on it.
  template <class Abort>
  void abort_now(Abort&& abort) noexcept {
    fail(abort);
  }

private:
  template <class Abort>
  void fail(Abort& abort) noexcept {
    if (!aborted_) {
      aborted_ = true;
      abort();
    }
  }

  rank_t rank_ = 0;
  wait_options options_;
  bool aborted_ = false;
};

/// The watchdog on the steady clock.
using watchdog = basic_watchdog<>;

} // namespace orch::transport
