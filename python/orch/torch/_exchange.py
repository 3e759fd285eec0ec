# SPDX-License-Identifier: Apache-2.0
"""exchange / exchange_nodewise: an orch plan run as one all_to_all_single, differentiable.

A plan's row form (plan.rows(rank, bytes_per_row), include/orch/exchange/row_exchange.hpp) gives the
split sizes and the two gather indices; the payload moves as raw bytes (the rows viewed as
uint8), so any dtype and trailing shape moves bit for bit. Backward runs the inverse plan.
"""
from __future__ import annotations

import atexit
import math
import threading
from dataclasses import dataclass

import numpy as np
import torch
import torch.distributed as dist

import orch

from ._common import LRU, collective_device, members, plan_key, rank_and_size

_ROWS = LRU(64)       # (plan, rank, bytes per row, members, device) -> _Rows
_INVERSE = LRU(32)    # plan -> orch.inverse(plan)
_SCHEDULE = LRU(32)   # (plan, topology) -> orch.make_schedule(plan, topo), checked
_buffers = threading.local()  # per thread: reusable CPU send / receive byte buffers


@dataclass(frozen=True)
class _Rows:
    """One rank's row exchange, ready to run: Python split lists (in the group's rank order)
    and index tensors on the payload's device (None when the identity)."""
    source_rows: int
    destination_rows: int
    send_splits: list
    recv_splits: list
    pack: torch.Tensor | None
    unpack: torch.Tensor | None

    @property
    def copies(self) -> int:
        """Index copies one run makes (pack and unpack; the identity is skipped)."""
        return (self.pack is not None) + (self.unpack is not None)


def clear_caches() -> None:
    """Drops the cached index tensors, inverse plans, schedules and reusable buffers."""
    _ROWS.clear()
    _INVERSE.clear()
    _SCHEDULE.clear()
    _buffers.__dict__.clear()


# The caches hold orch objects (plans, schedules): drop them before the interpreter tears the
# extension down, so nanobind does not report them as leaked.
atexit.register(clear_caches)


def _row_bytes(x: torch.Tensor) -> int:
    """Bytes of one row of x, from its trailing shape (so 0 rows work too)."""
    return math.prod(x.shape[1:]) * x.element_size()


def _check_whole_rows(plan, bytes_per_row: int, what: str) -> None:
    """Every item of the plan (not only this rank's) is whole rows, so a bad row width raises
    on every rank before any collective, never on some ranks only."""
    sizes = np.asarray(plan.item_bytes, dtype=np.int64)
    bad = np.flatnonzero(sizes % bytes_per_row)
    if bad.size:
        i = int(bad[0])
        raise ValueError(
            f"{what}: item {i} has {int(sizes[i])} bytes, not a multiple of the {bytes_per_row} "
            f"bytes of a row of the tensor (item {i} goes from rank "
            f"{int(plan.from_layout.rank_of[i])} to rank {int(plan.to_layout.rank_of[i])}; "
            f"{bad.size} such items)")


def _as_tensor(index, device) -> torch.Tensor | None:
    if index is None:
        return None
    a = np.ascontiguousarray(index, dtype=np.int64)
    return torch.from_numpy(a).to(device)


def _rows(plan, rank: int, bytes_per_row: int, group_members, device, what) -> _Rows:
    key = plan_key(plan) + (rank, bytes_per_row, group_members, str(device))

    def make() -> _Rows:
        _check_whole_rows(plan, bytes_per_row, what)
        x = plan.rows(rank, bytes_per_row)
        send = np.asarray(x.send_splits, dtype=np.int64)
        recv = np.asarray(x.recv_splits, dtype=np.int64)
        if group_members is not None:
            inside = np.zeros(send.size, dtype=bool)
            inside[list(group_members)] = True
            out = np.flatnonzero(~inside & ((send != 0) | (recv != 0)))
            if out.size:
                raise ValueError(f"{what}: rank {rank} exchanges rows with rank {int(out[0])}, "
                                 f"which is not in its group {list(group_members)}")
            send, recv = send[list(group_members)], recv[list(group_members)]
        return _Rows(int(x.source_rows), int(x.destination_rows), send.tolist(), recv.tolist(),
                     _as_tensor(x.pack_index, device), _as_tensor(x.unpack_index, device))

    return _ROWS.get(key, make)


def _inverse(plan):
    return _INVERSE.get(plan_key(plan), lambda: orch.inverse(plan))


def _buffer(name: str, rows: int, width: int, device: torch.device) -> torch.Tensor:
    """A reusable [rows, width] uint8 CPU buffer (CUDA tensors come from the caching
    allocator, which already reuses memory safely across streams)."""
    if device.type != "cpu":
        return torch.empty((rows, width), dtype=torch.uint8, device=device)
    need = rows * width
    buf = getattr(_buffers, name, None)
    if buf is None or buf.numel() < need:
        buf = torch.empty(need, dtype=torch.uint8)
        setattr(_buffers, name, buf)
    return buf[:need].view(rows, width)


@dataclass(frozen=True)
class _Route:
    """A plan run over a process group: `rank` is this process's plan rank; `group_members`
    the plan ranks of the group's members in group-rank order (None: all, in order)."""
    plan: object
    group: object
    rank: int
    group_members: tuple | None
    what: str

    def inverse(self) -> "_Route":
        return _Route(_inverse(self.plan), self.group, self.rank, self.group_members, self.what)

    def prepare(self, x: torch.Tensor) -> _Rows:
        """Validates x against the plan (no collective) and returns the cached row form."""
        if x.dim() < 1:
            raise ValueError(f"{self.what}: the tensor needs a row dimension, got a 0-d tensor")
        bpr = _row_bytes(x)
        if bpr <= 0:
            raise ValueError(f"{self.what}: rows of shape {tuple(x.shape[1:])} hold no bytes")
        rows = _rows(self.plan, self.rank, bpr, self.group_members, x.device, self.what)
        if x.shape[0] != rows.source_rows:
            raise ValueError(
                f"{self.what}: rank {self.rank} passed {x.shape[0]} rows of "
                f"{tuple(x.shape[1:])} {x.dtype}, but the plan sends {rows.source_rows} "
                f"({int(self.plan.source_bytes(self.rank))} bytes of "
                f"{int(self.plan.items)} items in rows of {bpr} bytes)")
        return rows

    def run(self, x: torch.Tensor, rows: _Rows | None = None) -> torch.Tensor:
        rows = rows if rows is not None else self.prepare(x)
        trail = tuple(x.shape[1:])
        width = _row_bytes(x)
        if x.numel() == 0:  # an empty tensor may have any strides; view(uint8) needs 1
            src = torch.empty((rows.source_rows, width), dtype=torch.uint8, device=x.device)
        else:
            src = x.detach().contiguous().view(torch.uint8).reshape(rows.source_rows, width)
        if rows.pack is None:
            send = src
        else:
            send = torch.index_select(src, 0, rows.pack,
                                      out=_buffer("send", rows.source_rows, width, x.device))
        if rows.unpack is None:
            recv = torch.empty((rows.destination_rows, width), dtype=torch.uint8,
                               device=x.device)
        else:
            recv = _buffer("recv", rows.destination_rows, width, x.device)
        dist.all_to_all_single(recv, send, rows.recv_splits, rows.send_splits, group=self.group)
        out = recv if rows.unpack is None else torch.index_select(recv, 0, rows.unpack)
        if out.numel() == 0:
            return torch.empty((rows.destination_rows,) + trail, dtype=x.dtype, device=x.device)
        return out.view(x.dtype).reshape((rows.destination_rows,) + trail)


class _ExchangeFunction(torch.autograd.Function):
    """y = route(x); dx = inverse(route)(dy) (differentiable again under create_graph)."""

    @staticmethod
    def forward(ctx, x, route: _Route, rows: _Rows):
        ctx.route = route
        return route.run(x, rows)

    @staticmethod
    def backward(ctx, grad):
        inv = ctx.route.inverse()
        if torch.is_grad_enabled():
            return _ExchangeFunction.apply(grad, inv, inv.prepare(grad)), None, None
        return inv.run(grad), None, None


def _agree(ok: bool, group, device, what: str, rank: int) -> None:
    """One all_reduce of (rank + 1 if this rank's input is bad): every rank raises when any
    rank's input is bad."""
    flag = torch.tensor([rank + 1 if not ok else 0], dtype=torch.int64, device=device)
    dist.all_reduce(flag, op=dist.ReduceOp.MAX, group=group)
    bad = int(flag.item()) - 1
    if bad >= 0 and ok:
        raise ValueError(f"{what}: the input of rank {bad} disagrees with the plan (its error "
                         f"names the counts); no rank moved any payload")


def _with_grad(x: torch.Tensor, requires_grad, what: str, rank: int) -> torch.Tensor:
    """x, made to take part in autograd (or not) as `requires_grad` says: True makes a
    floating tensor that does not require grad a leaf that does (an encoder that ran on no item
    returns such a tensor, yet its rank must run the backward exchange with the others); False
    detaches; None leaves x as it is."""
    if requires_grad is None:
        return x
    if requires_grad:
        if not (x.is_floating_point() or x.is_complex()):
            raise ValueError(f"{what}: requires_grad=True needs a floating tensor, got {x.dtype} "
                             f"(rank {rank})")
        return x if x.requires_grad else x.detach().requires_grad_(True)
    return x.detach()


def _apply(x: torch.Tensor, route: _Route, check: bool, requires_grad=None) -> torch.Tensor:
    if not isinstance(x, torch.Tensor):
        raise TypeError(f"{route.what}: expected a torch.Tensor, got {type(x).__name__}")
    x = _with_grad(x, requires_grad, route.what, route.rank)
    if not check:
        return _ExchangeFunction.apply(x, route, route.prepare(x))
    try:
        rows = route.prepare(x)
    except ValueError:
        _agree(False, route.group, collective_device(route.group), route.what, route.rank)
        raise
    _agree(True, route.group, collective_device(route.group), route.what, route.rank)
    return _ExchangeFunction.apply(x, route, rows)


def exchange(x: torch.Tensor, plan, group=None, *, check: bool = False,
             requires_grad: bool | None = None) -> torch.Tensor:
    """Runs `plan` (an orch exchange plan over the ranks of `group`, None: the default group)
    on this rank's rows and returns the rows it receives, in destination order.

    x: this rank's items' rows laid end to end in slot order of the plan's `from` layout (any
    trailing shape and dtype; an item of b bytes is b / bytes_per_row rows, bytes_per_row =
    prod(x.shape[1:]) * x.element_size()). One index_select packs (skipped when the identity),
    one all_to_all_single moves, one index_select unpacks (skipped when the identity).
    Differentiable: backward runs orch.inverse(plan), so gradients return to the ranks that
    sent the rows. Index tensors are cached per (plan, rank, row bytes, device).

    Raises ValueError before any collective: a group of another size than plan.ranks; an item
    (of any rank) whose bytes are not whole rows, naming it; x's row count differing from the
    plan's rows for this rank, naming the rank and both counts. The last depends on this rank
    alone; with check=True one extra all_reduce of a flag makes every rank raise when any
    rank's tensor is wrong (use it when debugging a trainer).

    The backward exchange is a collective too: every rank of the group must run it, so
    whether the output takes part in autograd must be the same on every rank. By default it
    does when x requires grad; requires_grad=True makes it take part whatever x is (pass it for
    features, where a rank whose encoder ran on no item holds an empty tensor that does not
    require grad — without it that rank skips the backward exchange and the others wait for
    it), requires_grad=False keeps the exchange out of autograd on every rank.
    """
    rank, size = rank_and_size(group, "exchange")
    if size != int(plan.ranks):
        raise ValueError(f"exchange: the plan is over {int(plan.ranks)} ranks but the group "
                         f"has {size} (rank {rank})")
    return _apply(x, _Route(plan, group, rank, None, "exchange"), check, requires_grad)


def _local_indices(topo) -> tuple[np.ndarray, np.ndarray]:
    """(node of every rank, local index of every rank) as int64 arrays."""
    if hasattr(topo, "node_of_ranks") and hasattr(topo, "local_indices"):
        return (np.asarray(topo.node_of_ranks, dtype=np.int64),
                np.asarray(topo.local_indices, dtype=np.int64))
    node = np.array([int(topo.node_of(r)) for r in range(int(topo.ranks))], dtype=np.int64)
    local = np.zeros(node.size, dtype=np.int64)
    for n in np.unique(node):
        on = np.flatnonzero(node == n)
        local[on] = np.arange(on.size)
    return node, local


def _schedule(plan, topo):
    node, local = _local_indices(topo)
    key = plan_key(plan) + (tuple(node.tolist()),)

    def make():
        s = orch.make_schedule(plan, topo)
        for stage, same, what in ((s.inter_node, local, "local index"),
                                  (s.intra_node, node, "node")):
            p = stage.pairs()
            src = np.asarray(p["source"], dtype=np.int64)
            dst = np.asarray(p["destination"], dtype=np.int64)
            cross = np.flatnonzero((src != dst) & (same[src] != same[dst]))
            if cross.size:
                a, b = int(src[cross[0]]), int(dst[cross[0]])
                raise ValueError(
                    f"exchange_nodewise: the schedule moves rows from rank {a} to rank {b}, "
                    f"which do not share a {what} (nodes of different sizes); use exchange()")
        return s, node, local

    return _SCHEDULE.get(key, make)


def _check_subgroup(g, expected: np.ndarray, parent, rank: int, what: str) -> tuple:
    got = members(g, parent)
    want = tuple(int(r) for r in expected)
    if got != want:
        raise ValueError(f"exchange_nodewise: rank {rank}'s {what} has ranks {list(got)}, "
                         f"expected {list(want)} (make them with orch.torch.nodewise_groups)")
    return got


def exchange_nodewise(x: torch.Tensor, plan, topo, inter_group, intra_group, group=None, *,
                      check: bool = False, requires_grad: bool | None = None) -> torch.Tensor:
    """exchange() as the node-wise schedule (orch.make_schedule(plan, topo)): stage 1 over
    `inter_group` (the ranks with this rank's local index, one per node), stage 2 over
    `intra_group` (the ranks of this rank's node). Byte-identical to exchange(x, plan, group)
    and differentiable the same way (backward: stage 2 inverse, then stage 1 inverse).
    `group` is the group whose ranks the plan and topology number (None: the default group).
    Make the subgroups with nodewise_groups(topo, group). requires_grad: as exchange().

    Raises ValueError (before any collective) as exchange() does, and for subgroups that are
    not this rank's rail / node, or a schedule whose stage 1 leaves a rail (nodes of
    different sizes).
    """
    rank, size = rank_and_size(group, "exchange_nodewise")
    if size != int(plan.ranks) or size != int(topo.ranks):
        raise ValueError(f"exchange_nodewise: the plan is over {int(plan.ranks)} ranks and the "
                         f"topology over {int(topo.ranks)}, but the group has {size} "
                         f"(rank {rank})")
    sched, node, local = _schedule(plan, topo)
    inter = _check_subgroup(inter_group, np.flatnonzero(local == local[rank]), group, rank,
                            "inter-node group")
    intra = _check_subgroup(intra_group, np.flatnonzero(node == node[rank]), group, rank,
                            "intra-node group")
    y = _apply(x, _Route(sched.inter_node, inter_group, rank, inter, "exchange_nodewise"),
               check, requires_grad)
    return _apply(y, _Route(sched.intra_node, intra_group, rank, intra, "exchange_nodewise"),
                  False)


def nodewise_groups(topo, group=None):
    """Creates the subgroups of exchange_nodewise for a uniform topology and returns this
    rank's (inter_group, intra_group). Every rank of `group` must call it, in the same order
    relative to its other new_group calls: it calls torch.distributed.new_group once per
    local index (the ranks with that index on every node), then once per node."""
    rank, size = rank_and_size(group, "nodewise_groups")
    if size != int(topo.ranks):
        raise ValueError(f"nodewise_groups: topology of {int(topo.ranks)} ranks for a group of "
                         f"{size} ranks")
    node, local = _local_indices(topo)
    counts = np.bincount(node)
    if counts.min() != counts.max():
        raise ValueError(f"nodewise_groups: nodes of different sizes ({counts.tolist()} ranks); "
                         f"the node-wise exchange needs a uniform topology")
    g = lambda ranks: [int(dist.get_global_rank(group, int(r))) if group is not None  # noqa
                       else int(r) for r in ranks]
    inter = intra = None
    for l in range(int(counts[0])):
        sub = dist.new_group(g(np.flatnonzero(local == l)))
        if local[rank] == l:
            inter = sub
    for n in range(counts.size):
        sub = dist.new_group(g(np.flatnonzero(node == n)))
        if node[rank] == n:
            intra = sub
    return inter, intra


def copies(plan, rank: int, x: torch.Tensor) -> int:
    """Index copies exchange(x, plan) makes on `rank` (0, 1 or 2: identities are skipped)."""
    return _rows(plan, rank, _row_bytes(x), None, x.device, "copies").copies
