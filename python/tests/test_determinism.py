# SPDX-License-Identifier: Apache-2.0
"""The determinism matrix through the Python binding: the corpus of tests/determinism/corpus.hpp
generated again here (splitmix64 and integer arithmetic only: this file mirrors that header
line by line), run through orch.orchestrate and orch.partition, and every case's line compared
with tests/determinism/golden.txt, which the C++ tool orch_determinism checks in every preset
(docs/determinism.md). A difference names the first differing case."""

from __future__ import annotations

import pathlib

import numpy as np
import pytest

import orch

ROOT = pathlib.Path(__file__).resolve().parents[2]
GOLDEN = ROOT / "tests" / "determinism" / "golden.txt"
MASK = (1 << 64) - 1
STEP_CASES = 240
PARTITION_CASES = 240
STRATEGIES = ["none", "llm_only", "per_phase", "orch"]  # orch::all_strategies
ALGORITHMS = ["auto", "lpt", "lpt+ls", "kk", "multifit", "subset_sum", "exact"]
NO_GROUP = -1


class SplitMix64:
    def __init__(self, seed: int) -> None:
        self.state = seed & MASK

    def next(self) -> int:
        self.state = (self.state + 0x9E3779B97F4A7C15) & MASK
        z = self.state
        z = ((z ^ (z >> 30)) * 0xBF58476D1CE4E5B9) & MASK
        z = ((z ^ (z >> 27)) * 0x94D049BB133111EB) & MASK
        return z ^ (z >> 31)

    def uniform(self, lo: int, hi: int) -> int:
        return lo + self.next() % (hi - lo + 1)


def word_hash(words: list[int]) -> str:
    h = 0xCBF29CE484222325
    for v in words:
        h = ((h ^ (v & MASK)) * 0x100000001B3) & MASK
    z = h
    z = ((z ^ (z >> 30)) * 0xBF58476D1CE4E5B9) & MASK
    z = ((z ^ (z >> 27)) * 0x94D049BB133111EB) & MASK
    return f"{z ^ (z >> 31):016x}"


def step_model(model_id: int) -> orch.ModelDescription:
    if model_id == 0:
        return orch.ModelDescription(
            encoders=[
                orch.EncoderModel(name="vision", fields=["image", "video"],
                                  cost=orch.AttentionCost(3, 1, 2), output_divisor=4,
                                  output_extra=1, input_bytes_per_unit=3,
                                  feature_bytes_per_token=5),
                orch.EncoderModel(name="audio", fields=[("audio", 64)],
                                  cost=orch.AttentionCost(2, 0, 1), output_divisor=2,
                                  output_extra=2, input_bytes_per_unit=2,
                                  feature_bytes_per_token=7),
            ],
            llm=orch.LLMModel(cost=orch.AttentionCost(16, 1, 0), text_bytes_per_token=2))
    if model_id == 1:
        return orch.ModelDescription(
            encoders=[orch.EncoderModel(name="vision", fields=["image"],
                                        cost=orch.AttentionCost(1, 0, 5), input_bytes_per_unit=4,
                                        feature_bytes_per_token=4)],
            llm=orch.LLMModel(cost=orch.AttentionCost(1, 0, 0), text_bytes_per_token=8))
    return orch.ModelDescription(llm=orch.LLMModel(cost=orch.AttentionCost(4, 1, 1)))


def make_step_case(i: int) -> dict:
    rng = SplitMix64(1000 + i)
    kind = i % 5
    c = {"strategy": STRATEGIES[(i // 5) % 4], "model": (i // 20) % 3,
         "option_set": (i // 60) % 4}
    small = [1, 2, 3, 4, 6, 8, 12, 16, 32, 64]
    large = [256, 1024, 2560]
    ranks = large[(i // 40) % 3] if i % 40 == 39 else small[rng.uniform(0, 9)]
    per_node = rng.uniform(1, 8)
    c["node_of_rank"] = [r // per_node for r in range(ranks)]
    c["field_names"] = (["image", "video", "audio"] if c["model"] == 0
                        else ["image"] if c["model"] == 1 else [])
    fields = len(c["field_names"])
    all_empty = i % 40 == 4
    owner, local, text_col = [], [], []
    m_example, m_field, m_length, m_position = [], [], [], []
    for r in range(ranks):
        if kind == 4:
            keep = rng.uniform(0, 2)
            count = rng.uniform(0, 6) if keep == 0 else 0
        else:
            count = rng.uniform(0, 6)
        if all_empty:
            count = 0
        reversed_ = (r + i) % 3 == 0
        for j in range(count):
            example = len(owner)
            owner.append(r)
            local.append(count - 1 - j if reversed_ else j)
            text = rng.uniform(0, 40) if kind == 2 else rng.uniform(0, 200)
            text_col.append(text)
            n_media = 0
            if fields > 0 and kind != 1:
                n_media = rng.uniform(3, 8) if kind == 2 else rng.uniform(0, 2)
            position = 0
            for _ in range(n_media):
                position = rng.uniform(position, text)
                f = rng.uniform(0, fields - 1)
                if kind == 3 and c["field_names"][f] == "audio":
                    length = rng.uniform(1, 600)
                else:
                    zero = rng.uniform(0, 3)
                    length = 0 if zero == 0 else rng.uniform(1, 120)
                m_example.append(example)
                m_field.append(f)
                m_length.append(length)
                m_position.append(position)
    n = len(owner)
    c.update(owner=owner, local=local, text=text_col, media_example=m_example,
             media_field=m_field, media_length=m_length, media_position=m_position,
             max_examples=0, max_tokens=0, groups=None)
    if c["option_set"] == 1:
        c["max_examples"] = (n + ranks - 1) // ranks + 1
        c["max_tokens"] = rng.uniform(1000, 6000)
    elif c["option_set"] == 2:
        groups = []
        for e in range(n):
            alone = rng.uniform(0, 2)
            groups.append(NO_GROUP if alone == 0 else e // 3)
        c["groups"] = groups
    return c


def make_partition_case(j: int) -> dict:
    rng = SplitMix64(2000 + j)
    budgets = [2000, 20000, 100000]
    c = {"algorithm": ALGORITHMS[j % 7], "work_budget": budgets[(j // 7) % 3],
         "max_items_per_bin": 0, "equal_counts": False, "second_resource": [],
         "second_capacity": 0, "speeds": [], "groups": []}
    is_large = j % 20 == 19
    n = rng.uniform(500, 3000) if is_large else rng.uniform(0, 40)
    bins = rng.uniform(8, 128) if is_large else rng.uniform(1, 12)
    c["bins"] = bins
    dist = (j // 7) % 4
    costs = []
    for i in range(n):
        cost = 7
        if dist == 0:
            cost = rng.uniform(1, 1000)
        elif dist == 1:
            big = rng.uniform(0, 3)
            cost = rng.uniform(5000, 20000) if big == 0 else rng.uniform(1, 100)
        elif dist == 2:
            zero = rng.uniform(0, 3)
            cost = 0 if zero == 0 else rng.uniform(1, 50)
        elif i == 0:
            cost = 1000
        costs.append(cost)
    c["costs"] = costs
    constraint = (j // 28) % 5
    if j % 7 <= 2:
        if constraint == 0 and j % 2 == 1:
            for i in range(n):
                alone = rng.uniform(0, 2)
                c["groups"].append(NO_GROUP if alone == 0 else i // 2)
        elif constraint == 1:
            c["max_items_per_bin"] = max(1, (n + bins - 1) // bins + rng.uniform(0, 1))
        elif constraint == 2:
            c["equal_counts"] = True
        elif constraint == 3:
            for _ in range(n):
                c["second_resource"].append(rng.uniform(1, 100))
            total = sum(c["second_resource"])
            c["second_capacity"] = (total + bins - 1) // bins + rng.uniform(0, 200)
        elif constraint == 4:
            c["speeds"] = [rng.uniform(1, 4) for _ in range(bins)]
    return c


def outcome(run) -> str:
    try:
        return run()
    except orch.InfeasibleError:
        return "infeasible"
    except OverflowError:
        return "overflow"
    except ValueError:
        return "invalid"


def i64(values) -> np.ndarray:
    return np.asarray(values, dtype=np.int64)


def run_step(i: int, threads: int) -> str:
    c = make_step_case(i)
    model = step_model(c["model"])

    def run() -> str:
        table = orch.ItemTable.from_arrays(
            np.asarray(c["owner"], dtype=np.int32), i64(c["local"]), i64(c["text"]),
            i64(c["media_example"]), np.asarray(c["media_field"], dtype=np.int32),
            i64(c["media_length"]), i64(c["media_position"]), field_names=c["field_names"])
        topo = orch.Topology.from_node_of_rank(np.asarray(c["node_of_rank"], dtype=np.int32))
        kwargs = {"strategy": c["strategy"], "threads": threads}
        if c["option_set"] == 1:
            kwargs.update(llm_max_examples_per_rank=c["max_examples"],
                          llm_max_tokens_per_rank=c["max_tokens"])
        elif c["option_set"] == 2:
            kwargs.update(llm_groups=i64(c["groups"]), algorithm="lpt+ls")
        elif c["option_set"] == 3:
            kwargs.update(algorithm="kk", work_budget=2000, tolerance_ppm=0, slack_ppm=0)
        return f"{orch.orchestrate(table, model, topo, **kwargs).hash:016x}"

    return outcome(run)


def run_partition(j: int) -> str:
    c = make_partition_case(j)

    def optional(values):
        return i64(values) if values else None

    def run() -> str:
        r = orch.partition(i64(c["costs"]), c["bins"], algorithm=c["algorithm"],
                           work_budget=c["work_budget"], max_items_per_bin=c["max_items_per_bin"],
                           equal_counts=c["equal_counts"],
                           second_resource=optional(c["second_resource"]),
                           second_capacity=c["second_capacity"], speeds=optional(c["speeds"]),
                           groups=optional(c["groups"]))
        words = [len(c["costs"]), c["bins"], *r.bin_of.tolist(), *r.loads.tolist(), r.max_load,
                 r.lower_bound, 1 if r.proven_optimal else 0]
        return word_hash(words)

    return outcome(run)


def golden_lines() -> list[str]:
    return [line for line in GOLDEN.read_text().splitlines() if line and not line.startswith("#")]


def check(lines: list[str], golden: list[str], what: str) -> None:
    assert len(lines) == len(golden)
    for got, want in zip(lines, golden):
        assert got == want, f"{what}: first differing case: expected '{want}', got '{got}'"


def test_golden_file_has_every_case() -> None:
    ids = [line.split()[0] for line in golden_lines()]
    assert ids == [f"s{i:03d}" for i in range(STEP_CASES)] + [
        f"p{j:03d}" for j in range(PARTITION_CASES)]


@pytest.mark.parametrize("threads", [1, 4])
def test_step_corpus_matches_golden(threads: int) -> None:
    check([f"s{i:03d} {run_step(i, threads)}" for i in range(STEP_CASES)],
          golden_lines()[:STEP_CASES], f"steps, threads {threads}")


def test_partition_corpus_matches_golden() -> None:
    check([f"p{j:03d} {run_partition(j)}" for j in range(PARTITION_CASES)],
          golden_lines()[STEP_CASES:], "partitions")
