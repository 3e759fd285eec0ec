#!/usr/bin/env bash
# Builds the libFuzzer targets with clang 14 (ASan + UBSan; the `fuzz` preset) and runs each for
# a bounded time, starting from its seed corpus fuzz/corpus/<name>/ (fuzz/README.md).
#
#   scripts/fuzz.sh                 # every target, ${ORCH_FUZZ_SECONDS:-45} s each
#   scripts/fuzz.sh 600 plan        # one target for 10 minutes
#
# ORCH_FUZZ_BUILD_DIR (default build/fuzz) is the build folder. New corpus entries go to
# $ORCH_FUZZ_BUILD_DIR/corpus/<name>/ (not into the tree); a crash leaves its
# input in $ORCH_FUZZ_BUILD_DIR/artifacts/ and fails the script. To keep a crash as a regression test,
# copy the input into fuzz/corpus/<name>/ with the fix (ctest then replays it in every build).
set -euo pipefail
cd "$(dirname "$0")/.."
seconds="${1:-${ORCH_FUZZ_SECONDS:-45}}"
shift || true
targets=("$@")
if [ ${#targets[@]} -eq 0 ]; then
  targets=(trace instance partition plan metadata orchestrate placement)
fi
out="${ORCH_FUZZ_BUILD_DIR:-build/fuzz}"
cmake --preset fuzz -B "$out" >/dev/null
cmake --build "$out" -j "${CMAKE_BUILD_PARALLEL_LEVEL:-2}" --target "${targets[@]/#/orch_fuzz_}"
mkdir -p "$out/artifacts"
for t in "${targets[@]}"; do
  mkdir -p "$out/corpus/$t"
  echo "fuzz: $t for ${seconds} s"
  # -rss_limit_mb / -malloc_limit_mb: a hostile length must be an error, never a huge buffer.
  # The whole log is kept in $out/$t.log; a summary is printed, and on a crash the log's end (the
  # failed assertion, uncaught exception or sanitizer report, and the input's bytes).
  "$out/fuzz/orch_fuzz_$t" -max_total_time="$seconds" -rss_limit_mb=2048 -malloc_limit_mb=1024 \
    -timeout=10 -print_final_stats=1 -artifact_prefix="$out/artifacts/$t-" \
    "$out/corpus/$t" "fuzz/corpus/$t" >"$out/$t.log" 2>&1 || true
  grep -E "^(#[0-9]+ +DONE|INFO: Done|==|SUMMARY|stat::number_of_executed_units)|invariant broken|ERROR" \
    "$out/$t.log" || true
  if ls "$out/artifacts/$t-"* >/dev/null 2>&1; then
    echo "fuzz: the end of $out/$t.log:" >&2
    grep -v -E "^#[0-9]+ " "$out/$t.log" | tail -n 60 >&2
    for a in "$out/artifacts/$t-"*; do
      echo "fuzz: $a (hex):" >&2
      od -An -tx1 -v "$a" | head -n 40 >&2
    done
    echo "fuzz: $t found a failing input: $(ls "$out/artifacts/$t-"*)" >&2
    exit 1
  fi
done
echo "fuzz: every target ran clean"
