// SPDX-License-Identifier: Apache-2.0
/// Runs independent tasks on a few threads without making results depend on thread timing.
#pragma once

#include <orch/config.hpp>

#include <algorithm>
#include <atomic>
#include <cstddef>
#include <exception>
#include <functional>
#include <system_error>
#include <thread>
#include <vector>

namespace orch::detail {

/// Runs every task once, on up to `threads` threads (the caller's thread included), and
/// returns when all have finished.
///
/// Determinism: each task must be a pure function of its inputs writing only its own
/// outputs; which thread runs which task then changes nothing. When tasks throw, the
/// exception of the lowest-numbered failing task is rethrown (every task still runs to its
/// end), so the error a caller sees does not depend on thread timing either.
/// Complexity: the tasks' work plus one thread start per extra thread.
/// Throws: the exception of the lowest-numbered failing task. A thread that cannot start is
/// not an error: the threads already running, the caller's included, take its share.
inline void run_tasks(std::vector<std::function<void()>>& tasks, int threads) {
  const std::size_t n = tasks.size();
  std::vector<std::exception_ptr> errors(n);
  std::atomic<std::size_t> next{0};
  const auto work = [&] {
    for (std::size_t t = next.fetch_add(1); t < n; t = next.fetch_add(1)) {
      try {
        tasks[t]();
      } catch (...) {
        errors[t] = std::current_exception();
      }
    }
  };
  // The caller's thread is one of them; never more threads than tasks.
  const std::size_t extra =
      threads > 1 && n > 1 ? std::min(n, static_cast<std::size_t>(threads)) - 1 : std::size_t{0};
  std::vector<std::thread> pool;
  pool.reserve(extra);
  for (std::size_t i = 0; i < extra; ++i) {
    try {
      pool.emplace_back(work);
    } catch (const std::system_error&) {
      break; // no more threads to be had: the ones running (and this one) do the rest
    }
  }
  work();
  for (auto& th : pool) {
    th.join();
  }
  for (const auto& e : errors) {
    if (e) {
      std::rethrow_exception(e);
    }
  }
}

} // namespace orch::detail
