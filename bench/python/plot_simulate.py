#!/usr/bin/env python3
# SPDX-License-Identifier: Apache-2.0
"""Plots the output of `orch-bench simulate --json` (or --plot, which calls this script).

usage: plot_simulate.py SIMULATE.json OUT_DIR

Writes three PNGs to OUT_DIR:
  imbalance.png   per-phase max/mean load by strategy (1.0 is perfect balance)
  step_time.png   modelled step time by strategy, split into compute and exchanges
  bytes.png       bytes moved per step by locality class, with the inter-node lower bound
"""
import json
import os
import sys

import matplotlib

matplotlib.use("Agg")  # no display needed
import matplotlib.pyplot as plt  # noqa: E402


def title(config):
    return (f"{config['model']}, {config['ranks']} ranks ({config['nodes']} nodes x "
            f"{config['ranks_per_node']}), {config['examples_per_rank']} examples/rank, "
            f"{config['steps']} steps")


def plot_imbalance(data, out):
    strategies = data["strategies"]
    phases = data["config"]["phases"]
    width = 0.8 / max(1, len(strategies))
    fig, ax = plt.subplots(figsize=(7, 4))
    for k, s in enumerate(strategies):
        values = [p["max_over_mean"] for p in s["phases"]]
        xs = [i + (k - (len(strategies) - 1) / 2) * width for i in range(len(phases))]
        ax.bar(xs, values, width, label=s["name"])
    ax.axhline(1.0, color="black", linewidth=0.8, linestyle="--")
    ax.set_xticks(range(len(phases)))
    ax.set_xticklabels(phases)
    ax.set_ylabel("max / mean rank load")
    ax.set_title("Per-phase imbalance\n" + title(data["config"]), fontsize=9)
    ax.legend()
    fig.tight_layout()
    fig.savefig(os.path.join(out, "imbalance.png"), dpi=120)
    plt.close(fig)


def plot_step_time(data, out):
    strategies = data["strategies"]
    names = [s["name"] for s in strategies]
    compute = [s["compute_s"] for s in strategies]
    exchange = [s["exchange_s"] for s in strategies]
    fig, ax = plt.subplots(figsize=(9, 4))
    ax.bar(names, compute, label="compute (fwd+bwd, critical path)")
    ax.bar(names, exchange, bottom=compute, label="exchanges")
    for i, s in enumerate(strategies):
        ax.text(i, s["step_time_s"], f"{s['speedup_vs_none']:.2f}x", ha="center", va="bottom")
    ax.set_ylim(0, 1.12 * max([s["step_time_s"] for s in strategies] + [1e-12]))
    ax.set_ylabel("modelled step time (s)")
    ax.set_title("Step time and speed-up vs none\n" + title(data["config"]), fontsize=9)
    ax.legend(loc="center left", bbox_to_anchor=(1.01, 0.5), fontsize=8)
    fig.tight_layout()
    fig.savefig(os.path.join(out, "step_time.png"), dpi=120)
    plt.close(fig)


def plot_bytes(data, out):
    strategies = data["strategies"]
    names = [s["name"] for s in strategies]
    gb = 1e9
    self_b = [s["bytes"]["self"] / gb for s in strategies]
    intra = [s["bytes"]["intra_node"] / gb for s in strategies]
    inter = [s["bytes"]["inter_node"] / gb for s in strategies]
    bound = [s["bytes"]["inter_node_lower_bound"] / gb for s in strategies]
    fig, ax = plt.subplots(figsize=(9, 4))
    ax.bar(names, inter, label="inter-node (network)")
    ax.bar(names, intra, bottom=inter, label="intra-node (NVLink)")
    ax.bar(names, self_b, bottom=[a + b for a, b in zip(inter, intra)], label="self (stays)")
    ax.scatter(names, bound, color="black", marker="_", s=400, zorder=3,
               label="inter-node lower bound")
    ax.set_ylabel("GB per step")
    ax.set_title("Bytes moved by locality class\n" + title(data["config"]), fontsize=9)
    ax.legend(loc="center left", bbox_to_anchor=(1.01, 0.5), fontsize=8)
    fig.tight_layout()
    fig.savefig(os.path.join(out, "bytes.png"), dpi=120)
    plt.close(fig)


def main(argv):
    if len(argv) != 3:
        print(__doc__, file=sys.stderr)
        return 2
    with open(argv[1], encoding="utf-8") as f:
        data = json.load(f)
    os.makedirs(argv[2], exist_ok=True)
    plot_imbalance(data, argv[2])
    plot_step_time(data, argv[2])
    plot_bytes(data, argv[2])
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
