#!/usr/bin/env python3
# SPDX-License-Identifier: Apache-2.0
"""A plain-Python k-way Karmarkar-Karp (largest differencing method) of the kind RL and
multimodal training frameworks ship today: a heapq of partial partitions, each a list of k
bins holding Python lists of (index, cost) pairs, re-sorted after every merge. It makes the
same decisions as verl's `karmarkar_karp` (verl/utils/seqlen_balancing.py) and as orch's
C++ re-implementation of it (bench/peers/verl_kk.hpp), so the three agree on every input;
it exists as the speed reference point ("orch is >= 1000x faster at equal or better
quality"). Written for orch; no code was copied.

    kk_reference.py --instance FILE [--format pcmax|costs|detect] [--bins K]
                    [--equal-counts] [--json]

prints the max load, the lower bound max(ceil(sum/k), max cost) and the time of the
partitioning alone (reading the file is not timed).
"""

import argparse
import heapq
import json
import sys
import time


class Bin:
    """One bin of a partial partition: its total and its (index, cost) members in order."""

    __slots__ = ("total", "members")

    def __init__(self):
        self.total = 0
        self.members = []

    def __lt__(self, other):
        # total, then member count, then the member lists themselves
        if self.total != other.total:
            return self.total < other.total
        if len(self.members) != len(other.members):
            return len(self.members) < len(other.members)
        return self.members < other.members


class Partial:
    """k bins, kept in decreasing order; the heap pops the largest spread first."""

    __slots__ = ("bins",)

    def __init__(self, k, seeds):
        self.bins = [Bin() for _ in range(k)]
        for b, (index, cost) in zip(self.bins, seeds):
            b.members.append((index, cost))
            b.total += cost
        self.bins.sort(reverse=True)

    def spread(self):
        return self.bins[0].total - self.bins[-1].total

    def __lt__(self, other):
        mine, theirs = self.spread(), other.spread()
        if mine != theirs:
            return mine > theirs
        return other.bins[0] < self.bins[0]

    def absorb(self, other):
        """Pair my i-th largest bin with the other's i-th smallest, then re-sort."""
        k = len(self.bins)
        for i in range(k):
            mine, theirs = self.bins[i], other.bins[k - 1 - i]
            mine.members.extend(theirs.members)
            mine.total += theirs.total
        self.bins.sort(reverse=True)


def karmarkar_karp(costs, k, equal_counts=False):
    """Returns k lists of item indices, largest bin first."""
    ascending = sorted((c, i) for i, c in enumerate(costs))
    heap = []
    if equal_counts:
        if len(costs) % k != 0:
            raise ValueError(f"equal counts need n a multiple of k: n={len(costs)}, k={k}")
        for start in range(0, len(ascending), k):
            group = [(i, c) for c, i in ascending[start:start + k]]
            heapq.heappush(heap, Partial(k, group))
    else:
        for c, i in ascending:
            heapq.heappush(heap, Partial(k, [(i, c)]))
    if not heap:
        return [[] for _ in range(k)]
    while len(heap) > 1:
        first = heapq.heappop(heap)
        second = heapq.heappop(heap)
        first.absorb(second)
        heapq.heappush(heap, first)
    return [[i for i, _ in b.members] for b in heap[0].bins]


def read_instance(path, fmt):
    """(costs, bins or None) from a pcmax or costs file, as `orch-bench partition` reads it."""
    with open(path) as f:
        lines = f.read().splitlines()
    if fmt == "detect":
        first = next((line.split() for line in lines if line.split()), [])
        fmt = "pcmax" if first[:1] == ["p"] else "costs"
    if fmt == "pcmax":
        head = lines[0].split() if lines else []
        if len(head) != 4 or head[:2] != ["p", "p_cmax"]:
            raise ValueError(f"{path}:1: expected 'p p_cmax <n> <m>'")
        n, m = int(head[2]), int(head[3])
        body = [int(t) for t in lines[1].split()] if len(lines) > 1 else []
        if len(body) != n + 1 or body[-1] != 0:
            raise ValueError(f"{path}:2: expected {n} costs followed by 0")
        return body[:n], m
    return [int(line) for line in lines if line.strip()], None


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--instance", required=True)
    parser.add_argument("--format", default="detect", choices=["pcmax", "costs", "detect"])
    parser.add_argument("--bins", type=int)
    parser.add_argument("--equal-counts", action="store_true")
    parser.add_argument("--json", action="store_true")
    args = parser.parse_args(argv)
    costs, bins = read_instance(args.instance, args.format)
    k = args.bins or bins
    if not k:
        parser.error("--bins is required for a costs file")
    start = time.perf_counter()
    parts = karmarkar_karp(costs, k, args.equal_counts)
    elapsed_ms = (time.perf_counter() - start) * 1e3
    max_load = max(sum(costs[i] for i in p) for p in parts)
    lower = max(-(-sum(costs) // k), max(costs, default=0))
    algo = "python_kk_equal" if args.equal_counts else "python_kk"
    if args.json:
        print(json.dumps({"algo": algo, "n": len(costs), "bins": k, "max_load": max_load,
                          "lower_bound": lower, "proven_optimal": max_load == lower,
                          "time_ms": round(elapsed_ms, 4)}, separators=(",", ":")))
    else:
        print(f"{algo}: n={len(costs)} bins={k} max_load={max_load} lower_bound={lower} "
              f"ratio={max_load / lower if lower else 1.0:.6f} time={elapsed_ms:.3f} ms")
    return 0


if __name__ == "__main__":
    sys.exit(main())
