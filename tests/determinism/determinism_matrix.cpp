// SPDX-License-Identifier: Apache-2.0
// orch_determinism: runs the determinism corpus (corpus.hpp) and prints one line per case,
// "<case id> <hash>" (s### orchestrate steps: step_plan::hash; p### partitions: a word hash of
// bin_of and loads), or the kind of error the case raised. Every build, optimisation level,
// thread count and the Python binding must print the same lines: ctest compares them with the
// checked-in golden file (docs/determinism.md).
//
//   orch_determinism [--threads N] [--check GOLDEN | --regenerate GOLDEN] [--timing]
//
// --check fails naming the first case that differs; --regenerate rewrites the golden file
// (for a change that legitimately changes plans: review its diff in the commit).
#include "corpus.hpp"

#include <orch/orch.hpp>

#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <iostream>
#include <sstream>
#include <string>
#include <vector>

namespace {

using namespace orch;
using namespace orch::determinism;

std::string hex(std::uint64_t h) {
  char buf[17];
  std::snprintf(buf, sizeof buf, "%016llx", static_cast<unsigned long long>(h));
  return buf;
}

std::string id(char prefix, int i) {
  char buf[8];
  std::snprintf(buf, sizeof buf, "%c%03d", prefix, i);
  return buf;
}

template <class Run>
std::string outcome(Run&& run) {
  try {
    return run();
  } catch (const infeasible&) {
    return "infeasible";
  } catch (const overflow&) {
    return "overflow";
  } catch (const invalid_argument&) {
    return "invalid";
  }
}

std::string run_step(int i, int threads) {
  const step_case c = make_step_case(i);
  const model_description model = step_model(c.model);
  return outcome([&] {
    const item_columns cols{c.owner,       c.local_index,  c.text,          c.media_example,
                            c.media_field, c.media_length, c.media_position};
    const auto table = item_table::from_columns(cols, c.field_names);
    const auto topo = topology::from_node_of_rank(c.node_of_rank);
    orchestrate_options o;
    o.strategy = c.strat;
    o.threads = threads;
    if (c.option_set == 1) {
      o.llm.max_examples_per_rank = c.max_examples_per_rank;
      o.llm.max_tokens_per_rank = c.max_tokens_per_rank;
    } else if (c.option_set == 2) {
      o.llm.groups = c.groups;
      o.partition.algorithm = partition_algorithm::lpt_ls;
    } else if (c.option_set == 3) {
      o.partition.algorithm = partition_algorithm::kk;
      o.partition.work_budget = 2000;
      o.partition.tolerance_ppm = 0;
      o.locality.slack_ppm = 0;
    }
    return hex(orchestrate(table, model, topo, o).hash);
  });
}

std::string run_partition(int j) {
  const partition_case c = make_partition_case(j);
  return outcome([&] {
    partition_options o;
    o.algorithm = c.algorithm;
    o.work_budget = c.work_budget;
    o.max_items_per_bin = c.max_items_per_bin;
    o.equal_counts = c.equal_counts;
    o.second_resource = c.second_resource;
    o.second_capacity = c.second_capacity;
    o.speeds = c.speeds;
    o.groups = c.groups;
    const auto r = partition(c.costs, c.bins, o);
    word_hash h;
    h.add(static_cast<std::int64_t>(c.costs.size()));
    h.add(c.bins);
    for (const rank_t b : r.bin_of) {
      h.add(b);
    }
    for (const cost_t l : r.loads) {
      h.add(l);
    }
    h.add(r.max_load);
    h.add(r.lower_bound);
    h.add(r.proven_optimal ? 1 : 0);
    return hex(h.value());
  });
}

int usage() {
  std::cerr << "usage: orch_determinism [--threads N] [--check GOLDEN | --regenerate GOLDEN] "
               "[--timing]\n";
  return 2;
}

} // namespace

int main(int argc, char** argv) {
  int threads = 1;
  std::string check;
  std::string regenerate;
  bool timing = false;
  for (int a = 1; a < argc; ++a) {
    const std::string arg = argv[a];
    if (arg == "--threads" && a + 1 < argc) {
      threads = std::atoi(argv[++a]);
    } else if (arg == "--check" && a + 1 < argc) {
      check = argv[++a];
    } else if (arg == "--regenerate" && a + 1 < argc) {
      regenerate = argv[++a];
    } else if (arg == "--timing") {
      timing = true;
    } else {
      return usage();
    }
  }
  if (threads < 1 || (!check.empty() && !regenerate.empty())) {
    return usage();
  }

  std::vector<std::string> lines;
  const auto timed = [&](const std::string& name, auto&& run) {
    const auto t0 = std::chrono::steady_clock::now();
    lines.push_back(name + " " + run());
    if (timing) {
      const std::chrono::duration<double, std::milli> ms = std::chrono::steady_clock::now() - t0;
      std::cerr << name << " " << ms.count() << " ms\n";
    }
  };
  for (int i = 0; i < step_cases; ++i) {
    timed(id('s', i), [&] { return run_step(i, threads); });
  }
  for (int j = 0; j < partition_cases; ++j) {
    timed(id('p', j), [&] { return run_partition(j); });
  }

  if (!regenerate.empty()) {
    std::ofstream out(regenerate);
    for (const auto& l : lines) {
      out << l << '\n';
    }
    if (!out) {
      std::cerr << "orch_determinism: cannot write " << regenerate << "\n";
      return 1;
    }
    std::cout << "orch_determinism: wrote " << lines.size() << " cases to " << regenerate << "\n";
    return 0;
  }
  if (check.empty()) {
    for (const auto& l : lines) {
      std::cout << l << '\n';
    }
    return 0;
  }
  std::ifstream in(check);
  if (!in) {
    std::cerr << "orch_determinism: cannot read " << check << "\n";
    return 1;
  }
  std::vector<std::string> golden;
  for (std::string l; std::getline(in, l);) {
    if (!l.empty() && l[0] != '#') {
      golden.push_back(l);
    }
  }
  int differing = 0;
  std::string first;
  for (std::size_t k = 0; k < lines.size() || k < golden.size(); ++k) {
    const std::string got = k < lines.size() ? lines[k] : "(missing)";
    const std::string want = k < golden.size() ? golden[k] : "(missing)";
    if (got != want) {
      if (differing == 0) {
        first = "first differing case: expected '" + want + "', got '" + got + "'";
      }
      ++differing;
    }
  }
  if (differing > 0) {
    std::cerr << "orch_determinism (threads " << threads << "): " << differing << " of "
              << golden.size() << " cases differ from " << check << "; " << first
              << "\n(if a change legitimately alters plans: orch_determinism --regenerate " << check
              << ", and review the diff)\n";
    return 1;
  }
  std::cout << "orch_determinism (threads " << threads << "): all " << lines.size()
            << " cases match " << check << "\n";
  return 0;
}
