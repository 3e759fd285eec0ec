#!/usr/bin/env bash
# README command 2: the whole test suite (Debug, warnings as errors): unit tests, examples
# diffed against their expected output, compile-fail tests, packaging consumer tests and a
# benchmark smoke run.
set -euo pipefail
cd "$(dirname "$0")/.."
scripts/install-deps.sh
cmake --preset dev >/dev/null
cmake --build --preset dev
# Every public header compiles on its own (CMake's header-set verification).
cmake --build --preset dev --target all_verify_interface_header_sets
ctest --preset dev "$@"
