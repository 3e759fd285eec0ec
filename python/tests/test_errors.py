# SPDX-License-Identifier: Apache-2.0
"""The Python rows of the error catalogue (docs/errors.md): each is raised through the orch
package and its message must match the documented pattern (read from the page itself)."""

from __future__ import annotations

import pathlib
import re

import numpy as np
import pytest

import orch

ROOT = pathlib.Path(__file__).resolve().parents[2]
ROW = re.compile(r"^\| (P\d+) \| (ValueError|InfeasibleError|OverflowError|TypeError) \| "
                 r"`([^`]+)` \|")
TYPES = {"ValueError": ValueError, "InfeasibleError": orch.InfeasibleError,
         "OverflowError": OverflowError, "TypeError": TypeError}


def catalogue() -> dict[str, tuple[str, str]]:
    rows = {}
    for line in (ROOT / "docs" / "errors.md").read_text().splitlines():
        m = ROW.match(line)
        if m:
            rows[m.group(1)] = (m.group(2), m.group(3))
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
}


def test_every_python_entry_has_a_trigger() -> None:
    assert sorted(catalogue()) == sorted(TRIGGERS)


@pytest.mark.parametrize("entry", sorted(TRIGGERS))
def test_entry_raises_its_documented_error(entry: str) -> None:
    kind, pattern = catalogue()[entry]
    with pytest.raises(TYPES[kind]) as info:
        TRIGGERS[entry]()
    assert type(info.value) is TYPES[kind] or kind == "ValueError" and not isinstance(
        info.value, orch.InfeasibleError)
    assert re.fullmatch(pattern, str(info.value)), f"{str(info.value)!r} !~ {pattern}"
