// SPDX-License-Identifier: Apache-2.0
// The error catalogue's triggers, one per docs/errors.md entry, registered by area: each
// tests/errors/test_*.cpp file registers the entries of its area at static initialisation,
//
//   const orch_errors::registration placement_entries{{
//       {"E901", [] { ... call that must throw E901 ... }},
//   }};
//
// and test_errors.cpp raises every registered trigger and checks that every C++ row of the page
// has exactly one.
#pragma once

#include <functional>
#include <map>
#include <string>
#include <vector>

namespace orch_errors {

/// A call that must throw its entry's error.
using trigger = std::function<void()>;
using trigger_table = std::map<std::string, trigger>;

/// Every trigger registered (by the time main runs, all files' registrations have).
trigger_table& all_triggers();

/// Ids that two registrations both claimed (a test fails unless this is empty).
std::vector<std::string>& duplicate_ids();

/// Adds `table` to all_triggers(), recording any id already there in duplicate_ids().
struct registration {
  explicit registration(trigger_table table);
};

} // namespace orch_errors
