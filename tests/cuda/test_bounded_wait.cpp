// SPDX-License-Identifier: Apache-2.0
// The communicator's wait rules on the CPU: every wait ends in "done" or "abort, then throw"
// (a CUDA error aborts too), ncclInProgress is polled and never taken as failure or as done,
// the deadline ends a wait that would hang, and the current device is checked.
#include <orch/config.hpp>
#include <orch/cuda/bounded_wait.hpp>

#include <doctest/doctest.h>

#include <chrono>
#include <string>
#include <vector>

namespace oc = orch::cuda;
using oc::comm_state;
using oc::wait_step;
using oc::work_state;

namespace {

// A scripted wait: the i-th poll returns work[i] / comm[i] (the last entry repeats); the
// fake clock advances one millisecond per pause.
struct script {
  std::vector<work_state> work;
  std::vector<comm_state> comm;
  int polls = 0;
  int pauses = 0;
  oc::wait_clock::time_point now{};

  wait_step run(std::chrono::milliseconds timeout) {
    const auto at = [](const auto& v, int i) {
      return v[static_cast<std::size_t>(i) < v.size() ? static_cast<std::size_t>(i) : v.size() - 1];
    };
    const auto deadline = now + timeout;
    return oc::bounded_wait([&] { return at(work, polls); }, [&] { return at(comm, polls++); },
                            deadline, [&] { return now; },
                            [&] {
                              ++pauses;
                              now += std::chrono::milliseconds(1);
                            });
  }
};

} // namespace

TEST_CASE("cuda wait rules: failures abort, completion needs a ready communicator") {
  for (const bool late : {false, true}) {
    CAPTURE(late);
    // A CUDA error aborts the communicator whatever else holds (defect: it used to throw
    // without aborting, leaving peers to wait out their timeouts).
    for (const auto c : {comm_state::ready, comm_state::in_progress, comm_state::failed}) {
      CHECK(oc::next_wait_step(work_state::failed, c, late) == wait_step::abort_device_error);
    }
    // An asynchronous NCCL error aborts even when the stream finished.
    for (const auto w : {work_state::done, work_state::pending}) {
      CHECK(oc::next_wait_step(w, comm_state::failed, late) == wait_step::abort_comm_error);
    }
    CHECK(oc::next_wait_step(work_state::done, comm_state::ready, late) == wait_step::finish);
  }
  // ncclInProgress is neither failure nor completion: a non-blocking communicator may not
  // have enqueued the work on the stream yet.
  CHECK(oc::next_wait_step(work_state::done, comm_state::in_progress, false) ==
        wait_step::keep_polling);
  CHECK(oc::next_wait_step(work_state::pending, comm_state::in_progress, false) ==
        wait_step::keep_polling);
  CHECK(oc::next_wait_step(work_state::pending, comm_state::ready, false) ==
        wait_step::keep_polling);
  CHECK(oc::next_wait_step(work_state::done, comm_state::in_progress, true) ==
        wait_step::abort_timeout);
  CHECK(oc::next_wait_step(work_state::pending, comm_state::ready, true) ==
        wait_step::abort_timeout);
}

TEST_CASE("cuda wait rules: bounded_wait polls until done, failed or past the deadline") {
  using namespace std::chrono_literals;
  {
    script s{{work_state::pending, work_state::pending, work_state::done}, {comm_state::ready}};
    CHECK(s.run(1000ms) == wait_step::finish);
    CHECK(s.polls == 3);
    CHECK(s.pauses == 2);
  }
  {
    // A non-blocking communicator: the stream looks idle, NCCL is still enqueueing.
    script s{{work_state::done},
             {comm_state::in_progress, comm_state::in_progress, comm_state::ready}};
    CHECK(s.run(1000ms) == wait_step::finish);
    CHECK(s.polls == 3);
  }
  {
    script s{{work_state::pending}, {comm_state::ready, comm_state::failed}};
    CHECK(s.run(1000ms) == wait_step::abort_comm_error);
    CHECK(s.polls == 2);
  }
  {
    script s{{work_state::pending, work_state::failed}, {comm_state::in_progress}};
    CHECK(s.run(1000ms) == wait_step::abort_device_error);
  }
  {
    // A hung peer: the work never finishes; the wait ends after the timeout, not never.
    script s{{work_state::pending}, {comm_state::ready}};
    CHECK(s.run(25ms) == wait_step::abort_timeout);
    CHECK(s.pauses == 26); // polls at 0..25 ms are in time, the one at 26 ms is late
  }
  {
    // Work that is already done never waits, even with a zero timeout.
    script s{{work_state::done}, {comm_state::ready}};
    CHECK(s.run(0ms) == wait_step::finish);
    CHECK(s.pauses == 0);
  }
}

TEST_CASE("cuda wait rules: NCCL results and the current device") {
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
