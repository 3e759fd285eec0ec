// SPDX-License-Identifier: Apache-2.0
// orch::compiled: orch::orchestrate compiled once, so that user TUs built with ORCH_COMPILED
// (which linking orch::compiled defines) parse its declaration only.
#ifndef ORCH_COMPILED
#error "src/orchestrate.cpp is built with ORCH_COMPILED (the orch_compiled target sets it)"
#endif
#define ORCH_COMPILED_LIBRARY_SOURCE 1

#include <orch/orchestrate/orchestrate.hpp>

#include <orch/detail/orchestrate/orchestrate_impl.hpp>
