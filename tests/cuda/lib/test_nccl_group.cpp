// SPDX-License-Identifier: Apache-2.0
// The compiled module's host side without a device: the NCCL group guard closes the group on
// unwind (NCCL's group calls need no GPU: ncclGroupEnd outside a group answers
// ncclInvalidUsage, which shows the depth is back to zero), the options have one default in
// every build type, and a null communicator is rejected.
#include <orch/config.hpp>
#include <orch/cuda/communicator.hpp>
#include <orch/cuda/nccl_group.hpp>

#include <doctest/doctest.h>

#include <stdexcept>

namespace oc = orch::cuda;

namespace {

// True when the calling thread is inside an NCCL group; closes that group if so (the probe's
// own ncclGroupEnd is the one that closes it).
bool in_group() {
  return ncclGroupEnd() == ncclSuccess;
}

} // namespace

TEST_CASE("cuda nccl_group: the probe sees an open group (the test can fail)") {
  REQUIRE_FALSE(in_group());
  REQUIRE(ncclGroupStart() == ncclSuccess); // a raw start, as the old code did
  CHECK(in_group());                        // still open: the probe closes it
  CHECK_FALSE(in_group());
}

TEST_CASE("cuda nccl_group: an exception inside the group closes it") {
  REQUIRE_FALSE(in_group());
  try {
    const oc::nccl_group group;
    CHECK(group.open());
    throw std::runtime_error("a failing call between ncclGroupStart and ncclGroupEnd");
  } catch (const std::runtime_error&) {
  }
  CHECK_FALSE(in_group());
}

TEST_CASE("cuda nccl_group: end() closes once; nested groups close in order") {
  REQUIRE_FALSE(in_group());
  {
    oc::nccl_group outer;
    {
      oc::nccl_group inner;
      CHECK(inner.end() == ncclSuccess);
      CHECK_FALSE(inner.open());
      CHECK(inner.end() == ncclSuccess); // no second ncclGroupEnd
    }
    // The outer group is still open here: ending it succeeds (an extra end would not).
    CHECK(outer.end() == ncclSuccess);
  }
  CHECK_FALSE(in_group());
}

TEST_CASE("cuda communicator: one check_plan_hash default in every build type") {
  // A Debug rank and a Release rank must agree on whether the hash all-reduce runs.
  const oc::communicator_options options;
  CHECK(options.check_plan_hash);
  CHECK(options.engine == oc::copy_engine::cub_batched);
  CHECK_FALSE(options.self_through_nccl);
  CHECK_THROWS_AS(oc::communicator(static_cast<ncclComm_t>(nullptr)), orch::invalid_argument);
}
