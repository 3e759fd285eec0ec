// SPDX-License-Identifier: Apache-2.0
/// Runs tasks, some waiting for others, on a few threads without making results depend on
/// thread timing.
#pragma once

#include <orch/config.hpp>

#include <algorithm>
#include <condition_variable>
#include <cstddef>
#include <exception>
#include <functional>
#include <initializer_list>
#include <mutex>
#include <system_error>
#include <thread>
#include <vector>

namespace orch::detail {

/// Tasks with prerequisites (a task starts once every task it waits for has finished), run
/// on up to a given number of threads, the caller's included. A task may wait only for tasks
/// added before it, so the graph has no cycles by construction.
///
/// Determinism: each task must be a pure function of its inputs (its own and its
/// prerequisites' outputs) writing only its own outputs; which thread runs which task then
/// changes nothing. Among the tasks ready to start, the lowest-numbered starts first, so list
/// long chains first. When tasks throw, the exception of the lowest-numbered failing task is
/// rethrown after every other task has ended; the tasks that wait (directly or not) for a
/// failed task do not run, and every other task does, so the error a caller sees does not
/// depend on thread timing either.
class task_graph {
public:
  /// Adds a task that starts once the tasks `after` (ids returned by earlier add() calls)
  /// have finished; returns its id (0, 1, ... in the order of the calls).
  /// Throws: orch::invalid_argument when `after` names a task not added yet.
  std::size_t add(std::function<void()> task, std::initializer_list<std::size_t> after = {}) {
    return add(std::move(task), std::vector<std::size_t>(after));
  }
  std::size_t add(std::function<void()> task, const std::vector<std::size_t>& after) {
    const std::size_t id = nodes_.size();
    node n;
    n.task = std::move(task);
    for (const std::size_t a : after) {
      if (a >= id) {
        throw_invalid_argument("task_graph::add: task ", id, " waits for task ", a,
                               ", which is not added yet");
      }
      nodes_[a].next.push_back(id);
      ++n.waiting;
    }
    nodes_.push_back(std::move(n));
    return id;
  }

  [[nodiscard]] std::size_t size() const noexcept { return nodes_.size(); }

  /// Runs every task (see the class comment) on up to `threads` threads and returns when all
  /// have ended. Call once.
  /// Complexity: the tasks' work plus one thread start per extra thread and O(tasks) per
  /// task start under a lock.
  /// Throws: the exception of the lowest-numbered failing task. A thread that cannot start
  /// is not an error: the threads already running, the caller's included, take its share.
  void run(int threads) {
    const std::size_t n = nodes_.size();
    std::vector<std::exception_ptr> errors(n);
    std::mutex mu;
    std::condition_variable changed;
    std::size_t open = n; // tasks not ended (run or skipped)
    std::size_t ready_from = 0;
    for (auto& nd : nodes_) {
      nd.state = nd.waiting == 0 ? status::ready : status::waiting;
    }
    // Under the lock: a task ended; wakes its dependents, skipping those of a failed task.
    std::vector<std::size_t> ended;
    const auto end_task = [&](std::size_t t, bool failed) {
      ended.assign(1, t);
      nodes_[t].blocked = failed;
      while (!ended.empty()) {
        const std::size_t e = ended.back();
        ended.pop_back();
        --open;
        for (const std::size_t d : nodes_[e].next) {
          node& nd = nodes_[d];
          nd.blocked = nd.blocked || nodes_[e].blocked;
          if (--nd.waiting == 0) {
            if (nd.blocked) {
              nd.state = status::ended;
              ended.push_back(d);
            } else {
              nd.state = status::ready;
              ready_from = std::min(ready_from, d);
            }
          }
        }
      }
    };
    const auto work = [&] {
      std::unique_lock lock(mu);
      for (;;) {
        std::size_t t = ready_from;
        while (t < n && nodes_[t].state != status::ready) {
          ++t;
        }
        ready_from = t;
        if (t == n) {
          if (open == 0) {
            return;
          }
          changed.wait(lock);
          continue;
        }
        nodes_[t].state = status::running;
        lock.unlock();
        bool failed = false;
        try {
          nodes_[t].task();
        } catch (...) {
          errors[t] = std::current_exception();
          failed = true;
        }
        lock.lock();
        nodes_[t].state = status::ended;
        end_task(t, failed);
        changed.notify_all();
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

private:
  enum class status { waiting, ready, running, ended };
  struct node {
    std::function<void()> task;
    std::vector<std::size_t> next; // tasks waiting for this one
    std::size_t waiting = 0;       // prerequisites not ended yet
    bool blocked = false;          // failed, or waits for a failed task
    status state = status::waiting;
  };
  std::vector<node> nodes_;
};

/// Runs independent tasks once each on up to `threads` threads: a task_graph without
/// prerequisites (every task runs; the lowest-numbered failing task's exception is rethrown).
/// The tasks are moved out of `tasks`.
inline void run_tasks(std::vector<std::function<void()>>& tasks, int threads) {
  task_graph g;
  for (auto& t : tasks) {
    g.add(std::move(t));
  }
  g.run(threads);
}

} // namespace orch::detail
