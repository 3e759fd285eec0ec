#!/usr/bin/env bash
# README command 1: install what is missing, build orch (Release), run the main job.
set -euo pipefail
cd "$(dirname "$0")/.."
scripts/install-deps.sh
cmake --preset release >/dev/null
cmake --build --preset release --target example_balance_sample >/dev/null
cd examples && ../build/release/examples/example_balance_sample
