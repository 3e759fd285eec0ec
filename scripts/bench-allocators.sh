#!/usr/bin/env bash
# Plan time of the 2,560-rank step (bench_orchestrate, strategies none and orch, 1 and 2
# threads, with the std::sort reference) under several heap allocators, in alternating
# rounds so that every allocator sees the same machine moments:
#   glibc      the default (glibc's malloc as configured by the distribution)
#   top-pad    glibc with MALLOC_TOP_PAD_=256 MiB: the heap keeps 256 MiB of freed memory
#              at its top instead of returning it to the kernel after every step
#   jemalloc   LD_PRELOAD of libjemalloc.so.2, when installed (apt-get install libjemalloc2)
#   tcmalloc   LD_PRELOAD of libtcmalloc_minimal.so.4, when installed
#              (apt-get install libtcmalloc-minimal4)
# Prints, per benchmark and allocator, the median of REPS repetitions for each round, with
# the benchmark's over_sort (plan time / sort time) in parentheses.
#
# Usage: scripts/bench-allocators.sh [bench_orchestrate binary]
#        (default build/release/bench/orch_bench_orchestrate)
# Environment: ROUNDS (3), REPS (5), FILTER (the benchmarks above).
set -euo pipefail

root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
bench="${1:-$root/build/release/bench/orch_bench_orchestrate}"
rounds="${ROUNDS:-3}"
reps="${REPS:-5}"
filter="${FILTER:-bench_reference_sort|bench_orchestrate/strategy:(0|3)/ranks:2560}"
if [ ! -x "$bench" ]; then
  echo "bench-allocators: no benchmark at $bench (cmake --build build/release --target orch_bench_orchestrate)" >&2
  exit 2
fi
find_lib() { # the first installed library of that name, or nothing
  ldconfig -p 2>/dev/null | awk -v n="$1" '$1 == n && !found { print $NF; found = 1 }' || true
}
allocators=(glibc top-pad)
jemalloc="$(find_lib libjemalloc.so.2)"
tcmalloc="$(find_lib libtcmalloc_minimal.so.4)"
[ -n "$jemalloc" ] && allocators+=(jemalloc)
[ -n "$tcmalloc" ] && allocators+=(tcmalloc)

out="$(mktemp -d)"
trap 'rm -rf "$out"' EXIT
echo "load average: $(cut -d' ' -f1-3 /proc/loadavg); allocators: ${allocators[*]}"
for round in $(seq 1 "$rounds"); do
  for a in "${allocators[@]}"; do
    case "$a" in
      glibc) env=() ;;
      top-pad) env=(MALLOC_TOP_PAD_=268435456) ;;
      jemalloc) env=(LD_PRELOAD="$jemalloc") ;;
      tcmalloc) env=(LD_PRELOAD="$tcmalloc") ;;
    esac
    env "${env[@]}" "$bench" --benchmark_filter="$filter" --benchmark_repetitions="$reps" \
      --benchmark_report_aggregates_only=true --benchmark_format=json \
      > "$out/$a.$round.json" 2> /dev/null
  done
done
python3 - "$out" "$rounds" "${allocators[@]}" <<'PY'
import json, sys
out, rounds, allocators = sys.argv[1], int(sys.argv[2]), sys.argv[3:]
rows = {}
for a in allocators:
    for r in range(1, rounds + 1):
        for b in json.load(open(f"{out}/{a}.{r}.json"))["benchmarks"]:
            if b.get("aggregate_name") != "median":
                continue
            name = b["run_name"].replace("bench_orchestrate/", "").replace("/real_time", "")
            cell = f"{b['real_time']:.2f} ms"
            if "over_sort" in b:
                cell += f" ({b['over_sort']:.1f}x)"
            rows.setdefault(name, {}).setdefault(a, []).append(cell)
for name, by in rows.items():
    print(name)
    for a in allocators:
        print(f"  {a:9s} " + " / ".join(by.get(a, [])))
PY
