# SPDX-License-Identifier: Apache-2.0
"""assemble: a rank's LLM sequence buffer from its text rows and its encoders' feature rows,
as the step plan's assembly map (docs/api/assembly_map.md) says."""
from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import torch

from ._common import LRU

_ASSEMBLY = LRU(16)  # (step hash, rank, device) -> _Assembly


@dataclass(frozen=True)
class _Assembly:
    tokens: int            # rows of the sequence buffer
    rows: tuple            # expected rows of each source buffer: text, then encoder e
    in_order: bool         # every source's rows are read once each, in order
    target: tuple          # in_order: per source, the target row of each of its rows
    gather: torch.Tensor | None  # else: the row of cat(sources) for every target row


def _arrays(step, rank: int):
    a = step.assembly
    begin = np.asarray(a.rank_begin, dtype=np.int64)
    ranks = begin.size - 1
    if not 0 <= rank < ranks:
        raise ValueError(f"assemble: rank {rank} is outside the plan's [0, {ranks})")
    b, e = int(begin[rank]), int(begin[rank + 1])
    get = lambda name: np.asarray(getattr(a, name), dtype=np.int64)[b:e]  # noqa: E731
    total = int(np.asarray(a.sequence_tokens, dtype=np.int64)[rank])
    return get("source"), get("source_token"), get("target_token"), get("tokens"), total


def _build(step, rank: int, encoders: int, device) -> _Assembly:
    source, source_token, target_token, tokens, total = _arrays(step, rank)
    k = encoders + 1
    buf = source + 1  # 0 = text, 1 + e = encoder e
    if buf.size and (buf.min() < 0 or buf.max() >= k):
        raise ValueError(f"assemble: the assembly map names source {int(source.max())}, but "
                         f"{encoders} feature buffers were given")
    starts = np.concatenate([[0], np.cumsum(tokens)[:-1]]).astype(np.int64)
    if not (np.array_equal(target_token, starts) and int(tokens.sum()) == total):
        raise ValueError(f"assemble: the segments of rank {rank} do not tile its "
                         f"{total}-token sequence buffer")
    rows = np.bincount(buf, weights=tokens, minlength=k).astype(np.int64)
    # Row t of the sequence buffer reads row (t - target + source_token) of its source.
    shift = np.repeat(source_token - target_token, tokens)
    t = np.arange(total, dtype=np.int64)
    src_buf = np.repeat(buf, tokens)
    src_row = t + shift
    order = np.argsort(src_buf, kind="stable")  # per source, in target order
    first = np.concatenate([[0], np.cumsum(rows)]).astype(np.int64)
    in_order = bool(np.array_equal(src_row[order], np.arange(total) - np.repeat(first[:-1],
                                                                              rows)))
    if in_order:  # the normal case: one index_copy per source, no gather, no cat
        target = tuple(torch.from_numpy(np.ascontiguousarray(order[first[s]:first[s + 1]]))
                       .to(device) for s in range(k))
        return _Assembly(total, tuple(rows.tolist()), True, target, None)
    gather = torch.from_numpy(first[src_buf] + src_row).to(device)
    return _Assembly(total, tuple(rows.tolist()), False, (), gather)


def assemble(step, rank: int, text_rows: torch.Tensor, feature_rows) -> torch.Tensor:
    """This rank's LLM sequence buffer: its examples' sequences in LLM slot order, each laid
    out as text and encoder outputs interleaved at the media's text positions.

    text_rows: [text tokens of the rank's LLM examples, *row] (what the "text" exchange
    delivered, embedded); feature_rows: one tensor per encoder of step.encoders (a sequence in
    model order, or a mapping by encoder name), [output tokens delivered by "<e>.features",
    *row]. Every tensor has the same row shape, dtype and device. Returns
    [step.assembly.sequence_tokens[rank], *row], differentiable (index_copy, or
    cat + index_select when a source is not read in order). The index tensors are built with
    numpy once per (step, rank, device) and cached.

    Raises ValueError naming the buffer for a row count, row shape, dtype or device that
    disagrees with the plan or with the text rows.
    """
    names = [e.phase.name for e in step.encoders]
    if isinstance(feature_rows, dict):
        unknown = sorted(set(feature_rows) - set(names))
        missing = [n for n in names if n not in feature_rows]
        if unknown or missing:
            raise ValueError(f"assemble: feature buffers for {sorted(feature_rows)} but the "
                             f"plan's encoders are {names}")
        feature_rows = [feature_rows[n] for n in names]
    feature_rows = list(feature_rows)
    if len(feature_rows) != len(names):
        raise ValueError(f"assemble: {len(feature_rows)} feature buffers for the plan's "
                         f"{len(names)} encoders {names}")
    buffers = [text_rows] + feature_rows
    labels = ["text"] + [f"encoder '{n}'" for n in names]
    for label, b in zip(labels, buffers):
        if not isinstance(b, torch.Tensor) or b.dim() < 1:
            raise ValueError(f"assemble: the {label} buffer must be a tensor with a row "
                             f"dimension")
        if b.shape[1:] != text_rows.shape[1:] or b.dtype != text_rows.dtype or \
                b.device != text_rows.device:
            raise ValueError(f"assemble: the {label} buffer has rows {tuple(b.shape[1:])} "
                             f"{b.dtype} on {b.device}, the text rows {tuple(text_rows.shape[1:])}"
                             f" {text_rows.dtype} on {text_rows.device}")
    device = text_rows.device
    plan = _ASSEMBLY.get((int(step.hash), int(rank), str(device)),
                         lambda: _build(step, int(rank), len(names), device))
    for label, b, want in zip(labels, buffers, plan.rows):
        if b.shape[0] != want:
            raise ValueError(f"assemble: rank {rank}'s {label} buffer has {b.shape[0]} rows, "
                             f"the plan's sequences read {want}")
    if not plan.in_order:
        return torch.cat(buffers).index_select(0, plan.gather)
    out = text_rows.new_empty((plan.tokens,) + tuple(text_rows.shape[1:]))
    for b, target in zip(buffers, plan.target):
        # Even an empty buffer is copied: the copy keeps it in the autograd graph, so the
        # backward of the exchange that delivered it runs on this rank as on every other
        # (a collective skipped on one rank would leave the others waiting).
        out.index_copy_(0, target, b)  # in place on a fresh tensor: autograd records it
    return out


def sequence_lengths(step, rank: int) -> np.ndarray:
    """The lengths of this rank's LLM sequences in slot order (int64), e.g. for cu_seqlens of
    a varlen attention kernel: np.concatenate([[0], np.cumsum(...)])."""
    items = np.asarray(step.llm.placement.items_on(rank), dtype=np.int64)
    return np.asarray(step.sequence_length, dtype=np.int64)[items]
