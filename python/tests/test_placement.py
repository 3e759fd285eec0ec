# SPDX-License-Identifier: Apache-2.0
"""Tests of the placement bindings (orch.place, orch.locality_balance, orch.rearrange_bins,
orch.inter_node_lower_bound): results tied to the C++ library by golden values (the doctest
"place: golden results shared with python/tests/test_placement.py" in
tests/plan/test_pull_home.cpp asserts the same numbers), invariants checked against NumPy,
and the errors."""

from __future__ import annotations

import numpy as np
import pytest

import orch


def formula_instance(ranks: int, per_rank: int, ranks_per_node: int, mod: int):
    """The instance the C++ doctest builds: cost 1 + (7919 i mod `mod`), item i on rank
    i / per_rank, 3 bytes per cost unit plus i mod 5."""
    i = np.arange(ranks * per_rank)
    costs = (1 + (i * 7919) % mod).astype(np.int64)
    current = (i // per_rank).astype(np.int32)
    item_bytes = (3 * costs + i % 5).astype(np.int64)
    return costs, current, item_bytes, orch.Topology.uniform(ranks, ranks_per_node)


def signature(r: orch.LocalityResult) -> tuple:
    """Σ (i + 1) · rank_of[i], the largest load, the bytes across nodes, the method's name."""
    weighted = int(((np.arange(r.rank_of.size) + 1) * r.rank_of.astype(np.int64)).sum())
    return weighted, r.max_load, r.moved.inter_node, str(r.method)


def traffic(current, rank_of, item_bytes, topo):
    """(self, intra_node, inter_node) bytes of moving every item, in NumPy."""
    node = np.asarray(topo.node_of_ranks)
    same_rank = current == rank_of
    same_node = node[current] == node[rank_of]
    return (int(item_bytes[same_rank].sum()), int(item_bytes[same_node & ~same_rank].sum()),
            int(item_bytes[~same_node].sum()))


def test_golden_results_equal_the_cpp_library():
    c, cur, b, t = formula_instance(16, 8, 4, 997)
    assert signature(orch.place(c, cur, b, t)) == (84327, 4151, 2049, "shed+fill")
    c, cur, b, t = formula_instance(16, 3, 4, 997)
    assert signature(orch.locality_balance(c, cur, b, t, slack_ppm=0)) == (
        8896, 1596, 32614, "rearranged_reference")
    c, cur, b, t = formula_instance(32, 2, 4, 9973)
    assert signature(orch.place(c, cur, b, t)) == (34062, 9949, 216320, "rearranged_reference")


@pytest.mark.parametrize("seed", range(12))
def test_place_and_locality_balance_invariants(seed):
    rng = np.random.default_rng(seed)
    ranks_per_node = int(rng.choice([1, 2, 4, 8]))
    ranks = ranks_per_node * int(rng.integers(1, 9))
    n = ranks * int(rng.integers(1, 17))
    costs = rng.lognormal(6.0, 1.0, n).astype(np.int64) + 1
    current = rng.integers(0, ranks, n).astype(np.int32)
    item_bytes = (2 * costs if seed % 2 else rng.integers(0, 100, n)).astype(np.int64)
    topo = orch.Topology.uniform(ranks, ranks_per_node)
    for r in (orch.place(costs, current, item_bytes, topo),
              orch.place(costs, current, item_bytes, topo, threads=2),
              orch.locality_balance(costs, current, item_bytes, topo)):
        assert r.rank_of.dtype == np.int32 and r.rank_of.shape == (n,)
        assert r.loads.dtype == np.int64 and not r.loads.flags.writeable
        np.testing.assert_array_equal(r.loads, orch.bin_loads(costs, r.rank_of, ranks))
        assert r.max_load == r.loads.max() <= r.target
        assert r.lower_bound >= orch.lower_bound(costs, ranks)
        moved = r.moved
        assert (moved.self, moved.intra_node, moved.inter_node) == traffic(
            current, r.rank_of, item_bytes, topo)
        assert moved.inter_node >= r.inter_node_lower_bound
        assert r.inter_node_lower_bound == orch.inter_node_lower_bound(
            costs, current, item_bytes, topo, r.target)
    # Same input, same placement, for any thread count.
    np.testing.assert_array_equal(orch.place(costs, current, item_bytes, topo).rank_of,
                                  orch.place(costs, current, item_bytes, topo, threads=2).rank_of)
    # Against reference bins: never more bytes across nodes than their rearrangement.
    ref = orch.partition(costs, ranks)
    r = orch.locality_balance(costs, current, item_bytes, topo, ref.bin_of)
    assert r.reference_max_load == ref.max_load
    mapped = orch.rearrange_bins(ref.bin_of, current, item_bytes, topo)
    assert r.moved.inter_node <= mapped.moves().inter_node
    on_rank = mapped.rank_of_items(ref.bin_of)
    np.testing.assert_array_equal(on_rank, mapped.rank_of_bin[ref.bin_of])
    assert sorted(mapped.rank_of_bin.tolist()) == list(range(ranks))  # a bijection
    assert traffic(current, on_rank, item_bytes, topo) == (
        mapped.kept_on_rank, mapped.kept_on_node - mapped.kept_on_rank,
        mapped.total_bytes - mapped.kept_on_node)
    same = orch.place(costs, current, item_bytes, topo, reference_bin_of=ref.bin_of)
    np.testing.assert_array_equal(same.rank_of, r.rank_of)


def test_methods_and_names():
    assert {str(m) for m in orch.PlacementMethod} == {
        "keep_local", "keep_local+settle", "node_first", "node_first+settle",
        "rearranged_reference", "node_first+repartition", "shed+fill"}
    # Everything fits where it is: every item stays (keep_local, nothing moves).
    topo = orch.Topology.uniform(4, 2)
    r = orch.place(np.full(8, 5), np.repeat(np.arange(4), 2), np.full(8, 10), topo)
    assert r.method == orch.PlacementMethod.keep_local
    assert r.moved.total() == r.moved.self == 80 and r.proven_optimal


def test_errors_name_the_function_and_argument():
    c, cur, b, t = formula_instance(4, 2, 2, 97)
    with pytest.raises(ValueError, match=r"^place: 7 costs but 8 item ranks"):
        orch.place(c[:-1], cur, b, t)
    with pytest.raises(ValueError, match=r"^place: item 0 has reference bin 9 outside \[0, 4\)"):
        orch.place(c, cur, b, t, reference_bin_of=np.full(8, 9))
    with pytest.raises(ValueError, match=r"^place: negative slack_ppm -1"):
        orch.place(c, cur, b, t, slack_ppm=-1)
    with pytest.raises(ValueError, match=r"^place: costs: expected an integer array"):
        orch.place(c.astype(np.float64), cur, b, t)
    with pytest.raises(ValueError, match=r"^locality_balance: current_rank: value 2147483651 does not fit int32"):
        orch.locality_balance(c, cur.astype(np.int64) + 2**31, b, t)
    with pytest.raises(ValueError, match=r"^rearrange_bins: item 0 is in bin -1"):
        orch.rearrange_bins(np.full(8, -1), cur, b, t)
    with pytest.raises(ValueError, match=r"^inter_node_lower_bound: negative target -5"):
        orch.inter_node_lower_bound(c, cur, b, t, -5)
    with pytest.raises(TypeError, match=r"^place: algorithm: expected a PartitionAlgorithm"):
        orch.place(c, cur, b, t, algorithm=3)
