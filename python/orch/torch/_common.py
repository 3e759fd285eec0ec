# SPDX-License-Identifier: Apache-2.0
"""Helpers shared by orch.torch: group facts, the collective device, waiting with a timeout."""
from __future__ import annotations

import datetime
import threading
from collections import OrderedDict
from typing import Any, Callable, Hashable

import torch
import torch.distributed as dist


def rank_and_size(group, what: str) -> tuple[int, int]:
    """This process's rank in `group` (None: the default group) and the group's size; errors
    start with `what`, the public function that was called."""
    if not dist.is_available() or not dist.is_initialized():
        raise RuntimeError(f"{what}: torch.distributed is not initialised "
                           f"(call torch.distributed.init_process_group first)")
    size = dist.get_world_size(group)
    rank = dist.get_rank(group)
    if rank < 0:
        raise ValueError(f"{what}: this process (default-group rank {dist.get_rank()}) is not a "
                         f"member of the group it was given")
    return rank, size


def collective_device(group) -> torch.device:
    """Where the small control tensors (sizes, metadata, hashes) of `group` must live: the
    current CUDA device for an NCCL-only group, else the CPU (gloo, mpi, or a mixed
    'cpu:gloo,cuda:nccl' group, whose CPU tensors go to gloo)."""
    backend = str(dist.get_backend(group)).lower()
    if "nccl" in backend and "gloo" not in backend and "mpi" not in backend:
        return torch.device("cuda", torch.cuda.current_device())
    return torch.device("cpu")


def wait(work, timeout_s: float | None, what: str) -> None:
    """Waits for an async collective, raising TimeoutError after `timeout_s` seconds (the
    group is then unusable: a rank never joined; abort it)."""
    if timeout_s is None:
        work.wait()
        return
    try:
        ok = work.wait(timeout=datetime.timedelta(seconds=float(timeout_s)))
    except RuntimeError as e:  # gloo and NCCL raise on timeout
        if "timed out" in str(e).lower() or "timeout" in str(e).lower():
            raise TimeoutError(f"{what}: not every rank of the group joined within "
                               f"{timeout_s} s ({e})") from e
        raise
    if ok is False:
        raise TimeoutError(f"{what}: not every rank of the group joined within {timeout_s} s")


def members(group, parent=None) -> tuple[int, ...]:
    """The ranks (in `parent`, None: the default group) of `group`'s members, in group-rank
    order."""
    ranks = dist.get_process_group_ranks(group if group is not None else dist.group.WORLD)
    if parent is None:
        return tuple(int(r) for r in ranks)
    return tuple(int(dist.get_group_rank(parent, r)) for r in ranks)


def to_global(rank: int, parent) -> int:
    """The default-group rank of `rank` of `parent` (None: the default group)."""
    return rank if parent is None else int(dist.get_global_rank(parent, rank))


def plan_key(plan) -> tuple:
    """What identifies a plan's content for the caches: the hash covers both layouts and every
    item's bytes (docs/plans.md#hash); ranks and items guard against a collision."""
    return (int(plan.hash), int(plan.ranks), int(plan.items))


class LRU:
    """A small thread-safe least-recently-used cache."""

    def __init__(self, capacity: int):
        self.capacity = capacity
        self._data: OrderedDict[Hashable, Any] = OrderedDict()
        self._lock = threading.Lock()

    def get(self, key: Hashable, make: Callable[[], Any]) -> Any:
        with self._lock:
            if key in self._data:
                self._data.move_to_end(key)
                return self._data[key]
        value = make()  # outside the lock: may be slow, and may raise
        with self._lock:
            self._data[key] = value
            self._data.move_to_end(key)
            while len(self._data) > self.capacity:
                self._data.popitem(last=False)
        return value

    def clear(self) -> None:
        with self._lock:
            self._data.clear()

    def __len__(self) -> int:
        return len(self._data)
