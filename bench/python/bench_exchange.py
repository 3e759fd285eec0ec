# SPDX-License-Identifier: Apache-2.0
"""orch.torch.exchange against a bare all_to_all_single of the same bytes (gloo, 127.0.0.1).

For each size per rank: a plan moving `size` bytes from every rank (32 items per rank of
4 KiB rows, each to a random rank; pack and unpack both non-identity, the worst case), timed
in one run as
  exchange   orch.torch.exchange(x, plan): pack + all_to_all_single + unpack (+ output)
  by hand    the same three operations written inline (index_select into a preallocated
             send buffer, all_to_all_single into a preallocated receive buffer, index_select
             into a new output): what a trainer writes without orch
  bare       all_to_all_single of the same splits between preallocated buffers
  pack       index_select of the send rows into a preallocated buffer
  unpack     index_select of the received rows into a preallocated buffer
  backward   torch.autograd.grad through exchange (the inverse plan), against its own bare
             all_to_all_single and copies, and against "by hand, autograd": the by-hand
             sequences as the smallest autograd.Function (what the autograd engine alone adds)
Each iteration starts after a barrier; its time is the slowest rank's; medians are reported.
The round of variants starts one later each iteration (where a variant sits in the round
changes its time when processes share cores): use --iters a multiple of the 13 variants.
overhead = exchange / (bare + pack + unpack): what orch adds beyond the copies it must make,
each part timed alone; exchange / by hand: what orch adds beyond the same work written inline.
Ratios are medians of the per-iteration ratios (paired: both sides from the same round).
Then the index copies every exchange of an orchestrated step makes (identities skipped).

  python bench/python/bench_exchange.py [--ranks 4] [--sizes-mib 1,4,16,64] [--iters 26]
  python bench/python/bench_exchange.py --backend nccl --ranks 1   # GPUs: rank r on cuda:r

Before timing, every size checks that the exchange and its inverse return x exactly.
"""
from __future__ import annotations

import argparse
import datetime
import multiprocessing as mp
import os
import socket
import statistics
import sys
import time

ROW = 4096          # bytes per row (1024 float32: a hidden vector)
ITEMS_PER_RANK = 32
FACTORIES = ("backward", "b_hand_autograd")  # variants that time a backward (see _interleaved)


def _plan(orch, np, ranks: int, size: int, seed: int):
    rng = np.random.default_rng(seed)
    rows = size // ROW
    cuts = np.sort(rng.choice(np.arange(1, rows), ITEMS_PER_RANK - 1, replace=False))
    item_rows = np.tile(np.diff(np.concatenate([[0], cuts, [rows]])), ranks)
    src = orch.Layout.contiguous(np.full(ranks, ITEMS_PER_RANK, dtype=np.int64))
    dst = orch.Layout.from_keys(rng.integers(0, ranks, ranks * ITEMS_PER_RANK).astype(np.int32),
                                ranks, rng.permutation(ranks * ITEMS_PER_RANK))
    return orch.make_plan(src, dst, (item_rows * ROW).astype(np.int64))


def _interleaved(dist, torch, variants: dict, iters: int, device) -> dict:
    """The slowest rank's time of each variant per iteration, in seconds. The
    variants run round-robin (each iteration runs all of them, after a barrier each), so a
    load change on the shared machine hits every variant alike, and the round starts one
    variant later each iteration: with several processes per core, where a variant sits in
    the round changes its time (up to ~0.5 ms at 1 MiB here), so every variant takes every
    place equally often. A variant named in FACTORIES is a factory: its untimed call returns
    the timed function."""
    times = {k: [] for k in variants}
    names = list(variants)
    sync = torch.cuda.synchronize if device.type == "cuda" else (lambda: None)
    for it in range(iters + 1):  # the first round warms up (connections, caches, pages)
        shift = it % len(names)
        for name in names[shift:] + names[:shift]:
            fn = variants[name]
            run = fn() if name in FACTORIES else fn
            sync()
            dist.barrier()
            t0 = time.perf_counter()
            run()
            sync()
            t = torch.tensor([time.perf_counter() - t0], dtype=torch.float64, device=device)
            dist.all_reduce(t, op=dist.ReduceOp.MAX)
            if it:
                times[name].append(float(t))
    return times


def _median(times: dict, name: str) -> float:
    return statistics.median(times[name])


def _paired(times: dict, name: str, parts) -> float:
    """Median over iterations of times[name] / (sum of times[p] for p in parts)."""
    return statistics.median(t / sum(times[p][i] for p in parts)
                             for i, t in enumerate(times[name]))


def _step_copies(orch, ot, np, torch, rank: int, ranks: int):
    """Index copies on this rank for every exchange of an orchestrated omni-7b step."""
    rng = np.random.default_rng([11, rank])
    model = orch.model_preset("omni-7b")
    batch = orch.LocalBatch()
    for _ in range(8):
        text = int(rng.integers(64, 2048))
        media = []
        if rng.random() < 0.6:
            media.append(("image", int(rng.integers(256, 4096)), int(rng.integers(0, text))))
        if rng.random() < 0.3:
            media.append(("audio", int(rng.integers(1000, 12000)), int(rng.integers(0, text))))
        media.sort(key=lambda m: m[2])
        batch.add(text, media=media)
    step = ot.plan_step(batch, model, orch.Topology.uniform(ranks, max(ranks // 2, 1)))
    row = {"text": model.llm.text_bytes_per_token}
    for e in model.encoders:
        row[f"{e.name}.inputs"] = e.input_bytes_per_unit
        row[f"{e.name}.features"] = e.feature_bytes_per_token
    out = {}
    for ex in step.exchanges():
        x = torch.empty((0, row[ex.name]), dtype=torch.uint8)
        out[ex.name] = (ot.copies(ex.forward, rank, x), ot.copies(ex.backward, rank, x))
    return out


def _worker(rank: int, ranks: int, port: int, sizes, iters: int, backend: str, q) -> None:
    os.environ["OMP_NUM_THREADS"] = "1"
    os.environ["GLOO_SOCKET_IFNAME"] = "lo"
    import numpy as np
    import torch
    import torch.distributed as dist

    import orch
    import orch.torch as ot

    torch.set_num_threads(1)
    store = dist.TCPStore("127.0.0.1", port, ranks, is_master=rank == 0,
                          timeout=datetime.timedelta(seconds=300))
    device = torch.device("cpu")
    if backend == "nccl":
        device = torch.device("cuda", rank)
        torch.cuda.set_device(device)
    dist.init_process_group(backend, store=store, rank=rank, world_size=ranks,
                            timeout=datetime.timedelta(seconds=300))
    results = []
    for size in sizes:
        plan = _plan(orch, np, ranks, size, seed=size)
        inv = orch.inverse(plan)
        width = ROW // 4
        fw, bw = plan.rows(rank, ROW), inv.rows(rank, ROW)
        x = torch.randn(fw.source_rows, width, device=device)
        g = torch.randn(fw.destination_rows, width, device=device)
        # Correctness first: the exchange and its inverse give back x bit for bit.
        back = ot.exchange(ot.exchange(x, plan), inv)
        if not torch.equal(back, x):
            raise AssertionError(f"rank {rank}: exchange then inverse did not return x "
                                 f"({size} bytes per rank, backend {backend})")

        def bare_parts(r):
            send = torch.empty(r.source_rows, width, device=device)
            recv = torch.empty(r.destination_rows, width, device=device)
            a = torch.randn(r.source_rows, width, device=device)
            pk = torch.from_numpy(np.asarray(r.pack_index if r.pack_index is not None
                                             else np.arange(r.source_rows))).to(device)
            up = torch.from_numpy(np.asarray(r.unpack_index if r.unpack_index is not None
                                             else np.arange(r.destination_rows))).to(device)
            dst = torch.empty(r.destination_rows, width, device=device)
            ss, rs = [int(v) for v in r.send_splits], [int(v) for v in r.recv_splits]
            h_send = torch.empty(r.source_rows, width, device=device)
            h_recv = torch.empty(r.destination_rows, width, device=device)

            def by_hand(src=a):
                torch.index_select(src, 0, pk, out=h_send)
                dist.all_to_all_single(h_recv, h_send, rs, ss)
                return torch.index_select(h_recv, 0, up)  # a new output, as exchange returns

            return {
                "hand": by_hand,
                "run": by_hand,  # not timed: the sequence, for the autograd reference below
                "bare": lambda: dist.all_to_all_single(recv, send, rs, ss),
                # what any all-to-all that returns a new tensor pays on the CPU: fresh pages
                "bare_new": lambda: dist.all_to_all_single(
                    torch.empty(r.destination_rows, width, device=device), send, rs, ss),
                "pack": lambda: torch.index_select(a, 0, pk, out=send),
                "unpack": lambda: torch.index_select(recv, 0, up, out=dst),
            }

        xr = x.clone().requires_grad_(True)

        def backward():
            y = ot.exchange(xr, plan)  # forward untimed: the variant times the backward alone
            return lambda: torch.autograd.grad(y, xr, g)

        fwd_parts, bwd_parts = bare_parts(fw), bare_parts(bw)
        fwd_run, bwd_run = fwd_parts.pop("run"), bwd_parts.pop("run")

        class HandExchange(torch.autograd.Function):
            """The by-hand sequence as the smallest differentiable exchange: what the
            autograd engine alone costs, without orch."""
            @staticmethod
            def forward(ctx, src):
                return fwd_run(src)

            @staticmethod
            def backward(ctx, grad):
                return bwd_run(grad)

        def hand_backward():
            y = HandExchange.apply(xr)
            return lambda: torch.autograd.grad(y, xr, g)

        variants = {"exchange": lambda: ot.exchange(x, plan), "backward": backward,
                    "b_hand_autograd": hand_backward}
        for k, fn in fwd_parts.items():
            variants[k] = fn
        for k, fn in bwd_parts.items():
            variants["b_" + k] = fn
        t = _interleaved(dist, torch, variants, iters, device)
        results.append((size, t, fw.pack_index is not None, fw.unpack_index is not None))
    copies = _step_copies(orch, ot, np, torch, rank, ranks)
    gathered = [None] * ranks
    dist.all_gather_object(gathered, copies)  # reporting only, not the library's path
    if rank == 0:
        q.put((results, gathered))
    dist.barrier()
    dist.destroy_process_group()


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--ranks", type=int, default=4)
    ap.add_argument("--sizes-mib", default="1,4,16,64")
    ap.add_argument("--iters", type=int, default=26)
    ap.add_argument("--backend", choices=("gloo", "nccl"), default="gloo",
                    help="nccl: rank r on cuda:r (needs --ranks ≤ the GPUs)")
    args = ap.parse_args()
    sizes = [int(float(s) * 2**20) for s in args.sizes_mib.split(",")]
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
    ctx = mp.get_context("spawn")
    q = ctx.Queue()
    procs = [ctx.Process(target=_worker, args=(r, args.ranks, port, sizes, args.iters, args.backend, q))
             for r in range(args.ranks)]
    t0 = time.perf_counter()
    for p in procs:
        p.start()
    results, copies = q.get(timeout=3600)
    for p in procs:
        p.join(timeout=60)
    ms = lambda v: f"{v * 1e3:8.2f}"  # noqa: E731
    print(f"# {args.ranks} {args.backend} processes on 127.0.0.1, rows of {ROW} B, {ITEMS_PER_RANK} items "
          f"per rank, median of {args.iters} (slowest rank), times in ms")
    print("| MiB/rank | pass | orch.torch | by hand | by hand, autograd | bare a2a | "
          "bare a2a, new output | pack | unpack | orch / (bare + copies) | "
          "orch / (bare new + copies) | orch / by hand | orch / by hand, autograd |")
    print("| ---: | --- | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: |")
    for size, t, _, _ in results:
        for label, pre, name in (("forward", "", "exchange"), ("backward", "b_", "backward")):
            m = lambda k: ms(_median(t, pre + k))  # noqa: E731
            cp = [pre + "pack", pre + "unpack"]
            auto = pre + "hand_autograd"
            has_auto = auto in t
            print(f"| {size / 2**20:g} | {label} | {ms(_median(t, name))} | {m('hand')} | "
                  f"{m('hand_autograd') if has_auto else '—'} | "
                  f"{m('bare')} | {m('bare_new')} | {m('pack')} | {m('unpack')} | "
                  f"{_paired(t, name, [pre + 'bare'] + cp):.2f}x | "
                  f"{_paired(t, name, [pre + 'bare_new'] + cp):.2f}x | "
                  f"{_paired(t, name, [pre + 'hand']):.2f}x | "
                  f"{f'{_paired(t, name, [auto]):.2f}x' if has_auto else '—'} |")
    print("\n# index copies per rank (forward, backward) for every exchange of an omni-7b step")
    for name in copies[0]:
        print(f"{name:16s} " + "  ".join(f"r{r}:{c[name][0]},{c[name][1]}"
                                         for r, c in enumerate(copies)))
    print(f"\n# wall {time.perf_counter() - t0:.1f} s")
    return 0


if __name__ == "__main__":
    sys.exit(main())
