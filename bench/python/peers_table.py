#!/usr/bin/env python3
# SPDX-License-Identifier: Apache-2.0
"""Turns the JSON output of orch_bench_peers (Google Benchmark, run with repetitions and
--benchmark_out_format=json) into the Markdown tables of docs/benchmarks.md: per workload and
size, the median wall and CPU time and the quality counters of every algorithm.

    orch_bench_peers --benchmark_repetitions=5 --benchmark_report_aggregates_only=true \\
        --benchmark_out=peers.json --benchmark_out_format=json
    peers_table.py peers.json
"""

import json
import sys


def main(path):
    with open(path) as f:
        data = json.load(f)
    rows = {}
    order = []
    sort_ms = {}
    for b in data["benchmarks"]:
        if b.get("aggregate_name") != "median":
            continue
        name = b["run_name"]
        scale = {"ms": 1.0, "us": 1e-3, "ns": 1e-6, "s": 1e3}[b["time_unit"]]
        if name.startswith("std_sort_keys/"):
            sort_ms[name.split("/")[1]] = (b["real_time"] * scale, b["cpu_time"] * scale)
            continue
        _, workload, size, algo = name.split("/")
        key = (workload, size)
        if key not in rows:
            rows[key] = []
            order.append(key)
        rows[key].append((algo, b["real_time"] * scale, b["cpu_time"] * scale,
                          b.get("ratio_to_lower_bound"), b.get("ratio_to_count_bound"),
                          b.get("max_over_mean")))
    for key in order:
        workload, size = key
        n = size.split("x")[0]
        print(f"\n**{workload}, {size.replace('x', ' items / ')} bins**", end="")
        if n in sort_ms:
            print(f" (std::sort of {n} keys, same run: {sort_ms[n][0]:.3g} ms wall, "
                  f"{sort_ms[n][1]:.3g} ms CPU)", end="")
        print("\n")
        print("| algorithm | median ms (wall) | median ms (CPU) | max / lower bound "
              "| max / count bound | max / mean |")
        print("| --- | ---: | ---: | ---: | ---: | ---: |")
        for algo, wall, cpu, ratio, count, mom in rows[key]:
            count_text = f"{count:.4f}" if count is not None else ""
            print(f"| {algo} | {wall:.3g} | {cpu:.3g} | {ratio:.5f} | {count_text} | {mom:.5f} |")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1]))
