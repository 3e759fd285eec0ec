#!/usr/bin/env bash
# Compile cost of a trainer's translation unit: one TU that includes orch, builds an item
# table, a preset model and a topology, calls orch::orchestrate and reads the results.
# Prints the median wall time and peak RSS (GNU time's "Maximum resident set size") of
# RUNS compilations (default 3) for each mode:
#   umbrella      #include <orch/orch.hpp> + <orch/orchestrate/orchestrate.hpp> + <orch/orchestrate/model_presets.hpp>
#   orchestrate   #include <orch/orchestrate/orchestrate.hpp> + <orch/orchestrate/model_presets.hpp> only
#   include-only  the umbrella includes and an empty main (the cost of parsing alone)
#   compiled      the umbrella TU with -DORCH_COMPILED (what linking orch::compiled does)
#   compiled-orchestrate   the orchestrate TU with -DORCH_COMPILED
#   library       src/orchestrate.cpp, the one TU that orch::compiled builds (paid once)
# Wall time is the figure of record; user CPU time is printed beside it because it moves
# less when other jobs share the machine.
#
# Usage: scripts/compile-cost.sh [compiler...]      (default: g++; e.g. g++ clang++-14)
# Environment: RUNS (3), FLAGS (-O2), MODES (all of the above, space-separated), ORCH_INCLUDE
# (the include folder measured, default this checkout's include/; e.g. an older tree's, to
# compare).
# The machine may be shared: the load average is printed with the figures.
set -euo pipefail

root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
include="${ORCH_INCLUDE:-$root/include}"
runs="${RUNS:-3}"
flags="${FLAGS:--O2}"
modes="${MODES:-umbrella orchestrate include-only compiled compiled-orchestrate library}"
compilers=("$@")
if [ ${#compilers[@]} -eq 0 ]; then
  compilers=(g++)
fi
if [ ! -x /usr/bin/time ]; then
  echo "compile-cost: /usr/bin/time (Debian package 'time') is missing" >&2
  exit 1
fi

work="$(mktemp -d)"
trap 'rm -rf "$work"' EXIT

cat >"$work/body.inc" <<'EOF'
#include <cstdio>
#include <vector>

int main() {
  const orch::model_description model = orch::model_preset("omni-7b");
  orch::item_table table(model);
  const orch::rank_t ranks = 16;
  for (orch::rank_t r = 0; r < ranks; ++r) {
    for (orch::index_t i = 0; i < 8; ++i) {
      const orch::length_t text = 100 + 37 * ((r * 8 + i) % 29);
      std::vector<orch::media_spec> media;
      if (i % 2 == 0) {
        media.push_back({"image", 256 + 64 * (i + r % 5), 0});
      }
      if (i % 3 == 0) {
        media.push_back({"audio", 400 + 50 * r, text / 2});
      }
      table.add_example(r, i, text, media);
    }
  }
  const auto topo = orch::topology::uniform(ranks, 8);
  orch::orchestrate_options options;
  options.threads = 2;
  const orch::step_plan sp = orch::orchestrate(table, model, topo, options);
  for (const orch::phase_result& ph : sp.phases()) {
    std::printf("%s max/bound %.3f\n", ph.name.c_str(), ph.balance.max_over_lower_bound);
  }
  for (const orch::exchange_result& x : sp.exchanges()) {
    std::printf("%s inter %lld\n", x.name.c_str(), static_cast<long long>(x.bytes.inter_node));
  }
  std::printf("hash %016llx\n", static_cast<unsigned long long>(sp.hash));
  return 0;
}
EOF
{
  echo '#include <orch/orch.hpp>'
  echo '#include <orch/orchestrate/model_presets.hpp>'
  echo '#include <orch/orchestrate/orchestrate.hpp>'
  echo '#include "body.inc"'
} >"$work/umbrella.cpp"
{
  echo '#include <orch/orchestrate/model_presets.hpp>'
  echo '#include <orch/orchestrate/orchestrate.hpp>'
  echo '#include "body.inc"'
} >"$work/orchestrate.cpp"
{
  echo '#include <orch/orch.hpp>'
  echo '#include <orch/orchestrate/model_presets.hpp>'
  echo '#include <orch/orchestrate/orchestrate.hpp>'
  echo 'int main() { return 0; }'
} >"$work/include-only.cpp"

median() { sort -n | awk '{v[NR] = $1} END {print v[int((NR + 1) / 2)]}'; }

echo "load: $(uptime | sed 's/.*load average/load average/')"
printf '%-10s %-21s %7s %7s %8s   (medians of %s runs, %s)\n' compiler mode "wall s" "user s" \
  "peak MB" "$runs" "$flags"
for cxx in "${compilers[@]}"; do
  for mode in $modes; do
    extra=()
    case "$mode" in
    compiled)
      src="$work/umbrella.cpp"
      extra=(-DORCH_COMPILED)
      ;;
    compiled-orchestrate)
      src="$work/orchestrate.cpp"
      extra=(-DORCH_COMPILED)
      ;;
    library)
      src="$include/../src/orchestrate.cpp"
      extra=(-DORCH_COMPILED)
      if [ ! -f "$src" ]; then
        continue
      fi
      ;;
    *) src="$work/$mode.cpp" ;;
    esac
    : >"$work/times"
    : >"$work/user"
    : >"$work/rss"
    for _ in $(seq "$runs"); do
      # shellcheck disable=SC2086 # FLAGS is a list of flags
      /usr/bin/time -v "$cxx" -std=c++20 $flags -I"$include" "${extra[@]}" -c "$src" \
        -o /dev/null 2>"$work/log" || {
        cat "$work/log" >&2
        exit 1
      }
      awk -F': ' '/Elapsed \(wall clock\)/ {
        n = split($2, p, ":"); s = 0; for (i = 1; i <= n; ++i) s = s * 60 + p[i]; print s }' \
        "$work/log" >>"$work/times"
      awk -F': ' '/User time \(seconds\)/ {print $2}' "$work/log" >>"$work/user"
      awk -F': ' '/Maximum resident set size/ {printf "%.0f\n", $2 / 1024}' "$work/log" \
        >>"$work/rss"
    done
    printf '%-10s %-21s %7.2f %7.2f %8s\n' "$cxx" "$mode" "$(median <"$work/times")" \
      "$(median <"$work/user")" "$(median <"$work/rss")"
  done
done
echo "load: $(uptime | sed 's/.*load average/load average/')"
