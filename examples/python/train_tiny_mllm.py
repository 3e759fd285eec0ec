#!/usr/bin/env python3
# SPDX-License-Identifier: Apache-2.0
"""A tiny but real multimodal LLM trained with orch across gloo processes.

The model: a ViT-style image encoder (patch rows -> transformer layers attending within each
image -> a 2x2-merge-like projection to the LLM width, plus begin/end markers), a
Whisper-style audio encoder (frame rows -> two convolutions -> transformer layers within each
window -> pooling -> projection, plus markers; long clips cut into windows by the model's
`chunk_length`), and a small causal transformer LLM over the assembled sequences.

Every rank samples its own mini-batch from the bundled trace data/omni_trace.csv (lengths
scaled down so a step runs in seconds on a CPU), and the step is planned and executed with
orch.torch: raw inputs go owner -> encoder rank, features encoder rank -> LLM rank, text owner
-> LLM rank, the sequences are assembled, the LLM runs, and backward returns along the
inverse plans. The loss is the global token mean (see "Loss normalisation" in docs/torch.md).
After each step rank 0 recomputes the loss and every gradient on one process over the same
global batch without orch and checks that they agree.

    python examples/python/train_tiny_mllm.py --nproc 4 --strategy orch
    python examples/python/train_tiny_mllm.py --nproc 4 --strategy all      # every strategy
    python examples/python/train_tiny_mllm.py --nproc 4 --measure           # balance, timed
    python examples/python/train_tiny_mllm.py --nproc 4 --strategy reference  # no orch at all
    python examples/python/train_tiny_mllm.py --nproc 2 --per-rank-mean    # wrong loss: fails
    torchrun --nproc-per-node 4 examples/python/train_tiny_mllm.py --strategy orch

Exits 0 only when every check passed (it then prints "all checks passed").
"""

from __future__ import annotations

import argparse
import copy
import csv
import datetime
import faulthandler
import math
import os
import socket
import statistics
import sys
import time
import traceback
from dataclasses import dataclass, field
from pathlib import Path

import numpy as np
import torch
import torch.distributed as dist
import torch.nn as nn
import torch.nn.functional as F

REPO = Path(__file__).resolve().parents[2]
DEFAULT_TRACE = REPO / "data" / "omni_trace.csv"
STRATEGIES = ("none", "llm_only", "per_phase", "orch")
IGNORE = -100  # label of a position whose next token is not a text token


# ----------------------------------------------------------------------------------------------
# Configuration: the model's shape and how the trace's lengths are scaled down.


@dataclass(frozen=True)
class Config:
    vocab: int = 256
    d_llm: int = 128
    llm_layers: int = 2
    llm_heads: int = 4
    llm_mlp: int = 512
    patch_dim: int = 48  # one patch row: 4 x 4 pixels x 3 channels
    d_vision: int = 128
    vision_layers: int = 2
    vision_heads: int = 4
    vision_mlp: int = 512
    mel_bins: int = 16  # one frame row: 16 log-mel bins
    d_audio: int = 128
    audio_layers: int = 2
    audio_heads: int = 4
    audio_mlp: int = 512
    # The trace's units divided by these (a 30-s window of 3,000 frames becomes 187).
    text_scale: int = 4
    image_scale: int = 16
    audio_scale: int = 16
    audio_window: int = 187  # frames per audio encoder forward (3000 / 16)


# ----------------------------------------------------------------------------------------------
# The trace and the synthetic examples drawn from it.


def load_trace(path: Path) -> list[tuple[int, list[tuple[str, int]]]]:
    """Examples of a length trace (docs/trace-format.md): (text tokens, [(field, length)])."""
    examples: list[tuple[int, list[tuple[str, int]]]] = []
    last_id = None
    with open(path, newline="") as f:
        rows = (line for line in f if line.strip() and not line.lstrip().startswith("#"))
        reader = csv.reader(rows)
        header = [c.strip() for c in next(reader)]
        if header != ["example", "field", "length"]:
            raise ValueError(f"{path}: header {header} is not example,field,length")
        for cells in reader:
            ex, fld, length = (c.strip() for c in cells)
            if ex != last_id:
                examples.append((0, []))
                last_id = ex
            text, media = examples[-1]
            if fld == "text":
                examples[-1] = (text + int(length), media)
            elif fld in ("image", "audio"):
                media.append((fld, int(length)))
            else:  # video: the tiny model has no video encoder; the omni trace holds none
                raise ValueError(f"{path}: field {fld} is not modelled by this example")
    return examples


@dataclass
class Example:
    """One training example: its text token ids and its media, each as rows of a tensor.

    Media come before the text in the LLM sequence (text position 0, an image or audio
    placeholder at the start of the prompt, as orch-bench plans the trace), so the text
    attends to the features and the encoders receive a gradient.
    """

    ids: torch.Tensor  # int64 [text tokens]
    media: list[tuple[str, torch.Tensor, int]] = field(default_factory=list)  # field, rows, position


def sample_batch(trace, cfg: Config, seed: int, rank: int, step: int, per_rank: int) -> list[Example]:
    """Rank `rank`'s mini-batch of step `step`: reproducible from (seed, rank, step) alone."""
    rng = np.random.default_rng([seed, rank, step])
    gen = torch.Generator().manual_seed(int(rng.integers(1 << 62)))
    batch = []
    for index in rng.integers(0, len(trace), size=per_rank):
        text, media = trace[int(index)]
        n_text = max(2, round(text / cfg.text_scale))
        # A learnable pattern: an arithmetic sequence of ids (start and stride per example).
        start, stride = (int(v) for v in rng.integers(0, cfg.vocab, size=2))
        ids = (start + stride * torch.arange(n_text)) % cfg.vocab
        ex = Example(ids=ids)
        for fld, length in media:
            if fld == "image":
                n = max(1, round(length / cfg.image_scale))
                rows = torch.randn(n, cfg.patch_dim, generator=gen)
            else:
                n = max(1, round(length / cfg.audio_scale))
                rows = torch.randn(n, cfg.mel_bins, generator=gen)
            ex.media.append((fld, rows, 0))
        batch.append(ex)
    return batch


def chunks_of(length: int, window: int) -> list[tuple[int, int]]:
    """(offset, length) of each forward an item takes: orch's media_chunks rule."""
    if window <= 0 or length <= window:
        return [(0, length)]
    return [(o, min(window, length - o)) for o in range(0, length, window)]


# ----------------------------------------------------------------------------------------------
# The model.


def sinusoid(length: int, width: int) -> torch.Tensor:
    pos = torch.arange(length, dtype=torch.float32)[:, None]
    freq = torch.exp(torch.arange(0, width, 2, dtype=torch.float32) * (-math.log(10000.0) / width))
    out = torch.zeros(length, width)
    out[:, 0::2] = torch.sin(pos * freq)
    out[:, 1::2] = torch.cos(pos * freq)
    return out


class Block(nn.Module):
    """Pre-LN transformer layer over one item's rows [l, d] (attention within the item only).

    Forward FLOPs: 2·(4d² + 2·d·mlp) per row, and 4·d·l² for the scores and the weighted sum
    (the full l × l matrix is computed, causal or not: the mask does not skip work).
    """

    def __init__(self, width: int, heads: int, mlp: int, causal: bool):
        super().__init__()
        self.heads, self.causal = heads, causal
        self.ln1, self.ln2 = nn.LayerNorm(width), nn.LayerNorm(width)
        self.qkv, self.out = nn.Linear(width, 3 * width), nn.Linear(width, width)
        self.fc1, self.fc2 = nn.Linear(width, mlp), nn.Linear(mlp, width)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        length, width = x.shape
        head = width // self.heads
        q, k, v = self.qkv(self.ln1(x)).view(length, 3, self.heads, head).permute(1, 2, 0, 3)
        scores = (q @ k.transpose(-1, -2)) * head**-0.5
        if self.causal:
            mask = torch.ones(length, length, dtype=torch.bool).triu(1)
            scores = scores.masked_fill(mask, float("-inf"))
        att = torch.softmax(scores, dim=-1) @ v
        x = x + self.out(att.transpose(0, 1).reshape(length, width))
        return x + self.fc2(F.gelu(self.fc1(self.ln2(x))))


class VisionEncoder(nn.Module):
    """Patch rows [n, patch_dim] -> ceil(n / 4) + 2 rows of the LLM width."""

    def __init__(self, cfg: Config):
        super().__init__()
        self.embed = nn.Linear(cfg.patch_dim, cfg.d_vision)
        self.blocks = nn.ModuleList(
            Block(cfg.d_vision, cfg.vision_heads, cfg.vision_mlp, causal=False) for _ in range(cfg.vision_layers)
        )
        self.ln = nn.LayerNorm(cfg.d_vision)
        self.merge = nn.Linear(4 * cfg.d_vision, cfg.d_llm)  # 4 neighbouring patches -> 1 token
        self.markers = nn.Parameter(0.02 * torch.randn(2, cfg.d_llm))

    def forward(self, rows: torch.Tensor) -> torch.Tensor:
        n = rows.shape[0]
        x = self.embed(rows) + sinusoid(n, self.embed.out_features)
        for block in self.blocks:
            x = block(x)
        x = F.pad(self.ln(x), (0, 0, 0, (-n) % 4))  # zero rows up to a multiple of 4
        merged = self.merge(x.reshape(-1, 4 * x.shape[1]))
        return torch.cat([self.markers[:1], merged, self.markers[1:]])


class AudioEncoder(nn.Module):
    """Frame rows [n, mel_bins] of one window -> ceil(n / 4) + 2 rows of the LLM width."""

    def __init__(self, cfg: Config):
        super().__init__()
        self.conv1 = nn.Conv1d(cfg.mel_bins, cfg.d_audio, 3, padding=1)
        self.conv2 = nn.Conv1d(cfg.d_audio, cfg.d_audio, 3, stride=2, padding=1)  # ceil(n / 2)
        self.blocks = nn.ModuleList(
            Block(cfg.d_audio, cfg.audio_heads, cfg.audio_mlp, causal=False) for _ in range(cfg.audio_layers)
        )
        self.ln = nn.LayerNorm(cfg.d_audio)
        self.proj = nn.Linear(cfg.d_audio, cfg.d_llm)
        self.markers = nn.Parameter(0.02 * torch.randn(2, cfg.d_llm))

    def forward(self, rows: torch.Tensor) -> torch.Tensor:
        x = F.gelu(self.conv1(rows.t()[None]))
        x = F.gelu(self.conv2(x))[0].t()  # [ceil(n / 2), d]
        x = x + sinusoid(x.shape[0], x.shape[1])
        for block in self.blocks:
            x = block(x)
        x = F.pad(self.ln(x), (0, 0, 0, x.shape[0] % 2))  # pool pairs: ceil(n / 4) positions
        pooled = x.reshape(-1, 2, x.shape[1]).mean(dim=1)
        return torch.cat([self.markers[:1], self.proj(pooled), self.markers[1:]])


class TinyLLM(nn.Module):
    def __init__(self, cfg: Config):
        super().__init__()
        self.embed = nn.Embedding(cfg.vocab, cfg.d_llm)
        self.blocks = nn.ModuleList(
            Block(cfg.d_llm, cfg.llm_heads, cfg.llm_mlp, causal=True) for _ in range(cfg.llm_layers)
        )
        self.ln = nn.LayerNorm(cfg.d_llm)
        self.head = nn.Linear(cfg.d_llm, cfg.vocab)

    def loss_sum(self, seq: torch.Tensor, labels: torch.Tensor) -> torch.Tensor:
        """Summed (not averaged) next-token cross-entropy of one sequence [l, d]."""
        x = seq + sinusoid(seq.shape[0], seq.shape[1])
        for block in self.blocks:
            x = block(x)
        logits = self.head(self.ln(x))
        return F.cross_entropy(logits, labels, ignore_index=IGNORE, reduction="sum")


class TinyMLLM(nn.Module):
    def __init__(self, cfg: Config):
        super().__init__()
        self.cfg = cfg
        self.encoders = nn.ModuleDict({"vision": VisionEncoder(cfg), "audio": AudioEncoder(cfg)})
        self.llm = TinyLLM(cfg)


ENCODER_OF_FIELD = {"image": "vision", "audio": "audio"}


def output_tokens(n: int) -> int:
    """Tokens one encoder forward of n rows emits (both encoders): ceil(n / 4) + 2."""
    return -(-n // 4) + 2


# ----------------------------------------------------------------------------------------------
# The model orch plans with: costs are the tiny model's forward FLOPs (1 cost unit = 1 FLOP),
# bytes per row those of the real tensors (fp32).


def flop_costs(cfg: Config) -> dict[str, tuple[int, int]]:
    """(linear, quadratic) forward FLOPs per input row of each phase: cost(l) = lin·l + quad·l²."""
    dv, fv, lv = cfg.d_vision, cfg.vision_mlp, cfg.vision_layers
    da, fa, la = cfg.d_audio, cfg.audio_mlp, cfg.audio_layers
    d, f, ll = cfg.d_llm, cfg.llm_mlp, cfg.llm_layers
    vision = (
        2 * cfg.patch_dim * dv  # patch embedding
        + lv * 2 * (4 * dv * dv + 2 * dv * fv)  # layers
        + 2 * dv * cfg.d_llm,  # merge: 2·(4dv)·D per 4 patches
        4 * lv * dv,  # full attention within the image
    )
    audio = (
        6 * cfg.mel_bins * da  # conv1, kernel 3
        + 3 * da * da  # conv2, kernel 3, stride 2: 2·3·da² per 2 frames
        + la * (4 * da * da + 2 * da * fa)  # layers over n / 2 positions
        + da * cfg.d_llm // 2,  # projection over n / 4 positions
        la * da,  # attention over n / 2 positions: 4·la·da·(n/2)²
    )
    llm = (ll * 2 * (4 * d * d + 2 * d * f) + 2 * d * cfg.vocab, 4 * ll * d)  # head; full scores
    return {"vision": vision, "audio": audio, "llm": llm}


def orch_model(cfg: Config):
    import orch

    costs = flop_costs(cfg)
    feature_bytes = cfg.d_llm * 4  # one fp32 row of the LLM width
    vision = orch.EncoderModel(
        name="vision", fields=["image"], cost=orch.AttentionCost(*costs["vision"]),
        output_divisor=4, output_extra=2, input_bytes_per_unit=cfg.patch_dim * 4,
        feature_bytes_per_token=feature_bytes)
    audio = orch.EncoderModel(
        name="audio", fields=[("audio", cfg.audio_window)], cost=orch.AttentionCost(*costs["audio"]),
        output_divisor=4, output_extra=2, input_bytes_per_unit=cfg.mel_bins * 4,
        feature_bytes_per_token=feature_bytes)
    llm = orch.LLMModel(name="llm", cost=orch.AttentionCost(*costs["llm"]), text_bytes_per_token=8)
    return orch.ModelDescription(encoders=[vision, audio], llm=llm)  # text moves as int64 ids


def local_batch(batch: list[Example]):
    import orch

    lb = orch.LocalBatch()
    for ex in batch:
        lb.add(int(ex.ids.numel()), media=[(fld, int(rows.shape[0]), pos) for fld, rows, pos in ex.media])
    return lb


# ----------------------------------------------------------------------------------------------
# Sequences and labels (shared by the reference and the orch path).


def labels_of(ids_in_sequence: torch.Tensor) -> torch.Tensor:
    """Next-token labels of one sequence whose non-text positions hold IGNORE."""
    return torch.cat([ids_in_sequence[1:], torch.tensor([IGNORE])])


def reference_sequence(model: TinyMLLM, ex: Example) -> tuple[torch.Tensor, torch.Tensor]:
    """One example's LLM input [l, d] and its labels, on one process, without orch."""
    window = model.cfg.audio_window
    parts, ids, taken = [], [], 0
    text = model.llm.embed(ex.ids)
    for fld, rows, pos in ex.media:
        parts.append(text[taken:pos])
        ids.append(ex.ids[taken:pos])
        taken = pos
        enc = model.encoders[ENCODER_OF_FIELD[fld]]
        for off, n in chunks_of(rows.shape[0], window if fld == "audio" else 0):
            out = enc(rows[off:off + n])
            parts.append(out)
            ids.append(torch.full((out.shape[0],), IGNORE))
    parts.append(text[taken:])
    ids.append(ex.ids[taken:])
    return torch.cat(parts), labels_of(torch.cat(ids))


def reference_step(model: TinyMLLM, examples: list[Example]) -> tuple[torch.Tensor, dict, int]:
    """Loss (summed over the global batch / its target tokens) and every gradient."""
    model.zero_grad(set_to_none=True)
    total = torch.zeros(())
    seqs = [reference_sequence(model, ex) for ex in examples]
    targets = sum(int((lab != IGNORE).sum()) for _, lab in seqs)
    for seq, lab in seqs:
        total = total + model.llm.loss_sum(seq, lab)
    loss = total / targets
    loss.backward()
    grads = {n: (p.grad.clone() if p.grad is not None else torch.zeros_like(p))
             for n, p in model.named_parameters()}
    return loss.detach(), grads, targets


# ----------------------------------------------------------------------------------------------
# One step with orch.torch on this rank.


def media_chunks(examples: list[Example], cfg: Config) -> list[tuple[int, int, int, int]]:
    """(example, media index in it, offset, rows) of every encoder forward, in table order.

    That is orch's chunk numbering (docs/api/media_chunks.md): examples in order, their media
    in order, each media item's windows in input order. On one rank's own batch it is also
    the order of each encoder's items in the owner's input buffer (owner_media's slot order:
    the example's local index, then the position in the example).
    """
    out = []
    for x, ex in enumerate(examples):
        for k, (fld, rows, _) in enumerate(ex.media):
            window = cfg.audio_window if fld == "audio" else 0
            out.extend((x, k, off, n) for off, n in chunks_of(rows.shape[0], window))
    return out


def item_rows(plan, row_bytes: int) -> np.ndarray:
    """Rows of each item of an exchange plan (its bytes / the bytes of one row)."""
    nbytes = np.asarray(plan.item_bytes, dtype=np.int64)
    assert (nbytes % row_bytes == 0).all()
    return nbytes // row_bytes


def sequences(assembled, step, rank: int) -> list[torch.Tensor]:
    """ot.assemble's result as one tensor per LLM example of this rank, in slot order."""
    if isinstance(assembled, torch.Tensor):  # the rank's sequence buffer: cut it
        asm = step.assembly
        off, length = np.asarray(asm.sequence_offset), np.asarray(asm.sequence_length)
        return [assembled[int(off[x]):int(off[x] + length[x])] for x in step.llm.placement.items_on(rank)]
    return list(assembled)


def orch_step(model: TinyMLLM, batch: list[Example], step, rank: int, group=None):
    """Forward of this rank's part of the step; returns (loss sum, target tokens) on this rank.

    Needs only this rank's batch and the step plan. Every rank must run the backward of every
    exchange (an all_to_all all ranks join), even one whose sequences use none of its rows:
    ot.assemble keeps empty buffers in the graph, and the 0 · sum below makes sure of it for
    any orch.torch (an older assemble skipped empty buffers, and the step hung).
    """
    import orch.torch as ot

    cfg = model.cfg
    features = []
    mine = media_chunks(batch, cfg)
    for enc_step in step.encoders:
        name = enc_step.phase.name
        field_name = "image" if name == "vision" else "audio"
        width = cfg.patch_dim if name == "vision" else cfg.mel_bins
        rows_of = item_rows(enc_step.inputs.forward, width * 4)
        # Owner side: this rank's items of this encoder, laid end to end in owner slot order.
        own = [(x, k, off, n) for x, k, off, n in mine if batch[x].media[k][0] == field_name]
        slots = [int(i) for i in enc_step.owner_media.items_on(rank)]
        assert [n for *_, n in own] == [int(rows_of[i]) for i in slots], f"{name}: owner buffer order"
        parts = [batch[x].media[k][1][off:off + n] for x, k, off, n in own]
        x_in = torch.cat(parts) if parts else torch.zeros(0, width)
        y = ot.exchange(x_in, enc_step.inputs.forward, group=group)
        # Encoder rank: one forward per item (attention within the item), in slot order.
        outs, at = [], 0
        for i in enc_step.phase.placement.items_on(rank):
            n = int(rows_of[int(i)])
            outs.append(model.encoders[name](y[at:at + n]))
            at += n
        assert at == y.shape[0], (name, at, tuple(y.shape))
        # requires_grad=True on every rank: a rank that encodes nothing holds an empty tensor
        # that does not require grad, yet the features it receives must send their gradients
        # back through the collective backward exchange with everyone else.
        feats = torch.cat(outs) if outs else torch.zeros(0, cfg.d_llm)
        f = ot.exchange(feats, enc_step.features.forward, group=group, requires_grad=True)
        features.append(f)
    ids = torch.cat([ex.ids for ex in batch]) if batch else torch.zeros(0, dtype=torch.int64)
    text_ids = ot.exchange(ids, step.text.forward, group=group)
    text = model.llm.embed(text_ids)
    seqs = sequences(ot.assemble(step, rank, text, features), step, rank)
    # Labels: the text ids at their sequence positions, IGNORE at feature positions.
    asm = step.assembly
    seq_ids = torch.full((int(np.asarray(asm.sequence_tokens)[rank]),), IGNORE, dtype=torch.int64)
    begin, end = (int(v) for v in np.asarray(asm.rank_begin)[rank:rank + 2])
    for s, a, t, n in zip(*(np.asarray(getattr(asm, k))[begin:end]
                            for k in ("source", "source_token", "target_token", "tokens"))):
        if s == -1:  # orch's text_source
            seq_ids[int(t):int(t + n)] = text_ids[int(a):int(a + n)]
    total, targets = torch.zeros(()), 0
    offsets = np.asarray(asm.sequence_offset)
    examples = [int(x) for x in step.llm.placement.items_on(rank)]
    assert len(seqs) == len(examples), (len(seqs), len(examples))
    for x, seq in zip(examples, seqs):
        o = int(offsets[x])
        lab = labels_of(seq_ids[o:o + seq.shape[0]])
        targets += int((lab != IGNORE).sum())
        total = total + model.llm.loss_sum(seq, lab)
    return total, targets


# ----------------------------------------------------------------------------------------------
# Workers.


@dataclass
class Args:
    nproc: int
    steps: int
    strategy: str
    per_rank: int
    seed: int
    ranks_per_node: int
    trace: str
    rtol: float
    lr: float
    timeout_s: float
    per_rank_mean: bool = False


def check_close(got: torch.Tensor, want: torch.Tensor, rtol: float) -> tuple[bool, float]:
    """|got − want| ≤ rtol·|want| + atol elementwise, atol = 0.1·rtol·max|want| (1e-6 of the
    tensor's largest entry at rtol 1e-5, about 8 fp32 ulps of it). Returns (ok, max |diff|).

    The floor is there because a gradient entry is a sum over tokens and ranks: summed in
    another order (per rank, then all_reduce) an entry whose terms cancel keeps the rounding of
    its largest terms, which no elementwise rtol bounds. A misrouted or lost item changes
    gradients by far more than this; the worst |diff| / max|want| is printed per step.
    """
    if not want.numel():
        return True, 0.0
    atol = 0.1 * rtol * float(want.abs().max())
    diff = (got - want).abs()
    return bool((diff <= rtol * want.abs() + atol).all()), float(diff.max())


def run_strategy(args: Args, strategy: str, rank: int, world: int, trace, cfg: Config, log) -> bool:
    """Trains args.steps steps with one strategy; rank 0 checks each step against the reference."""
    import orch
    import orch.torch as ot

    torch.manual_seed(args.seed)
    model = TinyMLLM(cfg)  # identical on every rank: same seed
    opt = torch.optim.SGD(model.parameters(), lr=args.lr)
    desc = orch_model(cfg)
    topo = orch.Topology.uniform(world, args.ranks_per_node)
    for s in range(args.steps):
        t0 = time.perf_counter()
        batch = sample_batch(trace, cfg, args.seed, rank, s, args.per_rank)
        lb = local_batch(batch)
        step = ot.plan_step(lb, desc, topo, strategy=strategy, timeout_s=args.timeout_s)
        model.zero_grad(set_to_none=True)
        local_sum, local_targets = orch_step(model, batch, step, rank)
        # Loss normalisation: the global mean over target tokens, not a per-rank mean. Each rank
        # divides its token-sum loss by the global target count, and gradients are summed over
        # ranks (all_reduce SUM): the result is the single-process gradient of the global batch,
        # whichever rank ran which example.
        counts = torch.tensor([local_targets], dtype=torch.int64)
        dist.all_reduce(counts)
        global_targets = int(counts)
        if args.per_rank_mean:  # the wrong way, for --per-rank-mean: DDP's mean of rank means
            loss_part = local_sum / max(local_targets, 1) / world
        else:
            loss_part = local_sum / global_targets
        loss_part.backward()
        for p in model.parameters():
            if p.grad is None:
                p.grad = torch.zeros_like(p)
            dist.all_reduce(p.grad)
        loss = loss_part.detach().clone()
        dist.all_reduce(loss)
        t_step = time.perf_counter() - t0
        step_ok = True
        if rank == 0:
            ref_model = copy.deepcopy(model)
            everyone = [ex for r in range(world) for ex in sample_batch(trace, cfg, args.seed, r, s, args.per_rank)]
            ref_loss, ref_grads, ref_targets = reference_step(ref_model, everyone)
            worst = 0.0
            bad = []
            loss_ok = math.isclose(float(loss), float(ref_loss), rel_tol=args.rtol)
            if not loss_ok:
                bad.append(f"loss {float(loss)!r} vs reference {float(ref_loss)!r}")
            if ref_targets != global_targets:
                bad.append(f"target tokens {global_targets} vs reference {ref_targets}")
            for n, p in model.named_parameters():
                good, maxdiff = check_close(p.grad, ref_grads[n], args.rtol)
                scale = float(ref_grads[n].abs().max())
                worst = max(worst, maxdiff / scale if scale else maxdiff)
                if not good:
                    bad.append(f"gradient of {n}: max |diff| {maxdiff:.3e} (max |ref| {scale:.3e})")
            step_ok = not bad
            phases = " ".join(f"{ph.name} {ph.max_over_mean:.3f}" for ph in step.phases())
            clips = sum(1 for ex in everyone for f, _, _ in ex.media if f == "audio")
            windows = len(step.encoder("audio").phase.items)
            log(f"[{strategy}] step {s}: loss {float(loss):.6f} (reference {float(ref_loss):.6f}), "
                f"{len(list(model.parameters()))} gradients, worst |diff|/max|ref| {worst:.2e}, "
                f"{global_targets} target tokens, {clips} audio clips in {windows} windows, "
                f"max/mean {phases}, step {t_step:.2f} s: "
                + ("equal" if step_ok else f"MISMATCH ({len(bad)}): " + "; ".join(bad[:3])
                   + ("; ..." if len(bad) > 3 else "")))
        flag = torch.tensor([0 if step_ok else 1])
        dist.all_reduce(flag)  # every rank learns the verdict and stops together
        if int(flag):
            return False
        opt.step()
    # Parameters stay identical on every rank (the gradients were all-reduced).
    digest = torch.tensor([float(sum(p.detach().double().sum() for p in model.parameters()))], dtype=torch.float64)
    gathered = [torch.zeros_like(digest) for _ in range(world)]
    dist.all_gather(gathered, digest)
    same = all(bool(g == gathered[0]) for g in gathered)
    if rank == 0:
        log(f"[{strategy}] parameters identical on all {world} ranks after {args.steps} steps: {same}")
    return same


def worker(rank: int, world: int, args: Args, port: int | None, results) -> bool:
    """One rank: trains every chosen strategy, puts (rank, verdict) in `results` (if given),
    tears the process group down and returns the verdict."""
    faulthandler.enable()  # a native abort (in torch's C++ threads) prints every thread's stack
    torch.set_num_threads(1)
    if port is not None:
        os.environ["MASTER_ADDR"] = "127.0.0.1"
        os.environ["MASTER_PORT"] = str(port)
        os.environ["RANK"], os.environ["WORLD_SIZE"] = str(rank), str(world)
    dist.init_process_group("gloo", rank=rank, world_size=world,
                            timeout=datetime.timedelta(seconds=args.timeout_s))
    def log(msg: str) -> None:
        print(msg, flush=True)

    ok = True
    try:
        trace = load_trace(Path(args.trace))
        cfg = Config()
        strategies = STRATEGIES if args.strategy == "all" else (args.strategy,)
        for strategy in strategies:
            ok = run_strategy(args, strategy, rank, world, trace, cfg, log) and ok
        # An orderly teardown: no rank closes its connections while another is still inside a
        # collective (after an exception the peers may be inside another one: no barrier
        # then), and orch.torch's cached tensors go while the interpreter is fully alive.
        dist.barrier()
        import orch.torch as ot

        ot.clear_caches()
    except Exception:
        traceback.print_exc()
        ok = False
    finally:
        if results is not None:
            results.put((rank, ok))
        dist.destroy_process_group()
    return ok


def spawned_worker(rank: int, world: int, args: Args, port: int, results) -> None:
    """worker() in a process of its own: its verdict is in `results` and the process group is
    destroyed, so the process ends without interpreter finalisation. A worker aborted once in
    CI after every check had passed ('terminate called without an active exception', no
    Python error): torch's C++ threads meeting a finalising interpreter are the likely cause,
    and nothing in that phase can change the verdict. A failure still exits non-zero (an
    exception out of worker() reaches torch's spawn wrapper, as before)."""
    ok = worker(rank, world, args, port, results)
    sys.stdout.flush()
    sys.stderr.flush()
    os._exit(0 if ok else 1)


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


# ----------------------------------------------------------------------------------------------
# Reference-only mode (no orch): the model, the data and the loss on one process.


def run_reference(args: Args) -> bool:
    torch.set_num_threads(1)
    trace = load_trace(Path(args.trace))
    cfg = Config()
    torch.manual_seed(args.seed)
    model = TinyMLLM(cfg)
    opt = torch.optim.SGD(model.parameters(), lr=args.lr)
    ok = True
    for s in range(args.steps):
        t0 = time.perf_counter()
        everyone = [ex for r in range(args.nproc) for ex in sample_batch(trace, cfg, args.seed, r, s, args.per_rank)]
        loss, grads, targets = reference_step(model, everyone)
        finite = math.isfinite(float(loss)) and all(bool(torch.isfinite(g).all()) for g in grads.values())
        nonzero = sum(1 for g in grads.values() if bool((g != 0).any()))
        ok = ok and finite
        print(f"[reference] step {s}: loss {float(loss):.6f} over {targets} target tokens, "
              f"{nonzero}/{len(grads)} gradients nonzero, {time.perf_counter() - t0:.2f} s", flush=True)
        opt.step()
    return ok


# ----------------------------------------------------------------------------------------------
# --measure: each rank's forward + backward time per phase, one rank at a time.


def measure(args: Args, strategies: list[str], repeats: int) -> bool:
    import orch

    torch.set_num_threads(1)
    trace = load_trace(Path(args.trace))
    cfg = Config()
    torch.manual_seed(args.seed)
    model = TinyMLLM(cfg)
    desc = orch_model(cfg)
    topo = orch.Topology.uniform(args.nproc, args.ranks_per_node)
    world = args.nproc
    names = ["vision", "audio", "llm"]
    # per strategy, per phase: lists over steps of (measured max/mean, predicted max/mean)
    figures = {s: {p: [] for p in names} for s in strategies}
    for s in range(args.steps):
        batches = [sample_batch(trace, cfg, args.seed, r, s, args.per_rank) for r in range(world)]
        everyone = [ex for b in batches for ex in b]
        words = [local_batch(b).serialize(r) for r, b in enumerate(batches)]
        table = orch.table_from_metadata(words, model=desc)
        # Per example its chunks' inputs and (detached) LLM sequence: what each phase consumes.
        with torch.no_grad():
            seqs = [reference_sequence(model, ex) for ex in everyone]
        chunks = media_chunks(everyone, cfg)  # orch's chunk numbering: chunk c = chunks[c]
        for strategy in strategies:
            step = orch.orchestrate(table, desc, topo, strategy=strategy)
            for ph in step.phases():
                times = []
                for r in range(world):
                    items = [int(i) for i in ph.placement.items_on(r)]
                    if ph.name == "llm":
                        work = [(seqs[x][0].clone().requires_grad_(), seqs[x][1]) for x in items]
                        run = lambda: sum((model.llm.loss_sum(q, lab) for q, lab in work), torch.zeros(())).backward()
                    else:
                        enc = model.encoders[ph.name]
                        chunk_of = np.asarray(ph.items)
                        rows = []
                        for i in items:
                            x, k, off, n = chunks[int(chunk_of[i])]
                            rows.append(everyone[x].media[k][1][off:off + n])
                        gen = torch.Generator().manual_seed(7)
                        grads = [torch.randn(output_tokens(q.shape[0]), cfg.d_llm, generator=gen) for q in rows]
                        run = lambda: sum(((enc(q) * g).sum() for q, g in zip(rows, grads)), torch.zeros(())).backward()
                    best = math.inf if items else 0.0  # a rank with no item in the phase idles
                    for _ in range(repeats if items else 0):
                        model.zero_grad(set_to_none=True)
                        t0 = time.perf_counter()
                        run()
                        best = min(best, time.perf_counter() - t0)
                    times.append(best)
                mean = statistics.fmean(times)
                measured = max(times) / mean if mean > 0 else 1.0
                figures[strategy][ph.name].append((measured, ph.max_over_mean, times, list(np.asarray(ph.loads))))
    # Per phase one time per cost unit, fitted over every (rank, step, strategy): the cost
    # model's per-rank time prediction, and its error per rank.
    print(f"measured forward + backward per phase: {world} ranks x {args.per_rank} examples, "
          f"{args.steps} steps, best of {repeats} runs, one rank at a time on one thread")
    print(f"{'strategy':<10} {'phase':<7} {'measured max/mean':>18} {'predicted max/mean':>19} "
          f"{'error':>7} {'max rank ms':>12} {'rank time error':>16}")
    for strategy in strategies:
        for p in names:
            rows = figures[strategy][p]
            if not rows:
                continue
            pairs = [(l, t) for r in rows for l, t in zip(r[3], r[2])]
            every = [(l, t) for st in strategies for r in figures[st][p] for l, t in zip(r[3], r[2])]
            per_unit = sum(t for _, t in every) / max(1, sum(l for l, _ in every))
            rank_err = [abs(t - per_unit * l) / (per_unit * l) for l, t in pairs if l > 0]
            meas = statistics.fmean(r[0] for r in rows)
            pred = statistics.fmean(r[1] for r in rows)
            tmax = statistics.fmean(max(r[2]) for r in rows) * 1e3
            err = 100 * (meas - pred) / pred if pred else float("nan")
            rerr = 100 * statistics.fmean(rank_err) if rank_err else float("nan")
            print(f"{strategy:<10} {p:<7} {meas:>18.3f} {pred:>19.3f} {err:>6.1f}% {tmax:>12.1f} "
                  f"{rerr:>15.1f}%")
    for strategy in strategies:
        slowest = sum(statistics.fmean(max(r[2]) for r in figures[strategy][p]) for p in names)
        mean = sum(statistics.fmean(statistics.fmean(r[2]) for r in figures[strategy][p]) for p in names)
        print(f"{strategy:<10} step compute: slowest rank per phase, summed {1e3 * slowest:.1f} ms "
              f"(mean rank {1e3 * mean:.1f} ms)")
    print("error: measured max/mean over predicted max/mean (the loads' max/mean) - 1; rank time "
          "error: mean |t - a*load| / (a*load) over ranks, a = the phase's seconds per cost unit "
          "fitted over all ranks, steps and strategies")
    return True


# ----------------------------------------------------------------------------------------------


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--nproc", type=int, default=4, help="gloo processes to spawn (ignored under torchrun)")
    ap.add_argument("--steps", type=int, default=3)
    ap.add_argument("--strategy", default="orch", choices=(*STRATEGIES, "all", "reference"))
    ap.add_argument("--examples-per-rank", type=int, default=6)
    ap.add_argument("--ranks-per-node", type=int, default=2)
    ap.add_argument("--seed", type=int, default=2025)
    ap.add_argument("--trace", default=str(DEFAULT_TRACE))
    ap.add_argument("--rtol", type=float, default=1e-5)
    ap.add_argument("--lr", type=float, default=0.05)
    ap.add_argument("--timeout", type=float, default=120.0, help="seconds a collective may wait")
    ap.add_argument("--per-rank-mean", action="store_true",
                    help="normalise each rank's loss by its own tokens (wrong: the checks fail)")
    ap.add_argument("--measure", action="store_true", help="time each rank's phases (one process)")
    ap.add_argument("--repeats", type=int, default=3, help="--measure: best of this many runs")
    ap.add_argument("--measure-strategies", default="none,orch")
    a = ap.parse_args(argv)
    torchrun = "RANK" in os.environ and "WORLD_SIZE" in os.environ and "LOCAL_RANK" in os.environ
    world = int(os.environ["WORLD_SIZE"]) if torchrun else a.nproc
    rpn = a.ranks_per_node if world % a.ranks_per_node == 0 else world
    args = Args(world, a.steps, a.strategy, a.examples_per_rank, a.seed, rpn, a.trace, a.rtol, a.lr, a.timeout, a.per_rank_mean)
    t0 = time.perf_counter()
    if a.measure:
        ok = measure(args, a.measure_strategies.split(","), a.repeats)
    elif a.strategy == "reference":
        ok = run_reference(args)
    elif torchrun:
        rank = int(os.environ["RANK"])
        ok = worker(rank, world, args, None, None)
        if rank != 0:
            return 0 if ok else 1
    else:
        import torch.multiprocessing as mp

        ctx = mp.get_context("spawn")
        results = ctx.SimpleQueue()
        try:
            mp.start_processes(spawned_worker, args=(world, args, free_port(), results), nprocs=world,
                               join=True, start_method="spawn")
            ok = True
        except Exception as e:  # a worker failed: its traceback is printed above
            print(f"a worker failed: {e}", file=sys.stderr)
            ok = False
        verdicts = []
        while not results.empty():
            verdicts.append(results.get())
        ok = ok and len(verdicts) == world and all(v for _, v in verdicts)
    print(f"{'all checks passed' if ok else 'CHECKS FAILED'} ({time.perf_counter() - t0:.1f} s)")
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
