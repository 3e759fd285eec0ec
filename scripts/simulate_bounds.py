#!/usr/bin/env python3
"""Inter-node bytes against their lower bounds, from `orch-bench simulate --json` output.

Usage: orch-bench simulate ... --json > run.json; scripts/simulate_bounds.py run.json ...
Prints, per strategy: every phase's max / lower bound, and the inter-node bytes of the input
and text exchanges and of the feature exchanges next to the sum of their lower bounds (GB per
step, mean over steps), then the same per exchange.
"""
import json
import sys


def main(paths):
    for path in paths:
        with open(path) as f:
            run = json.load(f)
        ranks = run["config"]["ranks"]
        for s in run["strategies"]:
            phases = " ".join(
                "%s %.5f" % (p["name"], p["max_over_lower_bound"]) for p in s["phases"]
            )
            moved = [x for x in s["exchanges"] if not x["name"].endswith(".features")]
            feats = [x for x in s["exchanges"] if x["name"].endswith(".features")]
            mi = sum(x["bytes"]["inter_node"] for x in moved)
            ml = sum(x["bytes"]["inter_node_lower_bound"] for x in moved)
            fi = sum(x["bytes"]["inter_node"] for x in feats)
            fl = sum(x["bytes"]["inter_node_lower_bound"] for x in feats)
            ratio = "%.2fx" % (mi / ml) if ml else "-"
            print(
                "ranks %d %-9s max/LB: %s | inputs+text inter %.3f GB, LB %.3f GB (%s) | "
                "features inter %.3f GB, LB %.3f GB | plan %.1f ms"
                % (ranks, s["name"], phases, mi / 1e9, ml / 1e9, ratio, fi / 1e9, fl / 1e9,
                   s["plan_ms"])
            )
            for x in s["exchanges"]:
                b = x["bytes"]
                print("    %-16s inter %8.3f GB  LB %8.3f GB"
                      % (x["name"], b["inter_node"] / 1e9, b["inter_node_lower_bound"] / 1e9))


if __name__ == "__main__":
    main(sys.argv[1:])
