# SPDX-License-Identifier: Apache-2.0
"""plan_step: the metadata all-gather, identical planning on every rank, the plan-hash check."""
from __future__ import annotations

import operator

import numpy as np
import torch
import torch.distributed as dist

import orch

from ._common import collective_device, rank_and_size, wait


class PlanMismatchError(RuntimeError):
    """The ranks of a group hold plans with different hashes (raised on every rank)."""


_TWO64 = 1 << 64
_TWO63 = 1 << 63


def _signed(h: int) -> int:
    return h - _TWO64 if h >= _TWO63 else h


def _unsigned(s: int) -> int:
    return s + _TWO64 if s < 0 else s


def check_plan_hash(h, group=None, *, timeout_s: float | None = 60.0) -> int:
    """Checks that every rank of `group` (None: the default group) holds a plan of hash `h`
    (0 ≤ h < 2**64) with ONE all_reduce: [s, ~s] reduced with MAX, s the int64 reading of h,
    gives the largest and (by ~) the smallest hash at once. Returns h.

    Raises PlanMismatchError on every rank when they differ, naming the smallest and largest
    hash and this rank's; TimeoutError when a rank does not join within `timeout_s` seconds.
    """
    try:
        h = operator.index(h)
    except TypeError:
        raise TypeError(f"check_plan_hash: the hash must be an integer, got "
                        f"{type(h).__name__}") from None
    if not 0 <= h < _TWO64:
        raise ValueError(f"check_plan_hash: hash {h} is outside [0, 2**64)")
    rank, size = rank_and_size(group, "check_plan_hash")
    s = _signed(h)
    t = torch.tensor([s, ~s], dtype=torch.int64, device=collective_device(group))
    wait(dist.all_reduce(t, op=dist.ReduceOp.MAX, group=group, async_op=True), timeout_s,
         "check_plan_hash")
    hi, lo = (int(v) for v in t.tolist())
    lo = ~lo
    if hi != lo:
        raise PlanMismatchError(
            f"check_plan_hash: rank {rank} holds plan hash {h:#018x} but the {size} ranks' "
            f"hashes range from {_unsigned(lo):#018x} to {_unsigned(hi):#018x} (smallest and "
            f"largest as int64): the ranks built different plans (every rank must plan from "
            f"the same metadata, model, topology and options); no payload was moved")
    return h


def _gather_metadata(words: np.ndarray | None, error: str | None, group, timeout_s):
    """Two all_gathers of int64 tensors (the sizes, then the buffers padded to the largest).
    A rank whose batch could not be serialised sends size -1, so every rank raises."""
    rank, size = rank_and_size(group, "plan_step")
    dev = collective_device(group)
    n = -1 if words is None else int(words.size)
    sizes = torch.empty(size, dtype=torch.int64, device=dev)
    mine = torch.tensor([n], dtype=torch.int64, device=dev)
    wait(dist.all_gather(list(sizes.view(size, 1).unbind(0)), mine, group=group, async_op=True),
         timeout_s, "plan_step: metadata sizes")
    counts = sizes.cpu().numpy()
    bad = np.flatnonzero(counts < 0)
    if bad.size:
        if words is None:
            raise ValueError(f"plan_step: rank {rank}: {error}")
        raise ValueError(f"plan_step: the batch of rank {int(bad[0])} could not be serialised "
                         f"(its error names the example); no rank planned")
    width = max(int(counts.max()), 1)
    buf = torch.zeros(width, dtype=torch.int64, device=dev)
    buf[:n] = torch.from_numpy(words).to(dev)
    padded = torch.empty(size * width, dtype=torch.int64, device=dev)
    wait(dist.all_gather(list(padded.view(size, width).unbind(0)), buf, group=group,
                         async_op=True), timeout_s, "plan_step: metadata")
    return padded.cpu().numpy(), size


def plan_step(batch, model, topo, group=None, strategy="orch", timeout_s: float | None = 60.0,
              **options):
    """Plans one step identically on every rank of `group` and checks that the plans agree.

    batch: this rank's orch.LocalBatch; model: orch.ModelDescription; topo: orch.Topology of
    the group's ranks; options: orch.orchestrate's keyword arguments (threads, algorithm,
    llm_max_tokens_per_rank, ...). Gathers `batch.serialize(rank)` with two all_gathers of
    int64 tensors (never all_gather_object), decodes the table
    (orch.table_from_metadata_padded), plans (orch.orchestrate, GIL released) and checks the
    plan hash with one all_reduce before any payload moves.

    Raises ValueError before any collective for a topology of another size than the group,
    on every rank when one rank's batch cannot be serialised or the gathered metadata is
    invalid (negative lengths...), orch.InfeasibleError when the options cannot be met,
    PlanMismatchError on every rank when the plans differ, TimeoutError when a rank does not
    join within `timeout_s` seconds.
    """
    rank, size = rank_and_size(group, "plan_step")
    if int(topo.ranks) != size:
        raise ValueError(f"plan_step: topology of {int(topo.ranks)} ranks for a group of "
                         f"{size} ranks (rank {rank})")
    words, error = None, None
    try:
        words = np.ascontiguousarray(batch.serialize(rank), dtype=np.int64)
    except (ValueError, OverflowError) as e:
        error = str(e)
    padded, ranks = _gather_metadata(words, error, group, timeout_s)
    table = orch.table_from_metadata_padded(padded, ranks, model=model)
    step = orch.orchestrate(table, model, topo, strategy=strategy, **options)
    check_plan_hash(step.hash, group, timeout_s=timeout_s)
    return step
