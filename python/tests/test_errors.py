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
ROW = re.compile(r"^\| (P\d+) \| (ValueError|InfeasibleError|OverflowError) \| `([^`]+)` \|")
TYPES = {"ValueError": ValueError, "InfeasibleError": orch.InfeasibleError,
         "OverflowError": OverflowError}


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


TRIGGERS = {
    "P01": lambda: orch.ItemTable().add_example(-1, 0, 5),
    "P02": lambda: orch.partition(np.array([1, 2, 3], dtype=np.int64), 2, max_items_per_bin=1),
    "P03": lambda: orch.partition(np.array([2**63 - 1, 1], dtype=np.int64), 2),
    "P04": lambda: orch.orchestrate(orch.ItemTable(), orch.ModelDescription(),
                                    orch.Topology.uniform(1, 1), strategy="fastest"),
    "P05": _bad_checksum,
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
