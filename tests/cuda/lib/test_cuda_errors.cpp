// SPDX-License-Identifier: Apache-2.0
// The CUDA module's rows of the error catalogue (docs/errors.md, E12xx) that need no device,
// raised entry by entry with their documented type and pattern; the rows that need a device
// are raised by the gpu suite (gpu/gpu_error_ids.hpp names them), and every E12xx row must be
// one or the other.
#include "../gpu/gpu_error_ids.hpp"

#include <orch/cuda/communicator.hpp>
#include <orch/cuda/copy_program.hpp>
#include <orch/cuda/device_buffer.hpp>
#include <orch/cuda/error.hpp>
#include <orch/cuda/loopback.hpp>
#include <orch/cuda/poll_rules.hpp>
#include <orch/exchange/layout.hpp>
#include <orch/exchange/plan.hpp>
#include <orch/exchange/schedule.hpp>
#include <orch/topology.hpp>

#include <errors/catalogue.hpp>
#include <errors/triggers.hpp>

#include <doctest/doctest.h>

#include <cstdint>
#include <limits>
#include <string>
#include <vector>

using orch::bytes_t;
using orch::rank_t;
namespace oc = orch::cuda;

namespace {

// Three items, one on each of three ranks, staying where they are.
orch::exchange_plan three_rank_plan() {
  const std::vector<rank_t> r{0, 1, 2};
  const auto l = orch::layout::from_assignment(r, 3);
  return orch::make_plan(l, l, std::vector<bytes_t>{1, 1, 1});
}

void copy_program(const std::vector<bytes_t>& src, const std::vector<bytes_t>& dst,
                  const std::vector<bytes_t>& sizes, bytes_t src_bytes, bytes_t dst_bytes,
                  bytes_t tile_bytes = oc::default_tile_bytes) {
  static_cast<void>(oc::make_copy_program(src, dst, sizes, src_bytes, dst_bytes, tile_bytes));
}

const orch_errors::trigger_table& host_triggers() {
  static const orch_errors::trigger_table table{
      {"E1201", [] { copy_program({0}, {0}, {8}, 8, 8, 24); }},
      {"E1202", [] { copy_program({0}, {}, {1}, 8, 8); }},
      {"E1203", [] { copy_program({}, {}, {}, -1, 8); }},
      {"E1204", [] { copy_program({0}, {0}, {-1}, 8, 8); }},
      {"E1205", [] { copy_program({0}, {4}, {8}, 8, 8); }},
      {"E1206",
       [] {
         const bytes_t max = std::numeric_limits<bytes_t>::max();
         copy_program({max - 1}, {0}, {5}, max, 8);
       }},
      {"E1207", [] { oc::check_current_device(0, 1, 3, "orch::cuda::communicator::exchange"); }},
      {"E1208", [] { static_cast<void>(oc::device_buffer(-1)); }},
      {"E1209", [] { static_cast<void>(oc::loopback(0)); }},
      {"E1210",
       [] {
         oc::loopback lb(2);
         lb.prepare(three_rank_plan(), nullptr);
       }},
      {"E1211",
       [] {
         oc::loopback lb(2);
         lb.prepare(orch::make_schedule(three_rank_plan(), orch::topology::uniform(3, 1)), nullptr);
       }},
      {"E1212",
       [] {
         oc::loopback lb(2);
         lb.run({}, {}, nullptr);
       }},
      {"E1213",
       [] {
         const ncclUniqueId id{};
         static_cast<void>(oc::nccl_comm::init_rank(2, id, 5));
       }},
      {"E1214", [] { static_cast<void>(oc::communicator(static_cast<ncclComm_t>(nullptr))); }},
      // 2^62 bytes: out of memory on a GPU, no device without one; a cuda_error either way.
      {"E1215", [] { static_cast<void>(oc::device_buffer(bytes_t{1} << 62)); }},
      // ncclGroupEnd outside a group: ncclInvalidUsage, with or without a GPU.
      {"E1216", [] { ORCH_NCCL_CHECK(ncclGroupEnd()); }},
  };
  return table;
}

} // namespace

TEST_CASE("cuda errors: every host-raised E12xx catalogue entry has its type and message") {
  const auto doc = orch_errors::catalogue(ORCH_ERRORS_DOC);
  for (const auto& entry : host_triggers()) {
    CHECK(orch_errors::is_cuda_row(entry.first));
    CHECK(orch_errors::gpu_raised_ids().count(entry.first) == 0);
    orch_errors::check_raises(entry.first, doc, entry.second, orch_errors::cuda_type_of);
  }
}

TEST_CASE("cuda errors: every E12xx catalogue entry has a host trigger or is raised on a GPU") {
  const auto& host = host_triggers();
  const auto& gpu = orch_errors::gpu_raised_ids();
  std::size_t gpu_rows = 0;
  for (const auto& entry : orch_errors::catalogue(ORCH_ERRORS_DOC)) {
    const std::string& id = entry.first;
    if (orch_errors::is_cuda_row(id)) {
      CAPTURE(id);
      CHECK(host.count(id) + gpu.count(id) == 1);
      gpu_rows += gpu.count(id);
    }
  }
  CHECK(gpu_rows == gpu.size()); // every GPU id is a row of the page
}
