# SPDX-License-Identifier: Apache-2.0
"""Tests of the orch bindings (orch._orch): results tied to the C++ library by golden values
(tests/orchestrate/test_item_columns.cpp asserts the same plan hashes), invariants, the
numpy conventions, the error mapping and the released GIL."""

from __future__ import annotations

import importlib.metadata
import itertools
import pathlib
import re
import subprocess
import sys
import threading
import time

import numpy as np
import pytest

import orch

ROOT = pathlib.Path(__file__).resolve().parents[2]

# The golden hashes of examples/orchestrate_step.cpp's step (8 ranks, 2 nodes), asserted by
# the doctest "golden plan hash of the orchestrate_step example" in
# tests/orchestrate/test_item_columns.cpp.
GOLDEN_ORCH = 2521555356662069866
GOLDEN_NONE = 14274743033688558961

ROWS = [  # owner, text, image patches, audio frames (examples/orchestrate_step.cpp)
    (0, 310, 0, 0), (0, 95, 1296, 0), (0, 420, 0, 0), (0, 60, 0, 480),
    (1, 120, 3600, 0), (1, 80, 2304, 0), (1, 64, 4096, 0), (1, 150, 1024, 0),
    (2, 900, 0, 3000), (2, 40, 0, 2400), (2, 1600, 0, 0), (2, 75, 0, 1800),
    (3, 200, 0, 0), (3, 180, 0, 0), (3, 260, 576, 0), (3, 90, 0, 0),
    (4, 350, 0, 0), (4, 45, 900, 0), (4, 130, 0, 0), (4, 520, 0, 0),
    (5, 70, 1600, 0), (5, 240, 0, 0), (5, 110, 0, 600), (5, 300, 0, 0),
    (6, 2400, 2500, 0), (6, 1200, 0, 0), (6, 88, 3136, 900), (6, 700, 1764, 0),
    (7, 150, 0, 0), (7, 66, 784, 0), (7, 210, 0, 0), (7, 330, 0, 350),
]


def golden_model() -> orch.ModelDescription:
    return orch.ModelDescription(
        encoders=[
            orch.EncoderModel(name="vision", fields=["image"], cost=orch.AttentionCost(1300, 2, 0),
                              output_divisor=4, input_bytes_per_unit=14 * 14 * 3 * 2,
                              feature_bytes_per_token=4096 * 2),
            orch.EncoderModel(name="audio", fields=["audio"], cost=orch.AttentionCost(1300, 1, 0),
                              output_divisor=2, input_bytes_per_unit=128 * 2,
                              feature_bytes_per_token=4096 * 2),
        ],
        llm=orch.LLMModel(cost=orch.AttentionCost(14000, 1, 0), text_bytes_per_token=8))


def golden_media(text: int, image: int, audio: int) -> list[tuple[str, int, int]]:
    media = []
    if image:
        media.append(("image", image, 0))
    if audio:
        media.append(("audio", audio, text))
    return media


def golden_table_by_add() -> orch.ItemTable:
    t = orch.ItemTable()
    nxt = [0] * 8
    for owner, text, image, audio in ROWS:
        t.add_example(owner, nxt[owner], text, golden_media(text, image, audio))
        nxt[owner] += 1
    return t


def golden_columns():
    owner, local, text = [], [], []
    m_ex, m_field, m_len, m_pos = [], [], [], []
    nxt = [0] * 8
    names = ["image", "audio"]
    for e, (o, tx, image, audio) in enumerate(ROWS):
        owner.append(o)
        local.append(nxt[o])
        nxt[o] += 1
        text.append(tx)
        for field, length, pos in golden_media(tx, image, audio):
            m_ex.append(e)
            m_field.append(names.index(field))
            m_len.append(length)
            m_pos.append(pos)
    arrays = [np.array(x, dtype=np.int64) for x in (owner, local, text, m_ex, m_field, m_len, m_pos)]
    return arrays, names


def table_columns(t: orch.ItemTable):
    return (t.owners, t.local_indices, t.text_lengths, t.media_offsets, t.media_fields,
            t.media_lengths, t.media_text_positions, t.media_examples)


def assert_same_table(a: orch.ItemTable, b: orch.ItemTable) -> None:
    assert a.field_names == b.field_names
    for x, y in zip(table_columns(a), table_columns(b)):
        assert x.dtype == y.dtype
        np.testing.assert_array_equal(x, y)


# ---- version ---------------------------------------------------------------------------

def test_version_matches_cmake_cpp_and_metadata():
    text = (ROOT / "CMakeLists.txt").read_text()
    cmake = re.search(r"project\(orch\s+VERSION\s+([0-9]+\.[0-9]+\.[0-9]+)", text).group(1)
    v = orch.version  # orch::version, major * 10000 + minor * 100 + patch
    assert orch.__version__ == cmake
    assert orch.__version__ == f"{v // 10000}.{v // 100 % 100}.{v % 100}"
    assert importlib.metadata.version("orch") == orch.__version__


# ---- golden plan hash ------------------------------------------------------------------

def test_golden_hash_add_example_and_from_arrays():
    model = golden_model()
    topo = orch.Topology.uniform(8, 4)
    by_add = golden_table_by_add()
    arrays, names = golden_columns()
    by_arrays = orch.ItemTable.from_arrays(*arrays, field_names=names)
    assert_same_table(by_add, by_arrays)
    for table in (by_add, by_arrays):
        step = orch.orchestrate(table, model, topo)
        assert step.hash == GOLDEN_ORCH
        assert 0 <= step.hash < 2**64
        assert orch.orchestrate(table, model, topo, strategy="none").hash == GOLDEN_NONE
        assert orch.orchestrate(table, model, topo, strategy=orch.Strategy.none).hash == GOLDEN_NONE
    # Threads never change the plan.
    assert orch.orchestrate(by_arrays, model, topo, threads=2).hash == GOLDEN_ORCH


def test_step_plan_structure():
    model = golden_model()
    topo = orch.Topology.uniform(8, 4)
    table = golden_table_by_add()
    step = orch.orchestrate(table, model, topo, strategy="per_phase")
    assert step.strategy == orch.Strategy.per_phase
    assert [p.name for p in step.phases()] == ["vision", "audio", "llm"]
    assert [x.name for x in step.exchanges()] == [
        "vision.inputs", "vision.features", "audio.inputs", "audio.features", "text"]
    assert [e.phase.name for e in step.encoders] == ["vision", "audio"]
    assert step.phase("llm").name == "llm" and step.exchange("text").name == "text"
    assert step.encoder("audio").inputs.name == "audio.inputs"
    with pytest.raises(ValueError, match=r"no phase named 'x' \(phases: 'vision', 'audio', 'llm'\)"):
        step.phase("x")
    with pytest.raises(ValueError, match="no exchange named 'y'"):
        step.exchange("y")
    with pytest.raises(ValueError, match="no encoder named 'z'"):
        step.encoder("z")
    llm = step.llm
    assert llm.loads.dtype == np.int64 and llm.loads.sum() == llm.costs.sum() == llm.total
    assert llm.max_load == llm.loads.max() and llm.max_load >= llm.lower_bound
    assert llm.placement.items == table.examples and llm.placement.ranks == 8
    assert llm.placement.rank_of.dtype == np.int32 and llm.placement.slot_of.dtype == np.int64
    # Phase loads per rank are the costs summed by placement.
    for p in step.phases():
        np.testing.assert_array_equal(
            np.bincount(p.placement.rank_of, weights=p.costs, minlength=8).astype(np.int64), p.loads)
    # Each exchange: forward and backward move the same bytes, backward is the inverse.
    for x in step.exchanges():
        assert x.forward.total_bytes == x.backward.total_bytes == x.total_bytes
        assert x.self_bytes + x.intra_node_bytes + x.inter_node_bytes == x.total_bytes
        assert x.backward == orch.inverse(x.forward)
        assert x.forward.hash != 0
    vision = step.encoders[0]
    assert vision.inputs.forward.from_layout == vision.owner_media
    assert vision.features.forward.to_layout == vision.feature_layout
    # Sequences: text + every output, and the assembly covers them.
    np.testing.assert_array_equal(step.sequence_length, step.assembly.sequence_length)
    a = step.assembly
    assert a.sequence_tokens.sum() == step.sequence_length.sum() == a.tokens.sum()
    assert len(a.rank_begin) == 9 and a.rank_begin[-1] == len(a.source)
    assert a.source.dtype == np.int32 and set(np.unique(a.source)) <= {-1, 0, 1}
    assert ((a.media == -1) == (a.source == -1)).all()
    # Chunks: nothing is cut in this model.
    c = step.chunks
    assert not c.cut and c.count == table.media_items
    np.testing.assert_array_equal(c.length, table.media_lengths)
    np.testing.assert_array_equal(c.first_chunk, np.arange(table.media_items + 1))
    # Views are read-only and keep the step alive.
    costs = step.encoders[0].phase.costs
    assert not costs.flags.writeable
    expect = costs.copy()
    del step, vision, llm, a
    np.testing.assert_array_equal(costs, expect)


def test_chunked_step_with_preset():
    model = orch.model_preset("omni-7b")
    assert orch.model_preset_names() == ["omni-7b", "omni-72b"]
    assert model.encoders[1].fields == [("audio", 3000)]
    t = orch.ItemTable(model)
    t.add_example(0, 0, 100, [("audio", 60000, 50)])  # 10 minutes at 100 frames/s: 20 windows
    t.add_example(1, 0, 300, [("image", 1024, 0)])
    step = orch.orchestrate(t, model, orch.Topology.uniform(2, 1))
    c = step.chunks
    assert c.cut and c.count == 21
    np.testing.assert_array_equal(c.media_of, [0] * 20 + [1])
    np.testing.assert_array_equal(c.offset[:3], [0, 3000, 6000])
    assert c.length.sum() == 61024
    np.testing.assert_array_equal(c.first_chunk, [0, 20, 21])
    assert len(step.output_tokens) == len(step.media_encoder) == 21
    with pytest.raises(ValueError, match="which the model does not consume"):
        t.add_example(0, 1, 10, [("smell", 5, 0)])


# ---- item table ------------------------------------------------------------------------

def random_columns(seed: int, examples: int, ranks: int):
    rng = np.random.default_rng(seed)
    owner = rng.integers(0, ranks, examples).astype(np.int32)
    local = np.zeros(examples, dtype=np.int64)
    for r in range(ranks):
        idx = np.flatnonzero(owner == r)
        local[idx] = np.arange(len(idx))
    text = rng.integers(1, 2000, examples)
    counts = rng.integers(0, 4, examples)
    media_example = np.repeat(np.arange(examples), counts)
    media_field = rng.integers(0, 2, len(media_example)).astype(np.int32)
    media_length = rng.integers(0, 5000, len(media_example))
    media_position = np.zeros(len(media_example), dtype=np.int64)  # non-decreasing: all 0
    return [owner, local, text, media_example, media_field, media_length, media_position]


@pytest.mark.parametrize("seed", [1, 2, 3])
def test_from_arrays_equals_add_example(seed):
    cols = random_columns(seed, 300, 8)
    names = ["image", "audio"]
    model = golden_model()
    for kwargs in ({}, {"model": model}):
        fast = orch.ItemTable.from_arrays(*cols, field_names=names, **kwargs)
        slow = orch.ItemTable(kwargs.get("model"))
        owner, local, text, me, mf, ml, mp = cols
        first = np.searchsorted(me, np.arange(len(owner) + 1))
        for e in range(len(owner)):
            media = [(names[mf[m]], int(ml[m]), int(mp[m])) for m in range(first[e], first[e + 1])]
            slow.add_example(int(owner[e]), int(local[e]), int(text[e]), media)
        assert_same_table(fast, slow)
        fast.validate(8)
    assert fast.owners.dtype == np.int32 and fast.media_fields.dtype == np.int32
    assert fast.text_lengths.dtype == np.int64 and len(fast) == 300


def test_from_arrays_errors():
    arrays, names = golden_columns()
    bad = [a.copy() for a in arrays]
    bad[3][[0, 1]] = bad[3][[1, 0]]  # media examples out of order
    with pytest.raises(ValueError, match="media are grouped by example in example order"):
        orch.ItemTable.from_arrays(*bad, field_names=names)
    with pytest.raises(ValueError, match=r"field code 1, outside \[0, 1\) of the field names"):
        orch.ItemTable.from_arrays(*arrays, field_names=["image"])
    bad = [a.copy() for a in arrays]
    bad[2][5] = -3
    with pytest.raises(ValueError, match=r"example 5 \(rank 1, local index 1\) has negative text length -3"):
        orch.ItemTable.from_arrays(*bad, field_names=names)
    with pytest.raises(ValueError, match="media_length: expected an integer array, got dtype float64"):
        orch.ItemTable.from_arrays(*arrays[:5], arrays[5].astype(float), arrays[6], field_names=names)
    bad = [a.copy() for a in arrays]
    bad[0][3] = 2**32
    with pytest.raises(ValueError, match="owner: value 4294967296 does not fit int32"):
        orch.ItemTable.from_arrays(*bad, field_names=names)


# ---- metadata --------------------------------------------------------------------------

def test_metadata_round_trip():
    model = golden_model()
    batches = [orch.LocalBatch() for _ in range(8)]
    for owner, text, image, audio in ROWS:
        batches[owner].add(text, golden_media(text, image, audio))
    words = [b.serialize(r) for r, b in enumerate(batches)]
    assert all(w.dtype == np.int64 and w.ndim == 1 for w in words)
    table = orch.table_from_metadata(words, model=model)
    assert_same_table(table, orch.ItemTable.from_arrays(*golden_columns()[0],
                                                        field_names=["image", "audio"], model=model))
    assert orch.orchestrate(table, model, orch.Topology.uniform(8, 4)).hash == GOLDEN_ORCH
    width = max(len(w) for w in words)
    padded = np.zeros(8 * width, dtype=np.int64)
    for r, w in enumerate(words):
        padded[r * width: r * width + len(w)] = w
    assert_same_table(orch.table_from_metadata_padded(padded, 8, model=model), table)
    counts = np.array([len(w) for w in words])
    assert_same_table(orch.table_from_metadata_concatenated(np.concatenate(words), counts,
                                                            model=model), table)
    # LocalBatch.from_arrays gives the same words as add.
    b = batches[6]
    rows6 = [r for r in ROWS if r[0] == 6]
    me, mf, ml, mp, names = [], [], [], [], []
    for e, (_, text, image, audio) in enumerate(rows6):
        for field, length, pos in golden_media(text, image, audio):
            if field not in names:
                names.append(field)
            me.append(e), mf.append(names.index(field)), ml.append(length), mp.append(pos)
    b2 = orch.LocalBatch.from_arrays([r[1] for r in rows6], me, mf, ml, mp, names)
    np.testing.assert_array_equal(b2.serialize(6), words[6])
    assert b2.field_names == b.field_names and len(b2) == 4
    # A corrupted buffer is rejected by name.
    broken = [w.copy() for w in words]
    broken[3][-1] ^= 1
    with pytest.raises(ValueError, match="rank 3"):
        orch.table_from_metadata(broken)


# ---- partition and cost ----------------------------------------------------------------

def test_cost_models_vectorised():
    lengths = np.array([0, 1, 7, 1000, 123456])
    for model in (orch.AttentionCost(linear=3, quadratic=2, per_item=5),
                  orch.LinearCost(per_unit=4, per_item=1), orch.MemoryCost(bytes_per_unit=2)):
        costs = model(lengths)
        assert costs.dtype == np.int64
        np.testing.assert_array_equal(costs, [model(int(x)) for x in lengths])
    assert orch.AttentionCost(3, 2, 5)(10) == 3 * 10 + 2 * 100 + 5
    with pytest.raises(ValueError, match="compute_costs: item 1 has negative length -2"):
        orch.LinearCost()(np.array([1, -2]))
    with pytest.raises(OverflowError, match="exceeds 2\\^63 - 1"):
        orch.AttentionCost(quadratic=1 << 40)(np.array([1 << 30]))


def brute_force_max(costs, bins):
    best = None
    for assign in itertools.product(range(bins), repeat=len(costs)):
        loads = np.bincount(assign, weights=costs, minlength=bins)
        best = loads.max() if best is None else min(best, loads.max())
    return int(best)


ALGORITHMS = ["auto", "lpt", "lpt+ls", "kk", "multifit", "subset_sum", "exact"]


@pytest.mark.parametrize("algorithm", ALGORITHMS + list(orch.PartitionAlgorithm))
def test_partition_invariants_and_optimum(algorithm):
    rng = np.random.default_rng(7)
    for _ in range(5):
        costs = rng.integers(1, 100, 8)
        r = orch.partition(costs, 3, algorithm=algorithm)
        assert r.bin_of.dtype == np.int32 and r.loads.dtype == np.int64
        np.testing.assert_array_equal(np.bincount(r.bin_of, weights=costs, minlength=3), r.loads)
        # The result may carry a stronger proven bound than max(ceil(sum / k), max c).
        assert r.max_load == r.loads.max() >= r.lower_bound >= orch.lower_bound(costs, 3)
        opt = brute_force_max(costs, 3)
        assert r.max_load >= opt
        if algorithm in ("exact", orch.PartitionAlgorithm.exact, "auto",
                         orch.PartitionAlgorithm.automatic):
            assert r.max_load == opt
        if r.proven_optimal:
            assert r.max_load == opt
        assert r.max_load <= (4 / 3) * opt + 1e-9 or algorithm in ("subset_sum", orch.PartitionAlgorithm.subset_sum)


def test_partition_known_results_and_options():
    r = orch.partition([5, 4, 3, 3, 3], 2)
    assert r.max_load == 9 and r.lower_bound == 9 and r.proven_optimal
    assert r.ratio_to_lower_bound() == 1.0
    # Groups: a group's items share a bin.
    groups = np.array([0, 0, 1, 1, -1, -1])
    r = orch.partition([4, 4, 1, 1, 3, 3], 2, groups=groups)
    assert r.bin_of[0] == r.bin_of[1] and r.bin_of[2] == r.bin_of[3]
    assert r.max_load == 8
    r = orch.partition(np.full(9, 5), 3, max_items_per_bin=3, equal_counts=True)
    np.testing.assert_array_equal(np.bincount(r.bin_of), [3, 3, 3])
    r = orch.partition([10, 10, 10, 10], 2, speeds=[3, 1])
    assert np.bincount(r.bin_of, minlength=2)[0] == 3
    with pytest.raises(ValueError, match="unknown partition algorithm 'nope'"):
        orch.partition([1], 1, algorithm="nope")
    with pytest.raises(orch.InfeasibleError, match="above second_capacity = 4") as e:
        orch.partition([10, 1], 2, second_resource=[5, 5], second_capacity=4)
    assert isinstance(e.value, ValueError)
    with pytest.raises(ValueError, match="number of bins must be positive, got 0"):
        orch.partition([1, 2], 0)
    with pytest.raises(OverflowError):
        orch.partition([2**62, 2**62, 2**62], 2)


def test_microbatches_and_padded():
    tokens = np.array([900, 800, 700, 300, 200, 100])
    m = orch.min_microbatches(tokens, 1000)
    assert m == 3
    r = orch.split_microbatches(tokens * 3, tokens, 1000, m)
    loads = np.bincount(r.bin_of, weights=tokens, minlength=m)
    assert loads.max() <= 1000
    assert orch.common_microbatches([2, 5, 3]) == 5
    with pytest.raises(orch.InfeasibleError, match="above the token cap of 500"):
        orch.min_microbatches(tokens, 500)
    lengths = np.array([9, 8, 2, 2, 1, 1, 1])
    p = orch.padded_partition(lengths, 3)
    best = min(max((np.bincount(a, minlength=3) * [max([lengths[i] for i in range(7) if a[i] == b],
                                                           default=0) for b in range(3)]))
               for a in itertools.product(range(3), repeat=7))
    assert p.max_padded == best and p.proven_optimal
    np.testing.assert_array_equal(p.padded, p.counts * p.longest)


# ---- layouts and plans -----------------------------------------------------------------

def test_plans_views_rows_and_schedule():
    rng = np.random.default_rng(3)
    n, ranks = 200, 8
    a = orch.Layout.from_assignment(rng.integers(0, ranks, n).astype(np.int32), ranks)
    b = orch.Layout.from_assignment(rng.integers(0, ranks, n), ranks)
    item_bytes = rng.integers(1, 10, n) * 16
    plan = orch.make_plan(a, b, item_bytes)
    assert plan.ranks == ranks and plan.items == n and plan.total_bytes == item_bytes.sum()
    assert 0 <= plan.hash < 2**64
    assert plan.from_layout == a and plan.to_layout == b
    back = orch.inverse(plan)
    ident = orch.compose(plan, back)
    assert ident.from_layout == ident.to_layout == a
    assert sum(ident.self_bytes(r) for r in range(ranks)) == plan.total_bytes
    pairs = plan.pairs()
    assert pairs["bytes"].sum() == plan.total_bytes and pairs["items"].sum() == n
    assert pairs.dtype.names == ("source", "destination", "items", "bytes")
    for r in range(ranks):
        v = plan.view(r)
        assert v.send_items.dtype == np.int64 and v.send_peers.dtype == np.int32
        assert v.source_bytes == plan.source_bytes(r) == v.send_sizes.sum()
        assert v.destination_bytes == plan.destination_bytes(r) == v.recv_sizes.sum()
        np.testing.assert_array_equal(np.sort(v.send_items), np.sort(a.items_on(r)))
        x = plan.rows(r, 16)
        assert x.send_splits.dtype == np.int64 and len(x.send_splits) == ranks
        assert x.send_splits.sum() == x.source_rows == v.source_bytes // 16
        assert x.recv_splits.sum() == x.destination_rows
        assert (x.pack_index is None) == v.pack_is_identity
        assert (x.unpack_index is None) == v.unpack_is_identity
        if x.pack_index is not None:
            assert np.array_equal(np.sort(x.pack_index), np.arange(x.source_rows))
    with pytest.raises(ValueError, match="not a multiple of the 7 bytes of a row"):
        plan.rows(0, 7)
    # An identity plan: both indices None.
    same = orch.make_plan(a, a, item_bytes).rows(0, 16)
    assert same.pack_index is None and same.unpack_index is None
    topo = orch.Topology.uniform(ranks, 4)
    assert topo.ranks == 8 and topo.nodes == 2 and topo.node_of(5) == 1 and topo.local_index(5) == 1
    sched = orch.make_schedule(plan, topo)
    assert sched.max_remote_peers() <= topo.nodes - 1
    assert orch.compose(sched.inter_node, sched.intra_node).to_layout == b
    c = orch.Layout.contiguous([3, 0, 2])
    np.testing.assert_array_equal(c.rank_of, [0, 0, 0, 2, 2])
    np.testing.assert_array_equal(c.items_on(2), [3, 4])
    with pytest.raises(ValueError, match="layout::from_assignment"):
        orch.Layout.from_assignment([0, 5], 2)
    with pytest.raises(ValueError, match="item_bytes: expected a 1-D integer array, got 2-D"):
        orch.make_plan(a, b, item_bytes.reshape(20, 10))


# ---- errors ----------------------------------------------------------------------------

def test_error_mapping_keeps_messages():
    topo = orch.Topology.uniform(8, 4)
    with pytest.raises(ValueError) as e:
        orch.Topology.uniform(10, 4)
    assert str(e.value) == "topology::uniform: 10 ranks are not a multiple of 4 ranks per node"
    with pytest.raises(orch.InfeasibleError) as e:
        orch.orchestrate(golden_table_by_add(), golden_model(), topo, llm_max_examples_per_rank=1)
    assert "options.llm.max_examples_per_rank = 1" in str(e.value)
    with pytest.raises(ValueError, match="unknown strategy 'bogus'"):
        orch.orchestrate(golden_table_by_add(), golden_model(), topo, strategy="bogus")
    t = orch.ItemTable()
    t.add_example(0, 0, 5, [("smell", 3, 0)])
    with pytest.raises(ValueError, match="smell"):
        orch.orchestrate(t, golden_model(), topo)
    with pytest.raises(ValueError, match="model_preset: unknown model 'x'"):
        orch.model_preset("x")
    with pytest.raises(ValueError, match="costs: expected an integer array, got dtype float64"):
        orch.partition(np.array([1.0, 2.0]), 2)
    with pytest.raises(ValueError, match="costs: expected a 1-D integer array, got 0-D"):
        orch.partition(5, 2)
    with pytest.raises(ValueError, match="value 18446744073709551615 does not fit int64"):
        orch.partition(np.array([2**64 - 1], dtype=np.uint64), 2)
    # Empty sequences of any dtype are empty integer arrays.
    assert orch.partition([], 2).max_load == 0


# ---- GIL -------------------------------------------------------------------------------

def big_table(ranks=1024, per_rank=32, seed=5):
    rng = np.random.default_rng(seed)
    n = ranks * per_rank
    owner = np.repeat(np.arange(ranks, dtype=np.int32), per_rank)
    local = np.tile(np.arange(per_rank), ranks)
    text = rng.integers(8, 2000, n)
    counts = rng.integers(0, 3, n)
    me = np.repeat(np.arange(n), counts)
    mf = rng.integers(0, 2, len(me)).astype(np.int32)
    ml = rng.integers(200, 4000, len(me))
    return orch.ItemTable.from_arrays(owner, local, text, me, mf, ml, np.zeros(len(me), np.int64),
                                      field_names=["image", "audio"])


def test_gil_released_during_orchestrate():
    table, model = big_table(), golden_model()
    topo = orch.Topology.uniform(1024, 8)
    t0 = time.perf_counter()
    orch.orchestrate(table, model, topo)
    single = time.perf_counter() - t0
    calls = max(3, int(0.5 / single))
    started, done = threading.Event(), threading.Event()
    thread_calls = [0]

    def plan():
        started.set()
        for _ in range(calls):
            orch.orchestrate(table, model, topo)
            thread_calls[0] += 1
        done.set()

    th = threading.Thread(target=plan)
    th.start()
    started.wait()
    ticks = 0
    begin = time.perf_counter()
    while not done.is_set():  # pure-Python work: runs only while the thread is outside the GIL
        ticks += 1
    elapsed = time.perf_counter() - begin
    th.join()
    assert thread_calls[0] == calls
    # Measure the main loop's rate alone; with the GIL held by C++ the main thread would get
    # only the switch intervals between calls (a small fraction of this).
    n, t0 = 0, time.perf_counter()
    while time.perf_counter() - t0 < 0.1:
        n += 1
    alone_rate = n / 0.1
    assert ticks > 0.3 * alone_rate * elapsed, (ticks, alone_rate, elapsed)


# ---- stubs -----------------------------------------------------------------------------

def test_stub_lists_every_public_name():
    stub = (ROOT / "python" / "orch" / "_orch.pyi").read_text()
    import orch._orch as ext
    for name in dir(ext):
        if name.startswith("_"):
            continue
        assert re.search(rf"^(class |def ){re.escape(name)}\b|^{re.escape(name)}\b", stub, re.M), name
    for name in orch.__all__:
        assert hasattr(orch, name)


def test_stub_matches_fresh_stubgen(tmp_path):
    pytest.importorskip("nanobind.stubgen")
    out = tmp_path / "_orch.pyi"
    subprocess.run([sys.executable, "-m", "nanobind.stubgen", "-q", "-m", "orch._orch", "-o", str(out)],
                   check=True)
    committed = (ROOT / "python" / "orch" / "_orch.pyi").read_text()
    assert out.read_text() == committed, "python/orch/_orch.pyi is stale: regenerate it (docs/python.md)"
