// SPDX-License-Identifier: Apache-2.0
// The timeout / abort state machine, on a manual clock (no real waiting) and once on the real one.
#include <orch/transport/errors.hpp>
#include <orch/transport/watchdog.hpp>

#include <doctest/doctest.h>

#include <chrono>
#include <stdexcept>
#include <string>

namespace ot = orch::transport;
using namespace std::chrono_literals;

namespace {

// A clock that moves only when told: every poll advances it by a fixed step.
struct manual_clock {
  using rep = std::int64_t;
  using period = std::milli;
  using duration = std::chrono::milliseconds;
  using time_point = std::chrono::time_point<manual_clock>;
  static inline time_point now_value{};
  static time_point now() noexcept { return now_value; }
};

ot::wait_options fast(std::chrono::milliseconds timeout) {
  ot::wait_options o;
  o.timeout = timeout;
  o.spin_polls = 1000000; // yields only: the manual clock needs no real sleep
  return o;
}

} // namespace

TEST_CASE("watchdog: done work returns, pending work times out after aborting once") {
  ot::basic_watchdog<manual_clock> w(3, fast(100ms));
  int polls = 0;
  int aborts = 0;
  w.wait(
      "op", [&] { return ++polls == 5 ? ot::poll_status::done : ot::poll_status::pending; },
      [&]() noexcept { ++aborts; });
  CHECK(polls == 5);
  CHECK(aborts == 0);
  CHECK_FALSE(w.aborted());

  polls = 0;
  try {
    w.wait(
        "orch::mpi::exchange",
        [&] {
          ++polls;
          manual_clock::now_value += 10ms;
          return ot::poll_status::pending;
        },
        [&]() noexcept { ++aborts; });
    FAIL("no timeout");
  } catch (const ot::timeout_error& e) {
    const std::string what = e.what();
    CHECK(what.find("orch::mpi::exchange: rank 3 waited more than 100 ms") != std::string::npos);
  }
  CHECK(polls == 11); // 10 ms per poll: the 11th sees 110 ms > 100 ms
  CHECK(aborts == 1);
  CHECK(w.aborted());
  // Aborted: every later wait refuses at once, without polling or aborting again.
  polls = 0;
  CHECK_THROWS_AS(
      w.wait(
          "again", [&] { return ++polls, ot::poll_status::done; }, [&]() noexcept { ++aborts; }),
      ot::aborted_error);
  CHECK(polls == 0);
  CHECK(aborts == 1);
  CHECK_THROWS_WITH_AS(w.check_usable("orch::test"), doctest::Contains("orch::test: rank 3"),
                       ot::aborted_error);
}

TEST_CASE("watchdog: work that completes on the poll at the deadline is not a timeout") {
  ot::basic_watchdog<manual_clock> w(0, fast(0ms));
  int polls = 0;
  w.wait(
      "op", [&] { return ++polls, ot::poll_status::done; }, [] {});
  CHECK(polls == 1); // a zero timeout still polls once
  CHECK_FALSE(w.aborted());
}

TEST_CASE("watchdog: a failing poll aborts, then its error propagates") {
  ot::basic_watchdog<manual_clock> w(1, fast(1000ms));
  int aborts = 0;
  CHECK_THROWS_WITH_AS(w.wait(
                           "op", []() -> ot::poll_status { throw std::runtime_error("MPI_Test"); },
                           [&]() noexcept { ++aborts; }),
                       "MPI_Test", std::runtime_error);
  CHECK(aborts == 1);
  CHECK(w.aborted());
  w.abort_now([&]() noexcept { ++aborts; }); // already aborted: not again
  CHECK(aborts == 1);
}

TEST_CASE("watchdog: the steady clock times out within its bound, backing off") {
  ot::wait_options o;
  o.timeout = 30ms;
  o.spin_polls = 4;
  ot::watchdog w(2, o);
  int polls = 0;
  const auto start = std::chrono::steady_clock::now();
  CHECK_THROWS_AS(w.wait(
                      "op", [&] { return ++polls, ot::poll_status::pending; }, [] {}),
                  ot::timeout_error);
  const auto took = std::chrono::steady_clock::now() - start;
  CHECK(took >= 30ms);
  CHECK(took < 2s);
  CHECK(polls < 1000); // sleeps up to max_pause between polls instead of spinning
  ot::wait_options bad;
  bad.min_pause = 5ms;
  bad.max_pause = 1ms;
  CHECK_THROWS_AS(ot::watchdog(0, bad), orch::invalid_argument);
}
