#!/usr/bin/env bash
# README command 1: install what is missing, build orch-bench (Release), run the main job:
# `orch-bench demo` simulates training steps sampled from the bundled real-data trace at
# 16, 64 and 512 ranks and prints, per strategy, the per-phase balance, the bytes moved by
# locality class and the simulated step time.
set -euo pipefail
cd "$(dirname "$0")/.."
scripts/install-deps.sh
cmake --preset release >/dev/null
cmake --build --preset release --target orch-bench >/dev/null
build/release/bench/orch_bench/orch-bench demo
