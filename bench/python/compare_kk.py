#!/usr/bin/env python3
# SPDX-License-Identifier: Apache-2.0
"""Runs the plain-Python Karmarkar-Karp reference (kk_reference.py) and `orch-bench partition`
on the same instance and prints both times and max loads, with the speed-up of orch over the
Python reference and whether orch is at equal or better quality.

    compare_kk.py [--orch-bench PATH] [--n 8192] [--bins 256] [--seed 1]
                  [--cost tokens|workload] [--repeat 9] [--instance-out FILE]

The instance: n lognormal(7, 1) lengths L (median about 1,100 tokens) capped at 32,768, drawn
with Python's random.Random(seed); cost = L (`--cost workload`: 24576*L + L*L, the FLOPs proxy
verl balances; at 32 items per bin its largest item alone sets the lower bound, so every
algorithm meets it and only the times differ). orch's time is the median of --repeat runs of the partition call
(orch-bench times the call alone, not the file reading); the Python time is one run of the
partitioning alone.
"""

import argparse
import json
import os
import subprocess
import sys
import tempfile
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import kk_reference  # noqa: E402


def make_costs(n, seed, cost):
    import random
    rng = random.Random(seed)
    lengths = [min(32768, max(1, round(rng.lognormvariate(7.0, 1.0)))) for _ in range(n)]
    if cost == "tokens":
        return lengths
    return [24576 * length + length * length for length in lengths]


def orch_bench(binary, path, bins, algo, repeat):
    cmd = [binary, "partition", "--instance", path, "--format", "costs", "--bins", str(bins),
           "--algo", algo, "--repeat", str(repeat), "--json"]
    done = subprocess.run(cmd, capture_output=True, text=True)
    if done.returncode != 0:
        raise SystemExit(f"{' '.join(cmd)} failed ({done.returncode}): {done.stderr.strip()}")
    return json.loads(done.stdout)


def main():
    here = os.path.dirname(os.path.abspath(__file__))
    default_binary = os.path.join(here, "..", "..", "build", "peers-rel", "bench", "orch_bench",
                                  "orch-bench")
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--orch-bench", default=default_binary)
    parser.add_argument("--n", type=int, default=8192)
    parser.add_argument("--bins", type=int, default=256)
    parser.add_argument("--seed", type=int, default=1)
    parser.add_argument("--cost", choices=["tokens", "workload"], default="tokens")
    parser.add_argument("--repeat", type=int, default=9)
    parser.add_argument("--instance-out", help="keep the instance (costs format) here")
    args = parser.parse_args()

    costs = make_costs(args.n, args.seed, args.cost)
    lower = max(-(-sum(costs) // args.bins), max(costs))
    with tempfile.TemporaryDirectory() as tmp:
        path = args.instance_out or os.path.join(tmp, "instance.txt")
        with open(path, "w") as f:
            f.write("\n".join(map(str, costs)) + "\n")

        start = time.perf_counter()
        parts = kk_reference.karmarkar_karp(costs, args.bins)
        python_ms = (time.perf_counter() - start) * 1e3
        python_max = max(sum(costs[i] for i in p) for p in parts)

        rows = [("python_kk (kk_reference.py)", python_max, python_ms, "")]
        results = {}
        for algo in ["auto", "verl_kk", "lpt"]:
            r = orch_bench(args.orch_bench, path, args.bins, algo, args.repeat)
            results[algo] = r
            label = {"auto": "orch partition (default)", "verl_kk": "verl_kk peer (C++)",
                     "lpt": "orch lpt"}[algo]
            rows.append((f"{label}", r["max_load"], r["time_ms"], r.get("selected", "")))

    print(f"instance: n={args.n} bins={args.bins} seed={args.seed} cost={args.cost} "
          f"lower_bound={lower}")
    print(f"{'algorithm':32} {'max_load':>16} {'max/LB':>10} {'time ms':>12}  selected")
    for label, max_load, ms, selected in rows:
        print(f"{label:32} {max_load:>16} {max_load / lower:>10.6f} {ms:>12.3f}  {selected}")
    orch = results["auto"]
    speedup = python_ms / orch["time_ms"] if orch["time_ms"] > 0 else float("inf")
    print(f"speed-up of orch's default over the Python reference: {speedup:,.0f}x")
    print(f"orch at equal or better quality: {'yes' if orch['max_load'] <= python_max else 'NO'}")
    print(f"C++ verl_kk peer matches the Python reference: "
          f"{'yes' if results['verl_kk']['max_load'] == python_max else 'NO'}")
    return 0 if orch["max_load"] <= python_max else 1


if __name__ == "__main__":
    sys.exit(main())
