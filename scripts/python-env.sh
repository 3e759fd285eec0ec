#!/usr/bin/env bash
# Makes (or reuses) the virtual environment the Python tests run in and installs the orch
# package into it from this checkout; prints the environment's path on stdout.
#
#   scripts/python-env.sh            # ${ORCH_VENV:-~/.cache/orch/venv}
#   "$(scripts/python-env.sh)/bin/python" -m pytest python/tests
#
# The venv is created only when missing or incomplete, PyPI packages are installed only when
# one is missing (a rerun takes seconds), then `pip install --no-build-isolation .` rebuilds
# the extension incrementally in build/python/<wheel tag> (pyproject.toml's build-dir).
# Environment: ORCH_VENV (path), ORCH_PYTHON (interpreter that creates the venv, default
# python3), ORCH_PIP_ARGS (extra pip arguments for the PyPI installs, e.g. an index URL for a
# CPU-only torch), CMAKE_BUILD_PARALLEL_LEVEL (default 2).
set -euo pipefail

root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
venv="${ORCH_VENV:-$HOME/.cache/orch/venv}"
python="${ORCH_PYTHON:-python3}"
# module name to import → PyPI requirement
modules=(numpy torch pytest nanobind scikit_build_core)
requirements=("numpy>=1.24" torch pytest "nanobind>=2.0" "scikit-build-core>=0.10")

log() { echo "python-env: $*" >&2; }

if [ ! -x "$venv/bin/python" ] || ! "$venv/bin/python" -c "import sys; assert sys.version_info >= (3, 10)" 2>/dev/null; then
  if ! "$python" -c "import sys, venv, ensurepip; assert sys.version_info >= (3, 10)" 2>/dev/null; then
    log "$python is missing, older than 3.10 or lacks venv/ensurepip (Debian: apt-get install python3-venv python3-dev)"
    exit 1
  fi
  log "creating $venv"
  rm -rf "$venv"
  "$python" -m venv "$venv"
fi

missing=()
for i in "${!modules[@]}"; do
  "$venv/bin/python" -c "import ${modules[$i]}" 2>/dev/null || missing+=("${requirements[$i]}")
done
if [ ${#missing[@]} -gt 0 ]; then
  log "installing ${missing[*]}"
  # shellcheck disable=SC2086 # ORCH_PIP_ARGS is a list of arguments
  "$venv/bin/python" -m pip install -q ${ORCH_PIP_ARGS:-} "${missing[@]}" >&2
fi

log "pip install --no-build-isolation $root"
CMAKE_BUILD_PARALLEL_LEVEL="${CMAKE_BUILD_PARALLEL_LEVEL:-2}" \
  "$venv/bin/python" -m pip install -q --no-build-isolation --no-deps "$root" >&2
"$venv/bin/python" -c "import orch; print('python-env: orch', orch.__version__)" >&2
echo "$venv"
