// SPDX-License-Identifier: Apache-2.0
// The CUDA module's rows of the error catalogue that need a device (gpu_error_ids.hpp): each
// raised on one GPU with its documented type and pattern (docs/errors.md, E12xx).
#include "gpu_error_ids.hpp"
#include "gpu_support.hpp"

#include <orch/cuda/communicator.hpp>
#include <orch/cuda/device_plan.hpp>
#include <orch/cuda/error.hpp>
#include <orch/cuda/loopback.hpp>
#include <orch/exchange/layout.hpp>
#include <orch/exchange/plan.hpp>
#include <orch/exchange/schedule.hpp>
#include <orch/topology.hpp>
#include <orch/transport/program.hpp>

#include <errors/catalogue.hpp>
#include <errors/triggers.hpp>
#include <plan/plan_support.hpp>

#include <cuda_runtime_api.h>

#include <doctest/doctest.h>

#include <atomic>
#include <chrono>
#include <string>
#include <thread>
#include <utility>
#include <vector>

using orch::bytes_t;
using orch::rank_t;
namespace oc = orch::cuda;

namespace {

// `ranks` items of 16 bytes, item r from rank r to rank r + 1 (mod ranks).
orch::exchange_plan ring_plan(rank_t ranks) {
  return orch::test::ring_plan(ranks, 16);
}

int current_device() {
  int device = 0;
  ORCH_CUDA_CHECK(cudaGetDevice(&device));
  return device;
}

// A single-rank communicator on the current device, with `timeout`.
oc::communicator single(std::chrono::milliseconds timeout = std::chrono::seconds(60)) {
  oc::communicator_options o;
  o.timeout = timeout;
  return oc::communicator(oc::nccl_comm::single(current_device()), o);
}

// A stream, synchronised (errors ignored) and destroyed when it goes.
class owned_stream {
public:
  owned_stream() { ORCH_CUDA_CHECK(cudaStreamCreate(&stream_)); }
  ~owned_stream() {
    static_cast<void>(cudaStreamSynchronize(stream_));
    static_cast<void>(cudaStreamDestroy(stream_));
  }
  owned_stream(const owned_stream&) = delete;
  owned_stream& operator=(const owned_stream&) = delete;
  [[nodiscard]] cudaStream_t get() const noexcept { return stream_; }

private:
  cudaStream_t stream_ = nullptr;
};

const orch_errors::trigger_table& gpu_triggers() {
  static const orch_errors::trigger_table table{
      {"E1217",
       [] {
         const owned_stream s;
         oc::loopback lb(1);
         lb.prepare(ring_plan(1), s.get());
         lb.run({}, {}, s.get());
       }},
      {"E1218",
       [] {
         const owned_stream s;
         auto a = single();
         const oc::communicator b(std::move(a));
         // NOLINTNEXTLINE(bugprone-use-after-move): a moved-from communicator's state is specified
         a.exchange(ring_plan(1), nullptr, nullptr, s.get());
       }},
      {"E1219",
       [] {
         const owned_stream s;
         auto comm = single();
         comm.exchange(ring_plan(2), nullptr, nullptr, s.get());
       }},
      {"E1220",
       [] {
         const owned_stream s;
         auto comm = single();
         comm.exchange(orch::make_schedule(ring_plan(2), orch::topology::uniform(2, 1)), nullptr,
                       nullptr, s.get());
       }},
      {"E1221",
       [] {
         const owned_stream s;
         auto comm = single();
         oc::device_plan uploaded;
         uploaded.upload(orch::transport::make_flat_program(ring_plan(2), 1), s.get());
         comm.exchange(uploaded, nullptr, nullptr, s.get());
       }},
      {"E1222",
       [] {
         const owned_stream s;
         auto comm = single();
         comm.abort();
         comm.exchange(ring_plan(1), nullptr, nullptr, s.get());
       }},
      {"E1223",
       [] {
         const owned_stream s;
         auto comm = single(std::chrono::milliseconds(100));
         const orch::test::stream_blocker blocker(s.get());
         comm.synchronize(s.get()); // the stream cannot pass the blocker
       }},
      {"E1224",
       [] {
         // Querying a stream under graph capture is an error (not a sticky one): the wait
         // sees a CUDA error on its stream.
         const owned_stream s;
         auto comm = single();
         ORCH_CUDA_CHECK(cudaStreamBeginCapture(s.get(), cudaStreamCaptureModeRelaxed));
         const auto end_capture = [&s] {
           cudaGraph_t graph = nullptr;
           static_cast<void>(cudaStreamEndCapture(s.get(), &graph));
           if (graph != nullptr) {
             static_cast<void>(cudaGraphDestroy(graph));
           }
           static_cast<void>(cudaGetLastError());
         };
         try {
           comm.synchronize(s.get());
         } catch (...) {
           end_capture();
           throw;
         }
         end_capture();
       }},
  };
  return table;
}

} // namespace

TEST_CASE("gpu errors: every GPU-raised E12xx catalogue entry has its type and message") {
  const auto doc = orch_errors::catalogue(ORCH_ERRORS_DOC);
  std::set<std::string> ids;
  for (const auto& entry : gpu_triggers()) {
    ids.insert(entry.first);
    orch_errors::check_raises(entry.first, doc, entry.second, orch_errors::cuda_type_of);
  }
  CHECK(ids == orch_errors::gpu_raised_ids()); // a trigger for each, and no other
}
