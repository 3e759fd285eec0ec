#!/usr/bin/env bash
# scripts/device-check.sh — the GPU checks of the CUDA module on a machine with one NVIDIA GPU
# (written for one H200, sm_90; x86-64 with the CUDA toolkit; NCCL either installed with the
# toolkit / the system or only as PyTorch's pip wheel nvidia-nccl-cu13, which
# cmake/FindNCCL.cmake finds through python3):
#   1. configure and build the module's targets (Release, CMAKE_CUDA_ARCHITECTURES=90) with
#      Ninja when it is there (else make), all cores;
#   2. run the module's tests: host logic, compiled-library checks and the gpu tests;
#   3. compute-sanitizer --tool memcheck on the gpu tests (quick mode: fewer seeds); a device
#      the sanitizer does not support is reported as skipped, not failed;
#   4. benchmark pack / unpack by both copy engines (cub::DeviceMemcpy::Batched, the default,
#      and the tile kernel) against a same-size device-to-device cudaMemcpy, and the loopback
#      exchange (algbw, busbw), see cuda/bench/orch_cuda_bench.cpp: the last line says which
#      engine was faster;
#   5. build the Python package and run orch.torch's exchange over NCCL on one rank
#      (bench/python/bench_exchange.py --backend nccl: correctness, then time vs bare).
# The whole script keeps within DEVICE_CHECK_BUDGET_S seconds (default 285, under 5 minutes):
# every step's timeout is cut to what is left, and a step with no time left is skipped.
#
# Output (at most 4 files, in $OUT, or ./device-check-out/ when OUT is unset):
#   device-check.json  status, duration and detail of every step, overall result
#   bench.json         the benchmark's figures (when step 4 ran)
#   device-check.log   everything this script printed
#   logs.tar.gz        one log per step
#
# Usage: scripts/device-check.sh [--dry-run | --stage-doctest]
#   --dry-run        everything up to the first GPU call: prerequisites, configure, build;
#                    the GPU steps are listed with their commands and recorded as "dry-run"
#                    (for checking the script on a machine without a GPU).
#   --stage-doctest  on a machine that has doctest (Debian doctest-dev): copy its relocatable
#                    CMake package to build/doctest-prefix, which this script then uses on an
#                    offline GPU machine without doctest (carry that folder with the tree).
# Without doctest the tests are not built; the benchmark still runs. Environment: OUT;
# DEVICE_CHECK_BUILD (build folder, default build/device-check); DEVICE_CHECK_BUDGET_S;
# DEVICE_CHECK_WERROR=1 (warnings as errors; default off: the device's host compiler may
# differ from CI's, which enforces -Werror already); NCCL_ROOT (an NCCL install prefix).
set -euo pipefail
cd "$(dirname "$0")/.."
root="$PWD"

mode=run
case "${1:-}" in
  --dry-run) mode=dry ;;
  --stage-doctest) mode=stage ;;
  "") ;;
  *) echo "usage: $0 [--dry-run | --stage-doctest]" >&2; exit 2 ;;
esac

if [ "$mode" = stage ]; then
  src=/usr/lib/cmake/doctest
  [ -f "$src/doctestConfig.cmake" ] || { echo "doctest CMake package not found in $src" >&2; exit 1; }
  mkdir -p build/doctest-prefix/include build/doctest-prefix/lib/cmake
  cp -r /usr/include/doctest build/doctest-prefix/include/
  cp -r "$src" build/doctest-prefix/lib/cmake/
  # Debian's export hard-codes the prefix: make it relative to the package's own folder.
  # shellcheck disable=SC2016 # the ${...} is CMake code, written literally
  sed -i 's|^set(_IMPORT_PREFIX "/usr")|get_filename_component(_IMPORT_PREFIX "${CMAKE_CURRENT_LIST_DIR}/../../.." ABSOLUTE)|' \
    build/doctest-prefix/lib/cmake/doctest/doctestTargets.cmake
  echo "doctest staged in build/doctest-prefix"
  exit 0
fi

out="${OUT:-$root/device-check-out}"
mkdir -p "$out"
build="${DEVICE_CHECK_BUILD:-$root/build/device-check}"
logs="$build/device-check-logs"
rm -rf "$logs"
mkdir -p "$logs"
start_all=$(date +%s)
budget=${DEVICE_CHECK_BUDGET_S:-285}
steps=()   # JSON objects, one per step
overall=passed
# Everything printed also goes to device-check.log.
exec > >(tee "$out/device-check.log") 2>&1

log() { printf '[device-check %s] %s\n' "$(date +%T)" "$*"; }
json_escape() { local s=${1//\\/\\\\}; s=${s//\"/\'}; printf '%s' "${s//$'\n'/ }"; }
record() { # name status seconds detail
  steps+=("{\"step\": \"$1\", \"status\": \"$2\", \"seconds\": $3, \"detail\": \"$(json_escape "$4")\"}")
}
left() { echo $(( start_all + budget - $(date +%s) )); }
write_summary() {
  {
    printf '{\n  "overall": "%s",\n  "mode": "%s",\n' "$overall" "$mode"
    printf '  "total_seconds": %s,\n  "budget_seconds": %s,\n' "$(( $(date +%s) - start_all ))" "$budget"
    printf '  "gpu": "%s",\n' "$(json_escape "$(nvidia-smi --query-gpu=name,driver_version --format=csv,noheader 2>/dev/null | head -1 || true)")"
    printf '  "commit": "%s",\n' "$(git -C "$root" rev-parse --short HEAD 2>/dev/null || echo unknown)"
    printf '  "steps": [\n'
    local i
    for i in "${!steps[@]}"; do
      printf '    %s%s\n' "${steps[$i]}" "$([ "$i" -lt $(( ${#steps[@]} - 1 )) ] && echo ,)"
    done
    printf '  ]\n}\n'
  } > "$out/device-check.json"
}
finish() { # runs on every exit: summary and the bundled logs, so that a failure still reports
  local rc=$?
  [ "$rc" -ne 0 ] && [ "$overall" = passed ] && overall=failed
  write_summary
  tar -czf "$out/logs.tar.gz" -C "$logs" . 2>/dev/null || true
  log "summary: $out/device-check.json ($overall); logs: $out/logs.tar.gz"
}
trap finish EXIT
fail() { # step message: a step the rest cannot run without (recorded once)
  log "FAILED at $1: $2"
  local s
  for s in "${steps[@]}"; do
    case $s in *"\"step\": \"$1\""*) overall=failed; exit 1 ;; esac
  done
  record "$1" failed 0 "$2"
  overall=failed
  exit 1
}
# run_step name logfile cap_seconds command...: runs (bounded by min(cap, time left)), times
# and records one step; returns 0 unless it failed. Exit 77 (no device) counts as skipped.
run_step() {
  local name=$1 logfile=$2 cap=$3; shift 3
  local t0 rc=0 limit
  limit=$(left)
  [ "$limit" -gt "$cap" ] && limit=$cap
  if [ "$mode" = dry ] && [ "${DRY_GPU_STEP:-0}" = 1 ]; then
    record "$name" dry-run 0 "would run (timeout ${cap}s): $*"
    log "$name: dry-run, would run: $*"
    return 0
  fi
  if [ "$limit" -lt 5 ]; then
    record "$name" skipped 0 "no time left in the ${budget}s budget"
    log "$name SKIPPED: no time left in the ${budget}s budget"
    return 0
  fi
  t0=$(date +%s)
  log "$name (timeout ${limit}s): $*"
  timeout "$limit" "$@" > "$logs/$logfile" 2>&1 || rc=$?
  local dt=$(( $(date +%s) - t0 ))
  if [ "$rc" -eq 0 ]; then
    record "$name" passed "$dt" "log: $logfile"
    log "$name passed in ${dt}s"
  elif [ "$rc" -eq 77 ]; then
    record "$name" skipped "$dt" "exit 77: no CUDA device visible, log: $logfile"
    log "$name SKIPPED (exit 77: no CUDA device visible)"
    rc=0
  elif [ "$name" = memcheck ] && grep -qiE 'device not supported|not supported on this (device|platform)|unsupported (device|gpu)' "$logs/$logfile"; then
    record "$name" skipped "$dt" "compute-sanitizer does not support this device, log: $logfile"
    log "$name SKIPPED: compute-sanitizer does not support this device"
    rc=0
  else
    [ "$rc" -eq 124 ] && log "$name timed out after ${limit}s"
    record "$name" failed "$dt" "exit $rc$([ "$rc" -eq 124 ] && echo ' (timeout)'), log: $logfile; last lines: $(tail -n 5 "$logs/$logfile" 2>/dev/null || true)"
    log "$name FAILED (exit $rc) in ${dt}s; last lines of $logfile:"
    tail -n 30 "$logs/$logfile" || true
  fi
  return "$rc"
}
gpu_step() { DRY_GPU_STEP=1 run_step "$@"; }

# ---- prerequisites ------------------------------------------------------------------------
export PATH="$PATH:/usr/local/cuda/bin"
command -v nvcc >/dev/null || fail prerequisites "nvcc not found (looked on PATH and in /usr/local/cuda/bin)"
if command -v nvidia-smi >/dev/null; then nvidia-smi -L || true; else log "nvidia-smi not found; continuing"; fi
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
# Ninja when present (make may be missing on the GPU machine), else make.
generator=()
if command -v ninja >/dev/null; then
  generator=(-G Ninja)
elif ! command -v make >/dev/null; then
  fail prerequisites "neither ninja nor make found"
fi
# Where NCCL comes from: the same search as cmake/FindNCCL.cmake (roots, toolkit, system,
# then the pip wheel of python3), reported here so that a missing NCCL fails early.
python=$(command -v python3 || true)
nccl_h=""
for d in ${NCCL_ROOT:+$NCCL_ROOT/include} /usr/local/cuda/include /usr/include /usr/local/include; do
  [ -f "$d/nccl.h" ] && { nccl_h="$d/nccl.h"; break; }
done
if [ -z "$nccl_h" ] && [ -n "$python" ]; then
  wheel=$("$python" -c 'import nvidia.nccl as m; print(list(m.__path__)[0])' 2>/dev/null || true)
  [ -n "$wheel" ] && [ -f "$wheel/include/nccl.h" ] && nccl_h="$wheel/include/nccl.h (pip wheel)"
fi
[ -n "$nccl_h" ] || fail prerequisites "nccl.h not found (no system NCCL, no nvidia-nccl wheel for python3; set NCCL_ROOT)"
log "nvcc: $(nvcc --version | tail -1); cmake: $(cmake --version | head -1); generator: ${generator[*]:-Unix Makefiles}; nccl: $nccl_h"
sanitizer=$(command -v compute-sanitizer || true)
for candidate in /usr/local/cuda/bin/compute-sanitizer /usr/local/cuda/compute-sanitizer/compute-sanitizer; do
  if [ -z "$sanitizer" ] && [ -x "$candidate" ]; then sanitizer=$candidate; fi
done
record prerequisites passed 0 "nccl: $nccl_h; generator: ${generator[*]:-Unix Makefiles}; sanitizer: ${sanitizer:-none}"

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
# A build folder made by another generator cannot be reused.
if [ -f "$build/CMakeCache.txt" ] && ! grep -q "CMAKE_GENERATOR:INTERNAL=${generator[1]:-Unix Makefiles}\$" "$build/CMakeCache.txt"; then
  rm -rf "$build/CMakeCache.txt" "$build/CMakeFiles"
fi
run_step configure configure.log 120 cmake "${generator[@]}" -S "$root" -B "$build" -DCMAKE_BUILD_TYPE=Release \
  -DORCH_ENABLE_CUDA=ON -DCMAKE_CUDA_ARCHITECTURES=90 -DORCH_WARNINGS_AS_ERRORS="$( [ "${DEVICE_CHECK_WERROR:-0}" = 1 ] && echo ON || echo OFF)" \
  -DORCH_BUILD_TESTS="$tests" -DORCH_CORE_TESTS=OFF -DORCH_BUILD_BENCHMARKS=OFF -DORCH_BUILD_EXAMPLES=OFF \
  -DORCH_PACKAGE_TESTS=OFF -DORCH_INSTALL=OFF ${python:+-DNCCL_PYTHON_EXECUTABLE="$python"} "${doctest_args[@]}" \
  || fail configure "cmake configure failed (see configure.log in logs.tar.gz)"
grep -E "Found NCCL|NCCL" "$logs/configure.log" | head -3 || true
run_step build build.log 200 cmake --build "$build" -j "$jobs" --target "${targets[@]}" \
  || fail build "build failed (see build.log in logs.tar.gz)"

# ---- 2. tests -----------------------------------------------------------------------------
if [ "$tests" = ON ]; then
  run_step host_tests host-tests.log 60 "$build/tests/cuda/orch_tests_cuda_host" || overall=failed
  run_step lib_tests lib-tests.log 60 "$build/tests/cuda/orch_tests_cuda_lib" || overall=failed
  gpu_step gpu_tests gpu-tests.log 120 "$build/tests/cuda/orch_tests_cuda_gpu" || overall=failed
  # ---- 3. compute-sanitizer ---------------------------------------------------------------
  if [ -n "$sanitizer" ]; then
    gpu_step memcheck memcheck.log 90 env ORCH_GPU_TESTS_QUICK=1 "$sanitizer" --tool memcheck \
      --error-exitcode 86 --leak-check full "$build/tests/cuda/orch_tests_cuda_gpu" || overall=failed
  else
    record memcheck skipped 0 "compute-sanitizer not found"
    log "compute-sanitizer not found: memcheck skipped"
  fi
fi

# ---- 4. benchmark -------------------------------------------------------------------------
gpu_step bench bench.log 90 "$build/cuda/orch_cuda_bench" "$out/bench.json" || overall=failed
if [ -f "$logs/bench.log" ]; then cat "$logs/bench.log"; fi

# ---- 5. orch.torch on the GPU: the exchange over NCCL, one rank --------------------------
# The Python package built against this checkout in a venv that sees the machine's torch;
# bench_exchange.py first checks that exchange + inverse return x bit for bit, then times
# orch.torch.exchange against a bare all_to_all_single (target ≤ 1.3× bare + copies).
pyenv="$build/python-venv"
install_cmd=(bash -c "python3 -m venv --system-site-packages '$pyenv' && CMAKE_BUILD_PARALLEL_LEVEL=$jobs '$pyenv/bin/python' -m pip install -q --no-build-isolation --no-deps '$root'")
torch_cmd=("$pyenv/bin/python" "$root/bench/python/bench_exchange.py" --backend nccl --ranks 1 --sizes-mib "1,4,16,64" --iters 13)
if [ "$mode" = dry ]; then
  gpu_step python_install python-install.log 120 "${install_cmd[@]}"
  gpu_step torch_nccl torch-nccl.log 60 "${torch_cmd[@]}"
elif [ -n "$python" ] && "$python" -c "import torch, numpy, nanobind, scikit_build_core; assert torch.cuda.is_available()" 2>/dev/null; then
  if run_step python_install python-install.log 120 "${install_cmd[@]}"; then
    run_step torch_nccl torch-nccl.log 60 "${torch_cmd[@]}" || overall=failed
    if [ -f "$logs/torch-nccl.log" ]; then cat "$logs/torch-nccl.log"; fi
  else
    overall=failed
  fi
else
  record torch_nccl skipped 0 "python3 with CUDA torch, numpy, nanobind and scikit-build-core not found"
  log "orch.torch on the GPU skipped: python3 with CUDA torch, nanobind and scikit-build-core not found"
fi

[ "$overall" = passed ]
