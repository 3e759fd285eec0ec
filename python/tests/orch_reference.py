# SPDX-License-Identifier: Apache-2.0
"""An independent NumPy reference of the plan objects orch.torch runs (tests only).

It follows docs/plans.md ("Buffer conventions") and include/orch/exchange/row_exchange.hpp /
schedule.hpp from the text, not from the bindings, so the real module's row exchanges and
node-wise stages can be compared to it:

- source buffer: a rank's items of the `from` layout in slot order;
- send buffer: the same items grouped by destination rank (ascending), inside a peer by
  destination slot; receive buffer: by source rank (ascending), inside a peer by destination
  slot; destination buffer: the rank's items of the `to` layout in slot order;
- the staging rank of an item that changes node is the rank of the destination node with the
  sender's local index (modulo the node's size); an item that stays on its node stays on its
  source rank; staging slots are by (destination rank, destination slot).

Only what the tests need: layouts from (rank_of, slot_of), plans, rows, inverse, schedules.
"""
from __future__ import annotations

import hashlib
from dataclasses import dataclass

import numpy as np


class Layout:
    """Item i at (rank_of[i], slot_of[i]); slots 0..count-1 on every rank."""

    def __init__(self, rank_of, slot_of, ranks: int):
        self.rank_of = np.ascontiguousarray(rank_of, dtype=np.int32)
        self.slot_of = np.ascontiguousarray(slot_of, dtype=np.int64)
        self.ranks = int(ranks)
        self.items = int(self.rank_of.size)
        counts = np.bincount(self.rank_of, minlength=self.ranks) if self.items else np.zeros(
            self.ranks, dtype=np.int64)
        self._order = np.lexsort((self.slot_of, self.rank_of)).astype(np.int64)
        self._first = np.zeros(self.ranks + 1, dtype=np.int64)
        np.cumsum(counts, out=self._first[1:])
        expect = np.arange(self.items, dtype=np.int64) - np.repeat(self._first[:-1], counts)
        if not np.array_equal(self.slot_of[self._order], expect):
            raise ValueError("Layout: slots are not 0..count-1 on every rank")

    @staticmethod
    def from_assignment(rank_of, ranks: int) -> "Layout":
        rank_of = np.asarray(rank_of, dtype=np.int32)
        slot = np.zeros(rank_of.size, dtype=np.int64)
        for r in range(ranks):
            on = np.flatnonzero(rank_of == r)
            slot[on] = np.arange(on.size)
        return Layout(rank_of, slot, ranks)

    @staticmethod
    def random(rng: np.random.Generator, items: int, ranks: int) -> "Layout":
        return Layout.from_keys(rng.integers(0, ranks, items), ranks, rng.permutation(items))

    @staticmethod
    def from_keys(rank_of, ranks: int, key) -> "Layout":
        rank_of = np.asarray(rank_of, dtype=np.int32)
        order = np.lexsort((np.arange(rank_of.size), np.asarray(key), rank_of))
        slot = np.zeros(rank_of.size, dtype=np.int64)
        counts = np.bincount(rank_of, minlength=ranks)
        first = np.concatenate([[0], np.cumsum(counts)])
        slot[order] = np.arange(rank_of.size) - np.repeat(first[:-1], counts)
        return Layout(rank_of, slot, ranks)

    def items_on(self, rank: int) -> np.ndarray:
        return self._order[self._first[rank]:self._first[rank + 1]]

    def count_on(self, rank: int) -> int:
        return int(self._first[rank + 1] - self._first[rank])


@dataclass
class RowExchange:
    rank: int
    source_rows: int
    destination_rows: int
    send_splits: np.ndarray
    recv_splits: np.ndarray
    pack_index: np.ndarray | None
    unpack_index: np.ndarray | None


def _rows_of(starts: np.ndarray, counts: np.ndarray) -> np.ndarray:
    """Concatenation of arange(starts[k], starts[k] + counts[k])."""
    total = int(counts.sum())
    if total == 0:
        return np.zeros(0, dtype=np.int64)
    base = np.repeat(starts - np.concatenate([[0], np.cumsum(counts)[:-1]]), counts)
    return base + np.arange(total, dtype=np.int64)


class Plan:
    """Moves item i (item_bytes[i] bytes) from `from_layout` to `to_layout`."""

    def __init__(self, from_layout: Layout, to_layout: Layout, item_bytes):
        self.from_layout = from_layout
        self.to_layout = to_layout
        self.item_bytes = np.ascontiguousarray(item_bytes, dtype=np.int64)
        self.ranks = from_layout.ranks
        self.items = from_layout.items
        if (to_layout.ranks != self.ranks or to_layout.items != self.items
                or self.item_bytes.size != self.items):
            raise ValueError("make_plan: mismatched layouts or sizes")
        if (self.item_bytes < 0).any():
            raise ValueError("make_plan: negative item size")
        h = hashlib.blake2b(digest_size=8)
        for a in (from_layout.rank_of, from_layout.slot_of, to_layout.rank_of, to_layout.slot_of,
                  self.item_bytes):
            h.update(a.tobytes())
        h.update(np.int64(self.ranks).tobytes())
        self.hash = int.from_bytes(h.digest(), "little")

    def _offsets(self, layout: Layout, rank: int):
        items = layout.items_on(rank)
        sizes = self.item_bytes[items]
        return items, sizes, np.concatenate([[0], np.cumsum(sizes)[:-1]]).astype(np.int64)

    def source_bytes(self, rank: int) -> int:
        return int(self.item_bytes[self.from_layout.items_on(rank)].sum())

    def destination_bytes(self, rank: int) -> int:
        return int(self.item_bytes[self.to_layout.items_on(rank)].sum())

    def pairs(self) -> np.ndarray:
        dt = np.dtype([("source", np.int32), ("destination", np.int32), ("items", np.int64),
                       ("bytes", np.int64)])
        s = self.from_layout.rank_of.astype(np.int64)
        d = self.to_layout.rank_of.astype(np.int64)
        key = s * self.ranks + d
        uniq, inv = np.unique(key, return_inverse=True)
        out = np.zeros(uniq.size, dtype=dt)
        out["source"] = uniq // self.ranks
        out["destination"] = uniq % self.ranks
        out["items"] = np.bincount(inv, minlength=uniq.size)
        out["bytes"] = np.bincount(inv, weights=self.item_bytes, minlength=uniq.size)
        return out

    def rows(self, rank: int, bytes_per_row: int) -> RowExchange:
        if bytes_per_row <= 0:
            raise ValueError("rows: bytes_per_row must be positive")
        fr, to = self.from_layout, self.to_layout
        src_items, src_sizes, src_off = self._offsets(fr, rank)
        dst_items, dst_sizes, dst_off = self._offsets(to, rank)
        for items, sizes in ((src_items, src_sizes), (dst_items, dst_sizes)):
            bad = items[sizes % bytes_per_row != 0]
            if bad.size:
                raise ValueError(f"rows: item {int(bad[0])} of rank {rank} is not whole rows")
        # send: grouped by destination rank, inside by destination slot
        send = src_items[np.lexsort((to.slot_of[src_items], to.rank_of[src_items]))]
        off_of = np.empty(self.items, dtype=np.int64)
        off_of[src_items] = src_off
        send_rows = self.item_bytes[send] // bytes_per_row
        pack = _rows_of(off_of[send] // bytes_per_row, send_rows)
        send_splits = np.bincount(to.rank_of[send], weights=send_rows,
                                  minlength=self.ranks).astype(np.int64)
        # receive: by source rank, inside by destination slot (= dst order, stably by source)
        recv = dst_items[np.argsort(fr.rank_of[dst_items], kind="stable")]
        recv_rows = self.item_bytes[recv] // bytes_per_row
        recv_off = np.concatenate([[0], np.cumsum(recv_rows)[:-1]]).astype(np.int64)
        recv_off_of = np.empty(self.items, dtype=np.int64)
        recv_off_of[recv] = recv_off
        unpack = _rows_of(recv_off_of[dst_items], dst_sizes // bytes_per_row)
        recv_splits = np.bincount(fr.rank_of[recv], weights=recv_rows,
                                  minlength=self.ranks).astype(np.int64)
        ident = lambda ix: ix if not np.array_equal(ix, np.arange(ix.size)) else None  # noqa: E731
        return RowExchange(rank, int(src_sizes.sum() // bytes_per_row),
                           int(dst_sizes.sum() // bytes_per_row), send_splits, recv_splits,
                           ident(pack), ident(unpack))


def make_plan(from_layout: Layout, to_layout: Layout, item_bytes) -> Plan:
    return Plan(from_layout, to_layout, item_bytes)


def inverse(plan: Plan) -> Plan:
    return Plan(plan.to_layout, plan.from_layout, plan.item_bytes)


class Topology:
    def __init__(self, node_of_rank):
        self._node = np.asarray(node_of_rank, dtype=np.int32)
        self.ranks = int(self._node.size)
        self.nodes = int(self._node.max()) + 1

    @staticmethod
    def uniform(ranks: int, ranks_per_node: int) -> "Topology":
        return Topology(np.arange(ranks) // ranks_per_node)

    def node_of(self, rank: int) -> int:
        return int(self._node[rank])


@dataclass
class Schedule:
    staging: Layout
    inter_node: Plan
    intra_node: Plan


def make_schedule(plan: Plan, topo: Topology) -> Schedule:
    node = np.array([topo.node_of(r) for r in range(topo.ranks)])
    on = [np.flatnonzero(node == n) for n in range(topo.nodes)]
    local = np.zeros(topo.ranks, dtype=np.int64)
    for members in on:
        local[members] = np.arange(members.size)
    s = plan.from_layout.rank_of
    d = plan.to_layout.rank_of
    mid = np.array([s[i] if node[s[i]] == node[d[i]]
                    else on[node[d[i]]][local[s[i]] % on[node[d[i]]].size]
                    for i in range(plan.items)], dtype=np.int32)
    staging = Layout.from_keys(mid, plan.ranks,
                               d.astype(np.int64) * (plan.items + 1) + plan.to_layout.slot_of)
    return Schedule(staging, Plan(plan.from_layout, staging, plan.item_bytes),
                    Plan(staging, plan.to_layout, plan.item_bytes))
