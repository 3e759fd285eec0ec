// SPDX-License-Identifier: Apache-2.0
// The task runner behind orchestrate's threads: every task runs once, after its
// prerequisites; errors and skipped tasks do not depend on thread timing.
#include <orch/config.hpp>
#include <orch/detail/primitives/parallel.hpp>

#include <doctest/doctest.h>

#include <algorithm>
#include <atomic>
#include <cstddef>
#include <functional>
#include <string>
#include <vector>

TEST_CASE("run_tasks: every task runs once; the lowest failing task's error wins") {
  std::vector<std::function<void()>> none;
  orch::detail::run_tasks(none, 4); // nothing to run is fine
  for (const int threads : {1, 2, 4, 16}) {
    CAPTURE(threads);
    std::vector<int> ran(40, 0);
    std::vector<std::function<void()>> tasks;
    for (std::size_t t = 0; t < ran.size(); ++t) {
      tasks.emplace_back([&ran, t] {
        ++ran[t];
        if (t == 7 || t == 31) {
          throw orch::invalid_argument("task " + std::to_string(t));
        }
      });
    }
    std::string message;
    try {
      orch::detail::run_tasks(tasks, threads);
    } catch (const orch::invalid_argument& e) {
      message = e.what();
    }
    CHECK(message == "task 7");
    CHECK(std::count(ran.begin(), ran.end(), 1) == static_cast<std::ptrdiff_t>(ran.size()));
  }
}

TEST_CASE("task_graph: a task starts only after its prerequisites, each runs once") {
  // A layered graph: task t waits for t-1 and t-7 when they exist, plus every 5th task for
  // all of the previous layer of five; each records the step at which it started and ended.
  for (const int threads : {1, 2, 3, 8}) {
    CAPTURE(threads);
    constexpr std::size_t n = 60;
    std::atomic<int> clock{0};
    std::vector<int> started(n, -1);
    std::vector<int> ended(n, -1);
    std::vector<std::vector<std::size_t>> after(n);
    orch::detail::task_graph graph;
    for (std::size_t t = 0; t < n; ++t) {
      if (t % 3 != 0 && t >= 1) {
        after[t].push_back(t - 1);
      }
      if (t >= 7) {
        after[t].push_back(t - 7);
      }
      if (t % 5 == 0 && t >= 5) {
        for (std::size_t p = t - 5; p < t; ++p) {
          after[t].push_back(p);
        }
      }
      const auto id = graph.add(
          [&, t] {
            started[t] = clock.fetch_add(1);
            ended[t] = clock.fetch_add(1);
          },
          after[t]);
      CHECK(id == t);
    }
    CHECK(graph.size() == n);
    graph.run(threads);
    for (std::size_t t = 0; t < n; ++t) {
      CAPTURE(t);
      REQUIRE(started[t] >= 0);
      for (const std::size_t p : after[t]) {
        CHECK(ended[p] < started[t]);
      }
    }
    CHECK(clock.load() == static_cast<int>(2 * n));
  }
}

TEST_CASE("task_graph: tasks waiting for a failed task are skipped, the others run") {
  for (const int threads : {1, 2, 4}) {
    CAPTURE(threads);
    std::vector<int> ran(8, 0);
    orch::detail::task_graph graph;
    const auto task = [&ran](std::size_t t, bool fail) {
      return [&ran, t, fail] {
        ++ran[t];
        if (fail) {
          throw orch::invalid_argument("task " + std::to_string(t));
        }
      };
    };
    const auto a = graph.add(task(0, false));
    const auto b = graph.add(task(1, true), {a});  // fails
    const auto c = graph.add(task(2, false), {b}); // skipped: waits for b
    graph.add(task(3, false), {a, c});             // skipped: waits for c
    graph.add(task(4, true));                      // fails too, but after b in task order
    const auto f = graph.add(task(5, false), {a});
    graph.add(task(6, false), {f});
    graph.add(task(7, false), {f, a});
    std::string message;
    try {
      graph.run(threads);
    } catch (const orch::invalid_argument& e) {
      message = e.what();
    }
    CHECK(message == "task 1");
    CHECK(ran == std::vector<int>{1, 1, 0, 0, 1, 1, 1, 1});
  }
}

TEST_CASE("task_graph: a task may wait only for tasks added before it") {
  orch::detail::task_graph graph;
  graph.add([] {});
  CHECK_THROWS_WITH_AS(graph.add([] {}, {1}),
                       "task_graph::add: task 1 waits for task 1, which is not added yet",
                       orch::invalid_argument);
  graph.run(2); // the rejected task was not added
  orch::detail::task_graph empty;
  empty.run(4);
}
