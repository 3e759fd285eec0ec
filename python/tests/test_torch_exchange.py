# SPDX-License-Identifier: Apache-2.0
"""orch.torch across gloo processes on 127.0.0.1: every exchange of orchestrated steps
delivered byte for byte (payload regenerated from (item, row, column)), node-wise == flat,
backward returns exactly the original rows, plan mismatches detected on every rank, bad
inputs named. One pool of processes per world size (2, 4, 8) serves every test."""
from __future__ import annotations

import math

import numpy as np
import pytest

torch = pytest.importorskip("torch")
import torch.distributed as dist  # noqa: E402

import orch  # noqa: E402
import orch.torch as ot  # noqa: E402
import orch_reference as ref  # noqa: E402
from torch_dist import Pool  # noqa: E402

WORLDS = [2, 4, 8]
# Virtual nodes for the node-wise schedule, per world size: (nodes, ranks per node).
NODE_SHAPES = {2: [(2, 1)], 4: [(2, 2)], 8: [(2, 4), (4, 2)]}


@pytest.fixture(scope="module", params=WORLDS, ids=lambda w: f"{w}ranks")
def pool(request):
    p = Pool(request.param)
    yield p
    p.close()


# ---------------------------------------------------------------- helpers run on the workers

def payload(layout, rank: int, item_bytes, bpr: int, trail: tuple, dtype) -> "torch.Tensor":
    """The rows of `rank`'s items of `layout` in slot order, value f(item, row, column)."""
    items = np.asarray(layout.items_on(rank), dtype=np.int64)
    sizes = np.asarray(item_bytes, dtype=np.int64)[items]
    n = sizes // bpr
    total = int(n.sum())
    width = math.prod(trail)
    item = np.repeat(items, n)
    row = np.arange(total) - np.repeat(np.cumsum(n) - n, n)
    v = (item[:, None] * 1_000_003 + row[:, None]) * 131 + np.arange(width)[None, :]
    v %= 2**31 - 1
    if dtype == torch.uint8:
        v %= 251
    return torch.from_numpy(v).to(dtype).reshape((total,) + trail)


def as_bytes(t: "torch.Tensor") -> "torch.Tensor":
    """t's bytes, row by row (an empty tensor may have strides view() refuses)."""
    if t.numel() == 0:
        return torch.empty((t.shape[0], 0), dtype=torch.uint8)
    return t.contiguous().view(torch.uint8).reshape(t.shape[0], -1)


_GROUPS: dict = {}


def subgroups(nodes: int, per_node: int):
    """This rank's (topology, inter_group, intra_group), made once per shape on every rank."""
    if (nodes, per_node) not in _GROUPS:
        topo = orch.Topology.uniform(nodes * per_node, per_node)
        _GROUPS[(nodes, per_node)] = (topo,) + tuple(ot.nodewise_groups(topo))
    return _GROUPS[(nodes, per_node)]


def roundtrip(x: "torch.Tensor", move) -> "torch.Tensor":
    """The gradient of x when the received rows' grad_outputs are the received rows: the
    backward exchange must bring back exactly x."""
    x = x.clone().requires_grad_(True)
    y = move(x)
    (g,) = torch.autograd.grad(y, x, grad_outputs=y.detach().clone(), allow_unused=True)
    return torch.zeros_like(x) if g is None else g


def check_plan(plan, rank: int, world: int, bpr: int, trail: tuple, dtype) -> dict:
    """One plan, flat and node-wise, forward and backward, checked byte for byte."""
    x = payload(plan.from_layout, rank, plan.item_bytes, bpr, trail, dtype)
    want = payload(plan.to_layout, rank, plan.item_bytes, bpr, trail, dtype)
    y = ot.exchange(x, plan)
    assert y.dtype == x.dtype and y.shape == want.shape, (y.shape, want.shape)
    assert torch.equal(as_bytes(y), as_bytes(want)), f"rank {rank}: wrong rows"
    for nodes, per_node in NODE_SHAPES[world]:
        topo, inter, intra = subgroups(nodes, per_node)
        z = ot.exchange_nodewise(x, plan, topo, inter, intra)
        assert torch.equal(as_bytes(z), as_bytes(want)), \
            f"rank {rank}: node-wise {nodes}x{per_node} differs from flat"
        if dtype.is_floating_point:
            g = roundtrip(x, lambda t: ot.exchange_nodewise(t, plan, topo, inter, intra))
            assert torch.equal(g, x), f"rank {rank}: node-wise backward {nodes}x{per_node}"
    if dtype.is_floating_point:
        assert torch.equal(roundtrip(x, lambda t: ot.exchange(t, plan)), x), \
            f"rank {rank}: backward did not return the rows"
    # the binding's row form against the independent NumPy reference
    mine = plan.rows(rank, bpr)
    r = ref.make_plan(ref.Layout(plan.from_layout.rank_of, plan.from_layout.slot_of, world),
                      ref.Layout(plan.to_layout.rank_of, plan.to_layout.slot_of, world),
                      plan.item_bytes).rows(rank, bpr)
    for name in ("send_splits", "recv_splits"):
        assert np.array_equal(np.asarray(getattr(mine, name)), getattr(r, name)), name
    for name, rows in (("pack_index", r.source_rows), ("unpack_index", r.destination_rows)):
        a, b = getattr(mine, name), getattr(r, name)
        a = np.arange(rows) if a is None else np.asarray(a)
        b = np.arange(rows) if b is None else b
        assert np.array_equal(a, b), name
    return {"rows": int(x.shape[0]), "copies": ot.copies(plan, rank, x)}


def random_plan(rng, world: int, items: int, max_rows: int, bpr: int):
    rows = rng.integers(0, max_rows + 1, items)
    src = orch.Layout.from_assignment(rng.integers(0, world, items).astype(np.int32), world)
    dst = orch.Layout.from_assignment(rng.integers(0, world, items).astype(np.int32), world)
    return orch.make_plan(src, dst, (rows * bpr).astype(np.int64))


# ------------------------------------------------------------------------------ jobs

def job_random_plans(rank: int, world: int, seed: int) -> list:
    rng = np.random.default_rng([seed, world])
    out = []
    # (row shape, dtype): 1-D, 2-D and 3-D rows; byte, integer and float payloads
    cases = [((), torch.float64), ((3,), torch.int32), ((2, 5), torch.float32),
             ((7,), torch.uint8)]
    for trail, dtype in cases:
        bpr = math.prod(trail) * torch.empty((), dtype=dtype).element_size()
        plan = random_plan(rng, world, items=3 * world, max_rows=4, bpr=bpr)
        out.append(check_plan(plan, rank, world, bpr, trail, dtype))
    # a rank with no items on either side, and an exchange that moves nothing at all
    src = orch.Layout.from_assignment(np.full(4, world - 1, dtype=np.int32), world)
    plan = orch.make_plan(src, src, np.full(4, 16, dtype=np.int64))
    out.append(check_plan(plan, rank, world, 16, (2,), torch.float64))
    plan = orch.make_plan(src, orch.Layout.from_assignment(np.zeros(4, np.int32), world),
                          np.zeros(4, dtype=np.int64))
    out.append(check_plan(plan, rank, world, 8, (), torch.float64))
    return out


def test_random_plans_byte_exact(pool):
    """Random plans (empty ranks, zero-byte items, several dtypes and row shapes): flat and
    node-wise delivery byte for byte, backward exact, rows equal to the NumPy reference."""
    per_rank = pool.values(job_random_plans, 7)
    assert all(len(v) == 6 for v in per_rank)


# ------------------------------------------------------------- orchestrated steps

def small_model():
    """Two encoders (audio cut into 300-frame windows) and an LLM, with row sizes that let
    each exchange move rows of its own dtype: text 8 B/token, image inputs 8 B/unit, audio
    inputs 4 B/unit, features 32 B/token."""
    vision = orch.EncoderModel(name="vision", fields=["image"], cost=orch.AttentionCost(4, 1),
                               output_divisor=4, output_extra=1, input_bytes_per_unit=8,
                               feature_bytes_per_token=32)
    audio = orch.EncoderModel(name="audio", fields=[("audio", 300)],
                              cost=orch.AttentionCost(2, 1), output_divisor=25,
                              input_bytes_per_unit=4, feature_bytes_per_token=32)
    llm = orch.LLMModel(cost=orch.AttentionCost(64, 1), text_bytes_per_token=8)
    return orch.ModelDescription(encoders=[vision, audio], llm=llm)


# rows of each exchange: (row shape, dtype); float ones also go through backward
ROWS = {"text": ((), torch.int64), "vision.inputs": ((2,), torch.float32),
        "audio.inputs": ((), torch.float32), "vision.features": ((16,), torch.bfloat16),
        "audio.features": ((4,), torch.float64)}


def sample_batch(rank: int, world: int, seed: int, bump: int = 0):
    """1-5 examples (none on the last of 8 ranks), each with up to two images or recordings
    (bump: added to the first example's text length)."""
    rng = np.random.default_rng([seed, world, rank])
    batch = orch.LocalBatch()
    for k in range(0 if (world == 8 and rank == world - 1) else int(rng.integers(1, 6))):
        text = int(rng.integers(1, 60))
        text_tokens = text + (bump if k == 0 else 0)
        media = []
        for _ in range(int(rng.integers(0, 3))):
            if rng.random() < 0.5:
                media.append(("image", int(rng.integers(8, 64)), int(rng.integers(0, text + 1))))
            else:
                media.append(("audio", int(rng.integers(50, 800)),
                              int(rng.integers(0, text + 1))))
        media.sort(key=lambda m: m[2])
        batch.add(text_tokens, media=media)
    return batch


def plan(rank: int, world: int, seed: int, strategy: str = "orch"):
    topo = orch.Topology.uniform(world, max(world // 2, 1))
    return ot.plan_step(sample_batch(rank, world, seed), small_model(), topo, strategy=strategy)


def job_step(rank: int, world: int, seed: int, strategy: str) -> dict:
    step = plan(rank, world, seed, strategy)
    copies = {}
    for ex in step.exchanges():
        trail, dtype = ROWS[ex.name]
        bpr = math.prod(trail) * torch.empty((), dtype=dtype).element_size()
        assert ex.backward.hash == orch.inverse(ex.forward).hash, ex.name
        copies[ex.name] = check_plan(ex.forward, rank, world, bpr, trail, dtype)["copies"]
    check_assemble(step, rank)
    return {"hash": step.hash, "copies": copies}


def check_assemble(step, rank: int) -> None:
    """Text and every encoder's features, delivered by their exchanges, assembled into the
    rank's sequences: every segment holds its source rows; backward returns them exactly
    (features all the way back to the encoder ranks through the features exchange)."""
    text = step.text.forward
    tokens = payload(text.to_layout, rank, text.item_bytes, 8, (), torch.int64)
    text_rows = ot.exchange(payload(text.from_layout, rank, text.item_bytes, 8, (),
                                    torch.int64), text)
    assert torch.equal(text_rows, tokens)
    text_rows = text_rows.double()[:, None].repeat(1, 4).requires_grad_(True)
    encoded, delivered = [], []
    for e in step.encoders:
        f = e.features.forward
        x = payload(f.from_layout, rank, f.item_bytes, 32, (4,), torch.float64)
        x.requires_grad_(True)
        encoded.append(x)
        delivered.append(ot.exchange(x, f))
    seq = ot.assemble(step, rank, text_rows, delivered)
    a = step.assembly
    b, e = int(a.rank_begin[rank]), int(a.rank_begin[rank + 1])
    assert seq.shape == (int(a.sequence_tokens[rank]), 4)
    sources = [text_rows] + delivered
    for s in range(b, e):  # the reference: one slice per segment
        src, st, tt, n = (int(a.source[s]), int(a.source_token[s]), int(a.target_token[s]),
                          int(a.tokens[s]))
        assert torch.equal(seq[tt:tt + n], sources[src + 1][st:st + n]), f"segment {s}"
    assert np.array_equal(ot.sequence_lengths(step, rank).sum(), seq.shape[0])
    grads = torch.autograd.grad(seq, [text_rows] + encoded, grad_outputs=seq.detach().clone(),
                                allow_unused=True)
    for g, want in zip(grads, [text_rows] + encoded):
        assert torch.equal(torch.zeros_like(want) if g is None else g, want)


@pytest.mark.parametrize("seed,strategy", [(1, "orch"), (2, "per_phase")])
def test_orchestrated_step_byte_exact(pool, seed, strategy):
    """plan_step on every rank, then every exchange of the step (text, each encoder's inputs
    and features) flat and node-wise, forward and backward, byte for byte; the sequences
    assembled from the delivered rows; every rank planned the same step."""
    per_rank = pool.values(job_step, seed, strategy)
    assert len({v["hash"] for v in per_rank}) == 1
    assert {tuple(sorted(v["copies"])) for v in per_rank} == {tuple(sorted(ROWS))}


# ------------------------------------------------------------- plan agreement

def job_mismatch(rank: int, world: int) -> dict:
    out = {}
    h = (0x9E3779B97F4A7C15 * (world + 1)) % 2**64
    assert ot.check_plan_hash(h) == h
    assert ot.check_plan_hash(2**64 - 1) == 2**64 - 1
    for name, mine in (("perturbed", h ^ (1 << 40) if rank == world - 1 else h),
                       ("extremes", 0 if rank == 0 else 2**64 - 1)):
        try:
            ot.check_plan_hash(mine)
            out[name] = None
        except ot.PlanMismatchError as e:
            out[name] = str(e)
    try:  # one rank plans with another strategy: a different step
        plan(rank, world, 3, "per_phase" if rank == 0 else "orch")
        out["step"] = None
    except ot.PlanMismatchError as e:
        out["step"] = str(e)
    return out


def test_plan_mismatch_detected_on_every_rank(pool):
    """A plan that differs on one rank raises PlanMismatchError on every rank, with both
    hashes in the message (one all_reduce: the smallest and largest int64 readings)."""
    w = pool.world
    h = (0x9E3779B97F4A7C15 * (w + 1)) % 2**64
    lo, hi = sorted([h, h ^ (1 << 40)], key=lambda v: v - 2**64 if v >= 2**63 else v)
    for rank, out in enumerate(pool.values(job_mismatch)):
        assert f"{lo:#018x}" in out["perturbed"] and f"{hi:#018x}" in out["perturbed"], out
        assert f"{0:#018x}" in out["extremes"] and f"{2**64 - 1:#018x}" in out["extremes"]
        assert out["step"] is not None and f"rank {rank} holds" in out["step"]


# ------------------------------------------------------------- bad inputs

class ForgedBatch:
    """A batch whose metadata claims a negative text length (checksum recomputed), or whose
    serialisation fails, on one rank."""

    def __init__(self, rank: int, world: int, seed: int, bad_rank: int, how: str):
        self.args, self.bad, self.how = (rank, world, seed), rank == bad_rank, how

    def serialize(self, rank: int):
        words = np.array(sample_batch(*self.args).serialize(rank))
        if self.bad and self.how == "raise":
            raise ValueError(f"local example 0 of rank {rank} is broken")
        if self.bad:
            other = sample_batch(*self.args, bump=1).serialize(rank)
            at = int(np.flatnonzero(words != other)[0])
            words[at] = -5  # the first example's text length
            words[-1] = orch.LocalBatch.checksum(words[:-1])
        return words


def expect(kind, fn, *texts) -> str:
    try:
        fn()
    except kind as e:
        missing = [t for t in texts if t not in str(e)]
        assert not missing, f"{missing} not in: {e}"
        return str(e)
    raise AssertionError(f"no {kind.__name__} raised")


def job_bad_inputs(rank: int, world: int) -> list:
    model = small_model()
    topo = orch.Topology.uniform(world, max(world // 2, 1))
    seen = []
    seen.append(expect(ValueError, lambda: orch.LocalBatch().add(-3), "negative", "example 0"))
    batch = sample_batch(rank, world, 4)
    seen.append(expect(ValueError, lambda: ot.plan_step(
        ForgedBatch(rank, world, 4, 0, "lengths"), model, topo),
        "rank 0", "negative text length -5"))
    seen.append(expect(ValueError, lambda: ot.plan_step(
        ForgedBatch(rank, world, 4, world - 1, "raise"), model, topo), f"rank {world - 1}"))
    seen.append(expect(ValueError, lambda: ot.plan_step(
        batch, model, orch.Topology.uniform(2 * world, 2)), f"{2 * world} ranks"))
    step = ot.plan_step(batch, model, topo)
    text = step.text.forward
    x = payload(text.from_layout, rank, text.item_bytes, 8, (), torch.int64)
    # a row count that disagrees with the plan, on every rank / on one rank with check=True
    seen.append(expect(ValueError, lambda: ot.exchange(torch.cat([x, x[:1] if len(x) else
                                                                  torch.zeros(1, dtype=x.dtype)]),
                                                       text),
                       f"rank {rank} passed {x.shape[0] + 1} rows", f"sends {x.shape[0]}"))
    bad = torch.zeros(x.shape[0] + 1, dtype=x.dtype) if rank == world - 1 else x
    seen.append(expect(ValueError, lambda: ot.exchange(bad, text, check=True),
                       f"rank {world - 1}"))
    # rows of 3 bytes: no item of 8-byte tokens is whole rows
    seen.append(expect(ValueError, lambda: ot.exchange(torch.zeros((0, 3), dtype=torch.uint8),
                                                       text), "item", "3 bytes of a row"))
    # a group of the wrong size
    shape = NODE_SHAPES[world][0]
    tp, inter, intra = subgroups(*shape)
    seen.append(expect(ValueError, lambda: ot.exchange(x, text, group=intra),
                       f"over {world} ranks", f"has {shape[1]}"))
    if shape[0] > 1 and shape[1] > 1:  # subgroups swapped
        seen.append(expect(ValueError, lambda: ot.exchange_nodewise(x, text, tp, intra, inter),
                           f"rank {rank}'s inter-node group"))
    # assemble: a text buffer of another dtype than the features, a wrong row count
    f = [torch.zeros((int(np.asarray(e.features.forward.item_bytes)[
        np.asarray(e.features.forward.to_layout.items_on(rank))].sum()) // 32, 4),
        dtype=torch.float64) for e in step.encoders]
    rows = int(np.asarray(text.item_bytes)[np.asarray(text.to_layout.items_on(rank))].sum()) // 8
    seen.append(expect(ValueError, lambda: ot.assemble(step, rank, torch.zeros((rows, 4),
                                                       dtype=torch.float32), f),
                       "text", "float32"))
    seen.append(expect(ValueError, lambda: ot.assemble(step, rank, torch.zeros((rows + 1, 4),
                                                                            dtype=torch.float64), f),
                       f"rank {rank}'s text buffer has {rows + 1} rows"))
    ot.assemble(step, rank, torch.zeros((rows, 4), dtype=torch.float64), f)  # right sizes pass
    seen.append(expect(TypeError, lambda: ot.check_plan_hash(1.5), "integer"))
    seen.append(expect(ValueError, lambda: ot.check_plan_hash(-1), "outside"))
    ot.check_plan_hash(step.hash)  # every rank still in step: the group is usable
    return seen


def test_bad_inputs_raise_value_error_naming_it(pool):
    """Negative lengths (at the batch, and forged into the metadata: every rank raises), a
    rank whose batch fails, a topology of the wrong size, a tensor whose row count disagrees
    with the plan (every rank; one rank with check=True), rows that do not divide an item, a
    group of the wrong size, swapped subgroups, assemble with a wrong dtype or row count."""
    per_rank = pool.values(job_bad_inputs)
    assert len({len(v) for v in per_rank}) == 1


# ------------------------------------------------ a rank whose encoder ran on no item

def job_empty_rank_backward(rank: int, world: int) -> dict:
    """Rank 0 sends nothing: its input is an empty tensor that does not require grad (what an
    encoder that ran on no item returns). With requires_grad=True it still runs the backward
    exchange with the others, so nobody waits, and every gradient arrives."""
    rng = np.random.default_rng(7)
    items = 4 * world
    src_rank = rng.integers(1, world, items).astype(np.int32)  # nothing on rank 0
    dst_rank = rng.integers(0, world, items).astype(np.int32)
    rows = rng.integers(1, 4, items)
    plan = orch.make_plan(orch.Layout.from_assignment(src_rank, world),
                          orch.Layout.from_assignment(dst_rank, world),
                          (rows * 3 * 4).astype(np.int64))
    n = int(plan.source_bytes(rank)) // 12
    if rank == 0:
        x = torch.zeros(0, 3)
    else:
        x = torch.rand(n, 3, requires_grad=True)
    y = ot.exchange(x, plan, requires_grad=True)
    assert y.requires_grad
    (3.0 * y).sum().backward()
    ok = rank == 0 or bool(torch.equal(x.grad, torch.full_like(x, 3.0)))
    expect(ValueError, lambda: ot.exchange(torch.zeros(n, 3, dtype=torch.int64), plan,
                                           requires_grad=True), "needs a floating tensor")
    return {"rank": rank, "grad_ok": ok, "received": int(y.shape[0])}


def test_empty_rank_takes_part_in_backward(pool):
    got = pool.values(job_empty_rank_backward)
    assert all(v["grad_ok"] for v in got)


# ------------------------------------------------------------- a rank that never comes

def job_absent_rank(rank: int, world: int) -> str:
    sub = dist.new_group(list(range(world)))  # abandoned afterwards: an op stays pending
    if rank == world - 1:
        return "absent"
    expect(TimeoutError, lambda: ot.check_plan_hash(12345, sub, timeout_s=2.0),
           "within 2.0 s")
    return "timed out"


def test_absent_rank_times_out_instead_of_hanging(pool):
    """The hash check waits `timeout_s`, then raises TimeoutError on the ranks that came."""
    if pool.world != 2:
        pytest.skip("one world size is enough")
    assert pool.values(job_absent_rank) == ["timed out", "absent"]


# ------------------------------------------------------------- assemble on its own

def test_assemble_reads_out_of_order_sources_by_gather():
    """A map whose feature segments read their buffer out of order takes the cat +
    index_select path; in order, the index_copy path. Both give the segments exactly, and
    backward returns each source row's gradient (no process group needed)."""
    from types import SimpleNamespace as NS

    def step_of(source, source_token, tokens):
        tokens = np.asarray(tokens)
        target = np.cumsum(tokens) - tokens
        a = NS(rank_begin=np.array([0, len(tokens)]), source=np.asarray(source, np.int32),
               source_token=np.asarray(source_token), target_token=target, tokens=tokens,
               sequence_tokens=np.array([int(tokens.sum())]))
        return NS(hash=hash((tuple(source), tuple(source_token))), assembly=a,
                  encoders=[NS(phase=NS(name="vision"))])

    # text [0, 2), features [2, 4), text [2, 3), features [0, 2): the features out of order
    for source_token in ([0, 2, 2, 0], [0, 0, 2, 2]):
        step = step_of([-1, 0, -1, 0], source_token, [2, 2, 1, 2])
        text = torch.arange(3 * 2, dtype=torch.float64).reshape(3, 2).requires_grad_(True)
        feat = (100 + torch.arange(4 * 2, dtype=torch.float64)).reshape(4, 2)
        feat.requires_grad_(True)
        seq = ot.assemble(step, 0, text, [feat])
        for s in range(4):
            src = [text, feat][step.assembly.source[s] + 1]
            st, tt, n = source_token[s], int(step.assembly.target_token[s]), \
                int(step.assembly.tokens[s])
            assert torch.equal(seq[tt:tt + n], src[st:st + n])
        gt, gf = torch.autograd.grad(seq, [text, feat], grad_outputs=seq.detach().clone())
        assert torch.equal(gt, text) and torch.equal(gf, feat)
