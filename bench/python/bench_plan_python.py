#!/usr/bin/env python3
# SPDX-License-Identifier: Apache-2.0
"""Planning from Python vs C++ at 2,560 ranks x 32 examples (docs/benchmarks.md, "Python
planning").

One step's columns (lengths shaped like bench/bench_orchestrate.cpp's table: log-normal text,
0-3 images of 256-4,096 patches, an audio clip of 200-3,000 frames on 30 % of the examples)
are generated once with a fixed seed and written to a file. Both sides then time the same
work on the same columns, table construction included:

- Python: ``orch.ItemTable.from_arrays(...)`` + ``orch.orchestrate(...)`` (the installed
  package, Release build);
- C++: ``orch::item_table::from_columns(...)`` + ``orch::orchestrate(...)`` in
  bench/python/bench_plan_cpp.cpp, compiled here with the system compiler at the flags of
  CMake's Release build (-O3 -DNDEBUG, -std=c++20).

Rounds alternate the two sides (so both see the same machine load); the figure is the
ratio of the medians over all repetitions. Both sides must produce the same plan hash.

    python bench/python/bench_plan_python.py [--rounds 5] [--reps 10]
"""

from __future__ import annotations

import argparse
import os
import pathlib
import statistics
import subprocess
import sys
import time

import numpy as np

import orch

ROOT = pathlib.Path(__file__).resolve().parents[2]


def bench_model() -> orch.ModelDescription:
    return orch.ModelDescription(
        encoders=[
            orch.EncoderModel(name="vision", fields=["image", "video"],
                              cost=orch.AttentionCost(1300, 2, 0), output_divisor=4,
                              input_bytes_per_unit=14 * 14 * 3 * 2, feature_bytes_per_token=3584 * 2),
            orch.EncoderModel(name="audio", fields=["audio"], cost=orch.AttentionCost(1300, 1, 0),
                              output_divisor=4, input_bytes_per_unit=128 * 2,
                              feature_bytes_per_token=3584 * 2),
        ],
        llm=orch.LLMModel(cost=orch.AttentionCost(15000, 1, 0), text_bytes_per_token=8))


def make_columns(ranks: int, per_rank: int, seed: int):
    rng = np.random.default_rng(seed)
    n = ranks * per_rank
    owner = np.repeat(np.arange(ranks, dtype=np.int32), per_rank)
    local = np.tile(np.arange(per_rank, dtype=np.int64), ranks)
    text = np.maximum(8, np.round(np.exp(5.5 + 0.9 * rng.standard_normal(n)))).astype(np.int64)
    images = rng.integers(0, 4, n)
    audio = rng.random(n) < 0.3
    count = images + audio
    media_example = np.repeat(np.arange(n, dtype=np.int64), count)
    first = np.concatenate(([0], np.cumsum(count)))
    k = np.arange(len(media_example)) - first[media_example]  # position inside the example
    is_audio = k >= images[media_example]
    media_field = is_audio.astype(np.int32)  # 0 image, 1 audio
    media_length = np.where(is_audio, rng.integers(200, 3001, len(k)), rng.integers(256, 4097, len(k)))
    media_position = np.where(is_audio, text[media_example], 0).astype(np.int64)
    return [owner, local, text, media_example, media_field, media_length.astype(np.int64), media_position]


def build_cpp(out_dir: pathlib.Path) -> pathlib.Path:
    src = ROOT / "bench" / "python" / "bench_plan_cpp.cpp"
    exe = out_dir / "bench_plan_cpp"
    headers = max(p.stat().st_mtime for p in (ROOT / "include").rglob("*.hpp"))
    if not exe.exists() or exe.stat().st_mtime < max(src.stat().st_mtime, headers):
        cxx = os.environ.get("CXX", "c++")
        cmd = [cxx, "-std=c++20", "-O3", "-DNDEBUG", f"-I{ROOT / 'include'}", str(src), "-o", str(exe),
               "-pthread"]
        print("building:", " ".join(cmd), file=sys.stderr)
        subprocess.run(cmd, check=True)
    return exe


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--ranks", type=int, default=2560)
    ap.add_argument("--per-rank", type=int, default=32)
    ap.add_argument("--ranks-per-node", type=int, default=8)
    ap.add_argument("--rounds", type=int, default=5)
    ap.add_argument("--reps", type=int, default=10)
    ap.add_argument("--seed", type=int, default=2026)
    args = ap.parse_args()

    out_dir = ROOT / "build" / "python-bench"
    out_dir.mkdir(parents=True, exist_ok=True)
    exe = build_cpp(out_dir)
    cols = make_columns(args.ranks, args.per_rank, args.seed)
    data = out_dir / "columns.bin"
    with open(data, "wb") as f:
        np.array([len(cols[0]), len(cols[3])], dtype="<i8").tofile(f)
        for c in cols:
            c.astype("<i8").tofile(f)

    model = bench_model()
    topo = orch.Topology.uniform(args.ranks, args.ranks_per_node)
    names = ["image", "audio"]

    def python_once() -> tuple[float, int]:
        t0 = time.perf_counter()
        table = orch.ItemTable.from_arrays(*cols, field_names=names)
        step = orch.orchestrate(table, model, topo)
        return (time.perf_counter() - t0) * 1e3, step.hash

    python_once()  # warm-up
    py_ms: list[float] = []
    cpp_ms: list[float] = []
    hashes = set()
    for _ in range(args.rounds):
        out = subprocess.run([str(exe), str(data), str(args.ranks), str(args.ranks_per_node),
                              str(args.reps)], check=True, capture_output=True, text=True).stdout.split("\n")
        cpp_ms += [float(x) for x in out if x and not x.startswith("hash")]
        hashes.add(int(next(x for x in out if x.startswith("hash")).split()[1]))
        for _ in range(args.reps):
            ms, h = python_once()
            py_ms.append(ms)
            hashes.add(h)
    if len(hashes) != 1:
        print(f"plan hashes differ between C++ and Python: {sorted(hashes)}", file=sys.stderr)
        return 1
    py, cpp = statistics.median(py_ms), statistics.median(cpp_ms)
    table = orch.ItemTable.from_arrays(*cols, field_names=names)
    print(f"{args.ranks} ranks x {args.per_rank} examples ({table.examples} examples, "
          f"{table.media_items} media items), strategy orch, 1 thread, plan hash {hashes.pop()}")
    print(f"C++    from_columns + orchestrate: median {cpp:8.2f} ms over {len(cpp_ms)} "
          f"(min {min(cpp_ms):.2f}, max {max(cpp_ms):.2f})")
    print(f"Python from_arrays  + orchestrate: median {py:8.2f} ms over {len(py_ms)} "
          f"(min {min(py_ms):.2f}, max {max(py_ms):.2f})")
    print(f"Python / C++: {py / cpp:.3f} ({100 * (py / cpp - 1):+.1f} %)")
    return 0


if __name__ == "__main__":
    sys.exit(main())
