// SPDX-License-Identifier: Apache-2.0
// The rows of the error catalogue (docs/errors.md) as the suites that raise them read them:
// `| E-ID | type | `pattern` | cause | fix |`, the pattern an ECMAScript regular expression the
// whole message must match. Shared by the core's suite (tests/errors) and the MPI and CUDA
// suites, which raise the E11xx and E12xx rows.
// std::regex trips GCC 12's -Wmaybe-uninitialized inside libstdc++'s std::function when
// optimised (asan-ubsan's -O1, release): a known false positive, silenced for its includers.
#pragma once

#if defined(__GNUC__) && !defined(__clang__)
#pragma GCC diagnostic ignored "-Wmaybe-uninitialized"
#endif

#include <orch/config.hpp>
#include <orch/transport/errors.hpp>

#include <doctest/doctest.h>

#include <fstream>
#include <map>
#include <regex>
#include <string>

namespace orch_errors {

/// One C++ row of the catalogue.
struct documented {
  std::string type; ///< invalid_argument, infeasible, overflow, a transport or a backend error
  std::string pattern;
};

/// The C++ rows of the catalogue at `path`, by id. A row whose id the reader sees but whose
/// type it cannot read (a misspelt type) fails a check instead of going untested.
inline std::map<std::string, documented> catalogue(const char* path) {
  std::ifstream in(path);
  REQUIRE_MESSAGE(in.good(), "cannot read " << path);
  std::map<std::string, documented> out;
  const std::regex row(
      R"(^\| (E[0-9]+) \| (invalid_argument|infeasible|overflow|plan_mismatch_error|timeout_error|aborted_error|mpi_error|cuda_error|nccl_error) \| `([^`]+)` \|)");
  const std::regex any_row(R"(^\| E[0-9]+ \|)");
  for (std::string line; std::getline(in, line);) {
    std::smatch m;
    if (std::regex_search(line, m, row)) {
      // In a Markdown table a bare | ends the cell, so the page writes the regex's alternation
      // as \| (which GitHub shows as |); a bare one would break the row.
      std::string pattern = m[3];
      CHECK_MESSAGE(!std::regex_search(pattern, std::regex(R"((^|[^\\])\|)")),
                    m[1] << ": a bare | in the pattern (write \\| for the alternation): " << line);
      pattern = std::regex_replace(pattern, std::regex(R"(\\\|)"), "|");
      out[m[1]] = {m[2], pattern};
    } else {
      CHECK_MESSAGE(!std::regex_search(line, any_row), "unreadable catalogue row: " << line);
    }
  }
  return out;
}

/// The type column's name of `e` among the core's and the transport core's types ("?" for
/// another type: the MPI and CUDA suites test their backends' types first).
inline std::string type_of(const orch::error& e) {
  if (dynamic_cast<const orch::invalid_argument*>(&e) != nullptr) {
    return "invalid_argument";
  }
  if (dynamic_cast<const orch::infeasible*>(&e) != nullptr) {
    return "infeasible";
  }
  if (dynamic_cast<const orch::overflow*>(&e) != nullptr) {
    return "overflow";
  }
  if (dynamic_cast<const orch::transport::plan_mismatch_error*>(&e) != nullptr) {
    return "plan_mismatch_error";
  }
  if (dynamic_cast<const orch::transport::timeout_error*>(&e) != nullptr) {
    return "timeout_error";
  }
  if (dynamic_cast<const orch::transport::aborted_error*>(&e) != nullptr) {
    return "aborted_error";
  }
  return "?";
}

/// Calls `trigger`, which must throw the error of row `id` of `doc`, and checks its type (by
/// `type_name`, a function of const orch::error&) and that its message matches the pattern.
template <class Trigger, class TypeName>
void check_raises(const std::string& id, const std::map<std::string, documented>& doc,
                  const Trigger& trigger, const TypeName& type_name) {
  CAPTURE(id);
  const auto it = doc.find(id);
  REQUIRE_MESSAGE(it != doc.end(), id << " has a trigger but no row in docs/errors.md");
  bool thrown = false;
  try {
    trigger();
  } catch (const orch::error& e) {
    thrown = true;
    const std::string what = e.what();
    CAPTURE(what);
    CHECK(type_name(e) == it->second.type);
    CHECK_MESSAGE(std::regex_match(what, std::regex(it->second.pattern)),
                  "'" << what << "' does not match " << it->second.pattern);
  } catch (const std::exception& e) {
    thrown = true;
    FAIL_CHECK(id << " threw a non-orch::error: " << e.what());
  }
  CHECK_MESSAGE(thrown, id << ": nothing was thrown");
}

} // namespace orch_errors
