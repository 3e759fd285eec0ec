# SPDX-License-Identifier: Apache-2.0
"""Plan step t+1 on a background thread while step t computes (the overlap the OrchMLLM paper
uses): orch.orchestrate releases the GIL, so the planner and the trainer's Python thread run
side by side. Checks that the background plan equals a plan made in the foreground, and that
the trainer thread kept running while the planner worked.

    python examples/python/prefetch_planning.py [--ranks 512] [--steps 4]
"""
import argparse
import concurrent.futures
import sys
import threading
import time

import numpy as np

import orch


def sample_step(rng, ranks, per_rank, model):
    """One step's item table from arrays: text, and an image or a (long) audio clip."""
    n = ranks * per_rank
    owner = np.repeat(np.arange(ranks, dtype=np.int32), per_rank)
    local = np.tile(np.arange(per_rank, dtype=np.int64), ranks)
    text = rng.integers(20, 2000, n)
    kind = rng.integers(0, 3, n)  # 0: text only, 1: image, 2: audio
    media_example = np.flatnonzero(kind > 0)
    media_field = (kind[media_example] - 1).astype(np.int32)  # 0: image, 1: audio
    media_length = np.where(media_field == 0, rng.integers(64, 4096, media_example.size),
                            rng.integers(100, 30000, media_example.size))
    media_position = np.zeros(media_example.size, dtype=np.int64)
    return orch.ItemTable.from_arrays(owner, local, text, media_example, media_field,
                                      media_length, media_position,
                                      field_names=["image", "audio"], model=model)


def busy_compute(seconds):
    """A stand-in for step t's compute that holds the GIL (pure Python)."""
    done, stop = 0, time.perf_counter() + seconds
    while time.perf_counter() < stop:
        done += 1
    return done


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--ranks", type=int, default=512)
    parser.add_argument("--examples-per-rank", type=int, default=16)
    parser.add_argument("--steps", type=int, default=4)
    args = parser.parse_args()

    model = orch.model_preset("omni-7b")
    topo = orch.Topology.uniform(args.ranks, 8)
    rng = np.random.default_rng(2026)
    tables = [sample_step(rng, args.ranks, args.examples_per_rank, model)
              for _ in range(args.steps + 1)]

    ok = True
    with concurrent.futures.ThreadPoolExecutor(max_workers=1) as planner:
        upcoming = planner.submit(orch.orchestrate, tables[0], model, topo)
        for t in range(args.steps):
            plan = upcoming.result()  # step t's plan, made while step t-1 computed
            upcoming = planner.submit(orch.orchestrate, tables[t + 1], model, topo)
            # Step t's "compute" runs while the planner works on step t+1.
            start = time.perf_counter()
            while not upcoming.done():
                busy_compute(0.002)
            overlapped = time.perf_counter() - start
            same = orch.orchestrate(tables[t], model, topo).hash == plan.hash
            ok = ok and same
            print(f"step {t}: plan {plan.hash:016x} (foreground plan equal: {same}), "
                  f"llm max/mean {plan.llm.max_over_mean:.3f}, "
                  f"step {t + 1} planned during {overlapped * 1e3:.1f} ms of compute")
        upcoming.result()

    # The GIL is released while planning: the compute thread keeps its pace beside it.
    solo = busy_compute(0.2)
    planning = threading.Thread(target=lambda: [orch.orchestrate(tables[0], model, topo)
                                                for _ in range(3)])
    planning.start()
    beside = busy_compute(0.2)
    planning.join()
    kept = beside / solo
    print(f"compute pace beside the planner: {kept:.0%} of its pace alone")
    ok = ok and kept > 0.3
    print("all checks passed" if ok else "CHECK FAILED")
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
