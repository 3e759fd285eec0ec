# SPDX-License-Identifier: Apache-2.0
"""A pool of gloo processes on 127.0.0.1 for multi-process tests (torch tests only).

Pool(world) spawns `world` processes once; pool.run(fn, *args) runs fn(rank, world, *args)
on every one of them and returns the per-rank outcomes, within a timeout: a job that does not
finish in time terminates the whole pool (so a hang is a failure, never a stuck test run).
fn must be a module-level function (it is sent by module and name).
"""
from __future__ import annotations

import dataclasses
import importlib
import multiprocessing as mp
import os
import queue
import socket
import sys
import time
import traceback


@dataclasses.dataclass
class Outcome:
    rank: int
    ok: bool
    value: object = None       # fn's return value when ok
    error: str = ""            # exception type name
    message: str = ""          # str(exception)
    trace: str = ""

    def raised(self, kind: str) -> bool:
        return not self.ok and self.error == kind


def free_port() -> int:
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def _worker(rank: int, world: int, port: int, jobs, results, path) -> None:
    os.environ["OMP_NUM_THREADS"] = "1"
    os.environ["GLOO_SOCKET_IFNAME"] = "lo"
    sys.path[:0] = [p for p in path if p not in sys.path]
    import datetime

    import torch
    import torch.distributed as dist

    torch.set_num_threads(1)
    store = dist.TCPStore("127.0.0.1", port, world, is_master=rank == 0,
                          timeout=datetime.timedelta(seconds=60))
    dist.init_process_group("gloo", store=store, rank=rank, world_size=world,
                            timeout=datetime.timedelta(seconds=60))
    results.put(("ready", rank, None))
    while True:
        job = jobs.get()
        if job is None:
            break
        job_id, module, name, args = job
        try:
            fn = getattr(importlib.import_module(module), name)
            value = fn(rank, world, *args)
            results.put((job_id, rank, Outcome(rank, True, value)))
        except BaseException as e:  # noqa: BLE001 - reported to the parent
            results.put((job_id, rank, Outcome(rank, False, None, type(e).__name__, str(e),
                                               traceback.format_exc())))
    dist.destroy_process_group()


class Pool:
    def __init__(self, world: int, start_timeout: float = 120.0):
        self.world = world
        self.start_timeout = start_timeout
        self._start()

    def _start(self) -> None:
        ctx = mp.get_context("spawn")
        world = self.world
        self._results = ctx.Queue()
        self._jobs = [ctx.Queue() for _ in range(world)]
        port = free_port()
        self._procs = [ctx.Process(target=_worker,
                                   args=(r, world, port, self._jobs[r], self._results,
                                         list(sys.path)), daemon=True)
                       for r in range(world)]
        for p in self._procs:
            p.start()
        self._next = 0
        self.broken = False
        self.grace_s = 10.0
        self._collect("ready", self.start_timeout)

    def _collect(self, job_id, timeout: float) -> list:
        got: dict[int, object] = {}
        deadline = time.monotonic() + timeout
        while len(got) < self.world:
            left = deadline - time.monotonic()
            dead = [p.exitcode for p in self._procs if p.exitcode is not None]
            if left <= 0 or dead:
                self.close(force=True)
                missing = sorted(set(range(self.world)) - set(got))
                why = f"exit codes {dead}" if dead else "deadline passed"
                raise TimeoutError(f"job {job_id}: ranks {missing} did not answer ({why}); "
                                   f"answers so far: {got}")
            try:
                jid, rank, value = self._results.get(timeout=min(left, 1.0))
            except queue.Empty:
                continue
            if jid == job_id:
                got[rank] = value
                if isinstance(value, Outcome) and not value.ok:
                    # the others may wait in a collective the failed rank never joins
                    deadline = min(deadline, time.monotonic() + self.grace_s)
        return [got[r] for r in range(self.world)]

    def run(self, fn, *args, timeout: float = 60.0) -> list[Outcome]:
        """fn(rank, world, *args) on every rank; the outcomes in rank order."""
        if self.broken:  # an earlier job hung: start afresh
            self._start()
        job_id = self._next
        self._next += 1
        for q in self._jobs:
            q.put((job_id, fn.__module__, fn.__name__, args))
        return self._collect(job_id, timeout)

    def values(self, fn, *args, timeout: float = 60.0) -> list:
        """run(), failing with every rank's traceback unless every rank succeeded."""
        out = self.run(fn, *args, timeout=timeout)
        bad = [o for o in out if not o.ok]
        if bad:
            raise AssertionError("\n".join(f"rank {o.rank}: {o.error}: {o.message}\n{o.trace}"
                                           for o in bad))
        return [o.value for o in out]

    def close(self, force: bool = False) -> None:
        self.broken = True
        if not force:
            for q in self._jobs:
                q.put(None)
            deadline = time.monotonic() + 5
            for p in self._procs:
                p.join(timeout=max(deadline - time.monotonic(), 0.1))
        for p in self._procs:
            if p.is_alive():
                p.terminate()
        for p in self._procs:
            p.join(timeout=5)
            if p.is_alive():
                p.kill()
                p.join(timeout=5)
