// SPDX-License-Identifier: Apache-2.0
// The NCCL backend's poll rules on the CPU, alone and driving the exchange core's watchdog the
// way communicator::wait does: a CUDA error aborts the communicator before it propagates (it
// used to throw without aborting), ncclInProgress is polled and never taken as failure or as
// done, the deadline ends a wait on a hung stream, and the current device is checked.
#include <orch/config.hpp>
#include <orch/cuda/poll_rules.hpp>
#include <orch/transport/errors.hpp>
#include <orch/transport/watchdog.hpp>

#include <doctest/doctest.h>

#include <chrono>
#include <cstddef>
#include <cstdint>
#include <stdexcept>
#include <string>
#include <vector>

namespace oc = orch::cuda;
namespace ot = orch::transport;
using oc::comm_state;
using oc::poll_verdict;
using oc::work_state;

namespace {

// A clock that moves only when a poll tells it to.
struct manual_clock {
  using rep = std::int64_t;
  using period = std::milli;
  using duration = std::chrono::milliseconds;
  using time_point = std::chrono::time_point<manual_clock>;
  static inline time_point now_value{};
  static time_point now() noexcept { return now_value; }
};

struct device_failure : std::runtime_error {
  using std::runtime_error::runtime_error;
};
struct comm_failure : std::runtime_error {
  using std::runtime_error::runtime_error;
};

// A scripted wait: poll i sees work[i] / comm[i] (the last entry repeats), each poll takes 1 ms
// of the manual clock; judged by judge_poll and run by the core's watchdog, as the
// communicator's wait() does. Counts polls and aborts.
struct script {
  std::vector<work_state> work;
  std::vector<comm_state> comm;
  int polls = 0;
  int aborts = 0;

  void run(ot::basic_watchdog<manual_clock>& w) {
    const auto at = [](const auto& v, int i) {
      return v[static_cast<std::size_t>(i) < v.size() ? static_cast<std::size_t>(i) : v.size() - 1];
    };
    w.wait(
        "test wait",
        [&] {
          const auto verdict = oc::judge_poll(at(work, polls), at(comm, polls));
          ++polls;
          manual_clock::now_value += std::chrono::milliseconds(1);
          switch (verdict) {
          case poll_verdict::done:
            return ot::poll_status::done;
          case poll_verdict::pending:
            return ot::poll_status::pending;
          case poll_verdict::device_error:
            throw device_failure("cuda");
          case poll_verdict::comm_error:
            break;
          }
          throw comm_failure("nccl");
        },
        [&]() noexcept { ++aborts; });
  }
};

ot::basic_watchdog<manual_clock> watchdog(std::chrono::milliseconds timeout) {
  ot::wait_options o;
  o.timeout = timeout;
  o.spin_polls = 1'000'000; // yields only: the manual clock needs no real sleep
  return ot::basic_watchdog<manual_clock>(2, o);
}

} // namespace

TEST_CASE("cuda poll rules: failures win, completion needs a ready communicator") {
  // A CUDA error is a failure whatever the communicator says.
  for (const auto c : {comm_state::ready, comm_state::in_progress, comm_state::failed}) {
    CHECK(oc::judge_poll(work_state::failed, c) == poll_verdict::device_error);
  }
  // An asynchronous NCCL error is a failure even when the stream finished.
  for (const auto w : {work_state::done, work_state::pending}) {
    CHECK(oc::judge_poll(w, comm_state::failed) == poll_verdict::comm_error);
  }
  CHECK(oc::judge_poll(work_state::done, comm_state::ready) == poll_verdict::done);
  // ncclInProgress is neither failure nor completion: a non-blocking communicator may not have
  // enqueued the work on the stream yet.
  CHECK(oc::judge_poll(work_state::done, comm_state::in_progress) == poll_verdict::pending);
  CHECK(oc::judge_poll(work_state::pending, comm_state::in_progress) == poll_verdict::pending);
  CHECK(oc::judge_poll(work_state::pending, comm_state::ready) == poll_verdict::pending);
}

TEST_CASE("cuda poll rules: under the watchdog, every failure aborts before it propagates") {
  using namespace std::chrono_literals;
  {
    auto w = watchdog(1000ms);
    script s{{work_state::pending, work_state::pending, work_state::done}, {comm_state::ready}};
    s.run(w);
    CHECK(s.polls == 3);
    CHECK(s.aborts == 0);
    CHECK_FALSE(w.aborted());
  }
  {
    // A non-blocking communicator: the stream looks idle while NCCL is still enqueueing.
    auto w = watchdog(1000ms);
    script s{{work_state::done},
             {comm_state::in_progress, comm_state::in_progress, comm_state::ready}};
    s.run(w);
    CHECK(s.polls == 3);
    CHECK(s.aborts == 0);
  }
  {
    // A CUDA error in synchronize(): the communicator is aborted, then the error leaves, and
    // the next call refuses instead of waiting.
    auto w = watchdog(1000ms);
    script s{{work_state::pending, work_state::failed}, {comm_state::in_progress}};
    CHECK_THROWS_AS(s.run(w), device_failure);
    CHECK(s.aborts == 1);
    CHECK(w.aborted());
    CHECK_THROWS_AS(w.check_usable("exchange"), ot::aborted_error);
    CHECK_THROWS_AS(s.run(w), ot::aborted_error);
    CHECK(s.aborts == 1); // aborted once only
  }
  {
    auto w = watchdog(1000ms);
    script s{{work_state::pending}, {comm_state::ready, comm_state::failed}};
    CHECK_THROWS_AS(s.run(w), comm_failure);
    CHECK(s.polls == 2);
    CHECK(s.aborts == 1);
  }
  {
    // A hung peer (the work never finishes): a timeout after the deadline, not a hang.
    auto w = watchdog(25ms);
    script s{{work_state::pending}, {comm_state::ready}};
    CHECK_THROWS_WITH_AS(s.run(w), doctest::Contains("rank 2 waited more than 25 ms"),
                         ot::timeout_error);
    CHECK(s.polls == 26);
    CHECK(s.aborts == 1);
  }
  {
    // Work that is already done never waits, even with a zero timeout.
    auto w = watchdog(0ms);
    script s{{work_state::done}, {comm_state::ready}};
    s.run(w);
    CHECK(s.polls == 1);
  }
}

TEST_CASE("cuda poll rules: NCCL results and the current device") {
  constexpr int success = 0;
  constexpr int in_progress = 7; // ncclInProgress's value in nccl.h
  CHECK(oc::take_nccl_result(success, success, in_progress) == oc::nccl_call_outcome::ok);
  CHECK(oc::take_nccl_result(in_progress, success, in_progress) == oc::nccl_call_outcome::poll);
  for (const int failure : {1, 2, 3, 4, 5, 6}) {
    CHECK(oc::take_nccl_result(failure, success, in_progress) ==
          oc::nccl_call_outcome::throw_error);
  }
  CHECK_NOTHROW(oc::check_current_device(1, 1, 3, "here"));
  try {
    oc::check_current_device(1, 0, 3, "orch::cuda::communicator::exchange");
    FAIL("no exception");
  } catch (const orch::invalid_argument& e) {
    const std::string what = e.what();
    CHECK(what.find("orch::cuda::communicator::exchange") != std::string::npos);
    CHECK(what.find("rank 3") != std::string::npos);
    CHECK(what.find("device 1") != std::string::npos);
    CHECK(what.find("current device is 0") != std::string::npos);
  }
}
