#!/usr/bin/env bash
# scripts/device-check.sh — the GPU checks of the CUDA module on a machine with one NVIDIA GPU
# (written for one H200, sm_90; x86-64 with the CUDA toolkit and NCCL installed):
#   1. configure and build the cuda preset's settings (Release, CMAKE_CUDA_ARCHITECTURES=90)
#      — only the module's targets, with all cores;
#   2. run the module's tests: host logic, compiled-library checks and the gpu tests;
#   3. run compute-sanitizer --tool memcheck on the gpu tests (quick mode: fewer seeds);
#   4. benchmark pack / unpack against a same-size device-to-device cudaMemcpy and the
#      loopback exchange (algbw, busbw), see cuda/bench/orch_cuda_bench.cpp;
#   5. build the Python package and run orch.torch's exchange over NCCL on one rank
#      (bench/python/bench_exchange.py --backend nccl: correctness, then time vs bare).
# Writes $OUT/device-check.json (or ./device-check-out/ when OUT is unset) with the status and
# duration of every step, bench.json with the figures, and one log per step. Total < 5 min.
#
# Offline machines without doctest (the tests' framework): run
#   scripts/device-check.sh --stage-doctest
# on a machine that has it (Debian doctest-dev); it copies the relocatable package to
# build/doctest-prefix, which this script then uses (carry that folder with the tree).
# Without doctest the tests are not built; the benchmark still runs. Environment:
#   OUT            output folder;  DEVICE_CHECK_WERROR=1  warnings as errors (default off:
#   the device's host compiler may differ from CI's, which enforces -Werror already).
set -euo pipefail
cd "$(dirname "$0")/.."
root="$PWD"

if [ "${1:-}" = "--stage-doctest" ]; then
  src=/usr/lib/cmake/doctest
  [ -f "$src/doctestConfig.cmake" ] || { echo "doctest CMake package not found in $src" >&2; exit 1; }
  mkdir -p build/doctest-prefix/include build/doctest-prefix/lib/cmake
  cp -r /usr/include/doctest build/doctest-prefix/include/
  cp -r "$src" build/doctest-prefix/lib/cmake/
  # Debian's export hard-codes the prefix: make it relative to the package's own folder.
  sed -i 's|^set(_IMPORT_PREFIX "/usr")|get_filename_component(_IMPORT_PREFIX "${CMAKE_CURRENT_LIST_DIR}/../../.." ABSOLUTE)|' \
    build/doctest-prefix/lib/cmake/doctest/doctestTargets.cmake
  echo "doctest staged in build/doctest-prefix"
  exit 0
fi

out="${OUT:-$root/device-check-out}"
mkdir -p "$out"
build="$root/build/device-check"
start_all=$(date +%s)
steps=()   # JSON objects, one per step

log() { printf '[device-check %s] %s\n' "$(date +%T)" "$*"; }
record() { # name status seconds detail
  local detail=${4//\"/\'}
  steps+=("{\"step\": \"$1\", \"status\": \"$2\", \"seconds\": $3, \"detail\": \"$detail\"}")
}
write_summary() {
  local overall=$1
  {
    printf '{\n  "overall": "%s",\n  "total_seconds": %s,\n' "$overall" "$(( $(date +%s) - start_all ))"
    printf '  "gpu": "%s",\n' "$(nvidia-smi --query-gpu=name,driver_version --format=csv,noheader 2>/dev/null | head -1 | tr -d '"')"
    printf '  "steps": [\n'
    local i
    for i in "${!steps[@]}"; do
      printf '    %s%s\n' "${steps[$i]}" "$([ "$i" -lt $(( ${#steps[@]} - 1 )) ] && echo ,)"
    done
    printf '  ]\n}\n'
  } > "$out/device-check.json"
  log "summary: $out/device-check.json ($overall)"
}
fail() { # step message
  log "FAILED at $1: $2"
  record "$1" failed 0 "$2"
  write_summary failed
  exit 1
}
# run_step name logfile command...: runs, times and records one step; returns its status.
run_step() {
  local name=$1 logfile=$2; shift 2
  local t0=$(date +%s) rc=0
  log "$name: $*"
  "$@" > "$out/$logfile" 2>&1 || rc=$?
  local dt=$(( $(date +%s) - t0 ))
  if [ "$rc" -eq 0 ]; then
    record "$name" passed "$dt" "log: $logfile"
    log "$name passed in ${dt}s"
  elif [ "$rc" -eq 77 ]; then
    record "$name" skipped "$dt" "exit 77: no CUDA device visible, log: $logfile"
    log "$name SKIPPED (exit 77: no CUDA device visible)"
    rc=0
  else
    record "$name" failed "$dt" "exit $rc, log: $logfile"
    log "$name FAILED (exit $rc) in ${dt}s; last lines of $logfile:"
    tail -n 30 "$out/$logfile" || true
  fi
  return "$rc"
}

# ---- prerequisites ------------------------------------------------------------------------
export PATH="$PATH:/usr/local/cuda/bin"
command -v nvcc >/dev/null || fail prerequisites "nvcc not found (looked on PATH and in /usr/local/cuda/bin)"
command -v nvidia-smi >/dev/null && nvidia-smi -L || log "nvidia-smi not found; continuing"
cmake_ok() {
  command -v cmake >/dev/null || return 1
  local v; v=$(cmake --version | head -1 | sed 's/[^0-9.]*\([0-9.]*\).*/\1/')
  [ "$(printf '%s\n3.25\n' "$v" | sort -V | head -1)" = "3.25" ]
}
if ! cmake_ok; then
  log "cmake >= 3.25 missing: trying pip install cmake"
  python3 -m pip install --quiet --user cmake >/dev/null 2>&1 || pip install --quiet cmake >/dev/null 2>&1 || true
  export PATH="$HOME/.local/bin:$PATH"
  cmake_ok || fail prerequisites "cmake >= 3.25 not found and pip install cmake failed (offline?)"
fi
nccl_h=""
for d in ${NCCL_ROOT:+$NCCL_ROOT/include} /usr/local/cuda/include /usr/include /usr/local/include; do
  [ -f "$d/nccl.h" ] && { nccl_h="$d/nccl.h"; break; }
done
[ -n "$nccl_h" ] || fail prerequisites "nccl.h not found (set NCCL_ROOT to the NCCL install prefix)"
log "nvcc: $(nvcc --version | tail -1); cmake: $(cmake --version | head -1); nccl: $nccl_h"
sanitizer=$(command -v compute-sanitizer || true)
for candidate in /usr/local/cuda/bin/compute-sanitizer /usr/local/cuda/compute-sanitizer/compute-sanitizer; do
  if [ -z "$sanitizer" ] && [ -x "$candidate" ]; then sanitizer=$candidate; fi
done

tests=ON
doctest_args=()
if [ -f "$root/build/doctest-prefix/lib/cmake/doctest/doctestConfig.cmake" ]; then
  doctest_args=(-Ddoctest_DIR="$root/build/doctest-prefix/lib/cmake/doctest")
elif [ ! -f /usr/lib/cmake/doctest/doctestConfig.cmake ] && [ ! -f /usr/local/lib/cmake/doctest/doctestConfig.cmake ] && [ -z "${doctest_DIR:-}" ]; then
  tests=OFF
  log "doctest not found: the tests are not built (see --stage-doctest); the benchmark still runs"
  record tests skipped 0 "doctest not found; run scripts/device-check.sh --stage-doctest where it is installed and carry build/doctest-prefix"
fi

# ---- 1. build -----------------------------------------------------------------------------
jobs=$(nproc 2>/dev/null || echo 4)
targets=(orch_cuda orch_cuda_bench)
[ "$tests" = ON ] && targets+=(orch_tests_cuda_host orch_tests_cuda_lib orch_tests_cuda_gpu)
run_step configure configure.log cmake -S "$root" -B "$build" -DCMAKE_BUILD_TYPE=Release \
  -DORCH_ENABLE_CUDA=ON -DCMAKE_CUDA_ARCHITECTURES=90 -DORCH_WARNINGS_AS_ERRORS="$( [ "${DEVICE_CHECK_WERROR:-0}" = 1 ] && echo ON || echo OFF)" \
  -DORCH_BUILD_TESTS="$tests" -DORCH_BUILD_BENCHMARKS=OFF -DORCH_BUILD_EXAMPLES=OFF \
  -DORCH_PACKAGE_TESTS=OFF -DORCH_INSTALL=OFF "${doctest_args[@]}" \
  || fail configure "cmake configure failed (see configure.log)"
run_step build build.log cmake --build "$build" -j "$jobs" --target "${targets[@]}" \
  || fail build "build failed (see build.log)"

overall=passed
# ---- 2. tests -----------------------------------------------------------------------------
if [ "$tests" = ON ]; then
  run_step host_tests host-tests.log "$build/tests/cuda/orch_tests_cuda_host" || overall=failed
  run_step lib_tests lib-tests.log "$build/tests/cuda/orch_tests_cuda_lib" || overall=failed
  run_step gpu_tests gpu-tests.log timeout 240 "$build/tests/cuda/orch_tests_cuda_gpu" || overall=failed
  # ---- 3. compute-sanitizer ---------------------------------------------------------------
  if [ -n "$sanitizer" ]; then
    run_step memcheck memcheck.log env ORCH_GPU_TESTS_QUICK=1 timeout 150 "$sanitizer" --tool memcheck \
      --error-exitcode 86 --leak-check full "$build/tests/cuda/orch_tests_cuda_gpu" || overall=failed
  else
    record memcheck skipped 0 "compute-sanitizer not found"
    log "compute-sanitizer not found: memcheck skipped"
  fi
fi

# ---- 4. benchmark -------------------------------------------------------------------------
run_step bench bench.log timeout 150 "$build/cuda/orch_cuda_bench" "$out/bench.json" || overall=failed
[ -f "$out/bench.json" ] && cat "$out/bench.json"

# ---- 5. orch.torch on the GPU: the exchange over NCCL, one rank --------------------------
# The Python package built against this checkout in a venv that sees the machine's torch;
# bench_exchange.py first checks that exchange + inverse return x bit for bit, then times
# orch.torch.exchange against a bare all_to_all_single (target ≤ 1.3× bare + copies).
if python3 -c "import torch, numpy, nanobind, scikit_build_core; assert torch.cuda.is_available()" 2>/dev/null; then
  pyenv="$build/python-venv"
  if run_step python_install python-install.log bash -c \
      "python3 -m venv --system-site-packages '$pyenv' && CMAKE_BUILD_PARALLEL_LEVEL=$jobs '$pyenv/bin/python' -m pip install -q --no-build-isolation --no-deps '$root'"; then
    run_step torch_nccl torch-nccl.log timeout 150 "$pyenv/bin/python" "$root/bench/python/bench_exchange.py" \
      --backend nccl --ranks 1 --sizes-mib 1,4,16,64 --iters 9 || overall=failed
    [ -f "$out/torch-nccl.log" ] && cat "$out/torch-nccl.log"
  else
    overall=failed
  fi
else
  record torch_nccl skipped 0 "python3 with CUDA torch, numpy, nanobind and scikit-build-core not found"
  log "orch.torch on the GPU skipped: python3 with CUDA torch, nanobind and scikit-build-core not found"
fi

write_summary "$overall"
[ "$overall" = passed ]
