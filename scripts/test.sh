#!/usr/bin/env bash
# README command 2: the whole test suite (Debug, warnings as errors): unit tests, examples
# diffed against their expected output, compile-fail tests, packaging consumer tests and a
# benchmark smoke run; then the Python package and orch.torch with pytest (in the virtual
# environment scripts/python-env.sh makes or reuses; ORCH_TEST_PYTHON=0 skips them).
# Arguments go to ctest.
set -euo pipefail
cd "$(dirname "$0")/.."
scripts/install-deps.sh
cmake --preset dev >/dev/null
cmake --build --preset dev
# Every public header compiles on its own (CMake's header-set verification).
cmake --build --preset dev --target all_verify_interface_header_sets
ctest --preset dev "$@"

if [ "${ORCH_TEST_PYTHON:-1}" != "0" ]; then
  venv="$(scripts/python-env.sh)"
  # Multi-process tests spawn gloo workers on 127.0.0.1 and stop by themselves.
  OMP_NUM_THREADS=1 "$venv/bin/python" -m pytest -q python/tests
fi
