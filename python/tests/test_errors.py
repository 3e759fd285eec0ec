# SPDX-License-Identifier: Apache-2.0
"""The Python rows of the error catalogue (docs/errors.md): each is raised through the orch
package and its message must match the documented pattern (read from the page itself).

orch.torch entries that need a process group run in a gloo world of one rank made in this
process (and destroyed after each entry); those that need several ranks (a subgroup, ranks
that disagree, a rank that never joins) run once, together, in one pool of three gloo
processes, whose outcomes are raised here again with the type and message they had."""

from __future__ import annotations

import contextlib
import functools
import os
import pathlib
import re

import numpy as np
import pytest

import orch

ROOT = pathlib.Path(__file__).resolve().parents[2]
ROW = re.compile(r"^\| (P\d+) \| (ValueError|InfeasibleError|OverflowError|TypeError|"
                 r"RuntimeError|TimeoutError|PlanMismatchError) \| `([^`]+)` \|")
TYPES = {"ValueError": ValueError, "InfeasibleError": orch.InfeasibleError,
         "OverflowError": OverflowError, "TypeError": TypeError, "RuntimeError": RuntimeError,
         "TimeoutError": TimeoutError}


def error_type(kind: str) -> type:
    """The exception class a row's type names (PlanMismatchError needs torch)."""
    return _torch().PlanMismatchError if kind == "PlanMismatchError" else TYPES[kind]


def catalogue() -> dict[str, tuple[str, str]]:
    rows = {}
    for line in (ROOT / "docs" / "errors.md").read_text().splitlines():
        m = ROW.match(line)
        if m:
            # A bare | would end the Markdown cell: the page writes the alternation as \|.
            assert not re.search(r"(^|[^\\])\|", m.group(3)), f"a bare | in {m.group(1)}"
            rows[m.group(1)] = (m.group(2), m.group(3).replace("\\|", "|"))
    return rows


def _bad_checksum():
    batch = orch.LocalBatch()
    batch.add(5)
    words = batch.serialize(0).copy()
    words[7] += 1
    orch.table_from_metadata([words])


def _torch():
    """orch.torch, or a skip where torch is not installed (its entries need no process group:
    the checks they trigger run before any collective)."""
    pytest.importorskip("torch")
    import orch.torch
    return orch.torch


def _text_only_step():
    """A one-rank step of one 5-token text-only example, under a model with no encoder."""
    table = orch.ItemTable()
    table.add_example(0, 0, 5)
    return orch.orchestrate(table, orch.ModelDescription(), orch.Topology.uniform(1, 1))


def _assemble(rank, text_rows, feature_rows):
    _torch().assemble(_text_only_step(), rank, text_rows, feature_rows)


def _zeros(*shape):
    import torch
    return torch.zeros(*shape)


def _encoder_step():
    """A one-rank step of one example with a 16-unit image, under a model with one encoder."""
    vision = orch.EncoderModel(name="vision", fields=["image"], input_bytes_per_unit=8,
                               feature_bytes_per_token=32)
    model = orch.ModelDescription(encoders=[vision], llm=orch.LLMModel(text_bytes_per_token=8))
    table = orch.ItemTable()
    table.add_example(0, 0, 5, [("image", 16, 0)])
    return orch.orchestrate(table, model, orch.Topology.uniform(1, 1))


@contextlib.contextmanager
def _world_of_one():
    import torch.distributed as dist
    os.environ.setdefault("GLOO_SOCKET_IFNAME", "lo")
    dist.init_process_group("gloo", store=dist.HashStore(), rank=0, world_size=1)
    try:
        yield
    finally:
        dist.destroy_process_group()


def _alone(fn):
    """A trigger that runs fn(orch.torch) in a gloo world of one rank."""
    def trigger():
        ot = _torch()
        with _world_of_one():
            fn(ot)
    return trigger


def _plan(items_per_rank):
    """Items of 8 bytes that stay where they are, items_per_rank[r] on rank r."""
    layout = orch.Layout.contiguous(items_per_rank)
    return orch.make_plan(layout, layout, np.full(sum(items_per_rank), 8, dtype=np.int64))


def _int64(*shape):
    import torch
    return torch.zeros(*shape, dtype=torch.int64)


def _bytes(*shape):
    import torch
    return torch.zeros(*shape, dtype=torch.uint8)


class _UnserialisableBatch:
    """A batch whose serialize() fails (as a LocalBatch subclass or wrapper might)."""

    def serialize(self, rank: int):
        raise ValueError(f"local example 0 of rank {rank} is broken")


def _catch(fn):
    try:
        fn()
    except Exception as e:  # noqa: BLE001 - reported to the parent
        return type(e).__name__, str(e)
    return None


def job_three_ranks(rank: int, world: int) -> dict:
    """Every entry that needs several ranks, on each of three gloo ranks: {entry: (type, message)
    or None}. The timeout comes last (the group is unusable after it)."""
    import torch
    import torch.distributed as dist

    import orch.torch as ot
    out = {}
    # Nodes of different sizes: ranks 0 and 1 on node 0, rank 2 on node 1.
    uneven = orch.Topology.from_node_of_rank(np.array([0, 0, 1], dtype=np.int32))
    # One 8-byte item from rank 1 (node 0, local index 1) to rank 2 (node 1, local index 0).
    plan = orch.make_plan(orch.Layout.from_assignment(np.array([1]), 3),
                          orch.Layout.from_assignment(np.array([2]), 3), np.array([8]))
    x = torch.zeros(int(plan.source_bytes(rank)) // 8, 1, dtype=torch.int64)
    out["P22"] = _catch(lambda: ot.exchange(_int64(x.shape[0] + 1, 1) if rank == 2 else x, plan,
                                            check=True))
    out["P26"] = _catch(lambda: ot.exchange_nodewise(x, plan, uneven, None, None))
    # The default group as both subgroups of one node of three: not this rank's rail.
    out["P27"] = _catch(lambda: ot.exchange_nodewise(x, plan, orch.Topology.uniform(3, 3),
                                                     None, None))
    out["P29"] = _catch(lambda: ot.nodewise_groups(uneven))
    h = 5 if rank == 1 else 7
    out["P30"] = _catch(lambda: ot.check_plan_hash(h))
    batch = _UnserialisableBatch() if rank == 2 else orch.LocalBatch()
    out["P33"] = _catch(lambda: ot.plan_step(batch, orch.ModelDescription(),
                                             orch.Topology.uniform(3, 1)))
    others = dist.new_group([1, 2])
    if rank == 0:
        out["P35"] = _catch(lambda: ot.exchange(x, plan, group=others))
    if rank != 2:  # rank 2 never joins
        out["P36"] = _catch(lambda: ot.check_plan_hash(h, timeout_s=0.5))
    return out


@functools.cache
def _three_ranks() -> list:
    _torch()
    from torch_dist import Pool
    pool = Pool(3)
    try:
        return pool.values(job_three_ranks, timeout=60)
    finally:
        pool.close(force=True)  # the timed-out collective leaves the group unusable


def _on_rank(entry: str, rank: int = 0):
    """A trigger that raises again what `entry` raised on `rank` of the three-rank pool."""
    def trigger():
        got = _three_ranks()[rank][entry]
        assert got is not None, f"{entry} raised nothing on rank {rank}"
        kind, message = got
        raise error_type(kind)(message)
    return trigger


TRIGGERS = {
    "P01": lambda: orch.ItemTable().add_example(-1, 0, 5),
    "P02": lambda: orch.partition(np.array([1, 2, 3], dtype=np.int64), 2, max_items_per_bin=1),
    "P03": lambda: orch.partition(np.array([2**63 - 1, 1], dtype=np.int64), 2),
    "P04": lambda: orch.orchestrate(orch.ItemTable(), orch.ModelDescription(),
                                    orch.Topology.uniform(1, 1), strategy="fastest"),
    "P05": _bad_checksum,
    "P06": lambda: orch.ItemTable().add_example(0, 0, 5, [("image", 16)]),
    "P07": lambda: orch.EncoderModel(name="vision", fields=[("image", 40, 1)]),
    "P08": lambda: _torch().check_plan_hash("0x1234"),
    "P09": lambda: _torch().check_plan_hash(-1),
    "P10": lambda: _assemble(0, _zeros(5, 2), [_zeros(1, 2)]),
    "P11": lambda: _assemble(0, _zeros(()), []),
    "P12": lambda: _assemble(3, _zeros(5, 2), []),
    "P13": lambda: _assemble(0, _zeros(3, 2), []),
    # the binding's array arguments (python/src/common.hpp)
    "P14": lambda: orch.partition(np.zeros((2, 2), dtype=np.int64), 2),
    "P15": lambda: orch.partition(np.array([1.5, 2.0]), 2),
    "P16": lambda: orch.partition(np.array([2**64 - 1], dtype=np.uint64), 2),
    # orch.torch exchanges
    "P17": _alone(lambda ot: ot.exchange([1, 2], _plan([2]))),
    "P18": _alone(lambda ot: ot.exchange(_zeros(()), _plan([2]))),
    "P19": _alone(lambda ot: ot.exchange(_zeros(2, 0), _plan([2]))),
    "P20": _alone(lambda ot: ot.exchange(_bytes(0, 3), _plan([2]))),
    "P21": _alone(lambda ot: ot.exchange(_int64(3, 1), _plan([2]))),
    "P22": _on_rank("P22", 0),
    "P23": _alone(lambda ot: ot.exchange(_int64(2, 1), _plan([2]), requires_grad=True)),
    "P24": _alone(lambda ot: ot.exchange(_int64(1, 1), _plan([1, 1]))),
    "P25": _alone(lambda ot: ot.exchange_nodewise(_int64(1, 1), _plan([1, 1]),
                                                  orch.Topology.uniform(2, 1), None, None)),
    "P26": _on_rank("P26", 0),
    "P27": _on_rank("P27", 0),
    "P28": _alone(lambda ot: ot.nodewise_groups(orch.Topology.uniform(2, 1))),
    "P29": _on_rank("P29", 0),
    # plan_step and the hash check
    "P30": _on_rank("P30", 1),
    "P31": _alone(lambda ot: ot.plan_step(orch.LocalBatch(), orch.ModelDescription(),
                                          orch.Topology.uniform(2, 1))),
    "P32": _alone(lambda ot: ot.plan_step(_UnserialisableBatch(), orch.ModelDescription(),
                                          orch.Topology.uniform(1, 1))),
    "P33": _on_rank("P33", 0),
    # process groups (orch/torch/_common.py)
    "P34": lambda: _torch().check_plan_hash(5),
    "P35": _on_rank("P35", 0),
    "P36": _on_rank("P36", 0),
    # assemble
    "P37": lambda: _assemble(0, _zeros(5, 2), {"vision": _zeros(1, 2)}),
    "P38": lambda: _torch().assemble(_encoder_step(), 0, _zeros(5, 2), [_zeros(1, 3)]),
    # the binding's other arguments (python/src/table.cpp, module.cpp)
    "P39": lambda: orch.LocalBatch().add(5, [("image", "16", 0)]),
    "P40": lambda: orch.EncoderModel(name="vision", fields=[5]),
    "P41": lambda: orch.LocalBatch.from_arrays([5], [0], [0], [4], [0], [b"image"]),
    "P42": lambda: orch.partition([1, 2], 2, algorithm=3),
    "P43": lambda: orch.orchestrate(orch.ItemTable(), orch.ModelDescription(),
                                    orch.Topology.uniform(1, 1), strategy=1),
}


def test_every_python_entry_has_a_trigger() -> None:
    assert sorted(catalogue()) == sorted(TRIGGERS)


@pytest.mark.parametrize("entry", sorted(TRIGGERS))
def test_entry_raises_its_documented_error(entry: str) -> None:
    kind, pattern = catalogue()[entry]
    with pytest.raises(error_type(kind)) as info:
        TRIGGERS[entry]()
    assert type(info.value) is error_type(kind) or kind == "ValueError" and not isinstance(
        info.value, orch.InfeasibleError)
    assert re.fullmatch(pattern, str(info.value)), f"{str(info.value)!r} !~ {pattern}"
