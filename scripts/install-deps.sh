#!/usr/bin/env bash
# Installs the Debian packages orch needs to build, test and benchmark, when any is missing.
# Idempotent and quiet when everything is present. Needs root (or sudo) only to install.
set -euo pipefail

packages=(cmake make g++ clang clang-format doctest-dev libeigen3-dev nlohmann-json3-dev libbenchmark-dev python3
          libopenmpi-dev openmpi-bin)
missing=()
for p in "${packages[@]}"; do
  dpkg -s "$p" >/dev/null 2>&1 || missing+=("$p")
done
if [ ${#missing[@]} -eq 0 ]; then
  exit 0
fi
echo "orch: installing ${missing[*]}" >&2
sudo_cmd=()
if [ "$(id -u)" -ne 0 ]; then
  sudo_cmd=(sudo)
fi
export DEBIAN_FRONTEND=noninteractive
"${sudo_cmd[@]}" apt-get update -qq
"${sudo_cmd[@]}" apt-get install -y -qq --no-install-recommends "${missing[@]}" >/dev/null
