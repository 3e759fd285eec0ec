# SPDX-License-Identifier: Apache-2.0
"""The tiny-MLLM trainer (examples/python/train_tiny_mllm.py) end to end: 2 gloo processes,
one step per strategy, loss and every gradient checked against a single-process reference."""
from __future__ import annotations

import os
import re
import subprocess
import sys
from pathlib import Path

import pytest

pytest.importorskip("torch")

EXAMPLE = Path(__file__).resolve().parents[2] / "examples" / "python" / "train_tiny_mllm.py"


@pytest.mark.parametrize("strategy", ["none", "orch"])
def test_train_tiny_mllm(strategy):
    env = dict(os.environ, OMP_NUM_THREADS="1")
    proc = subprocess.run(
        [sys.executable, str(EXAMPLE), "--nproc", "2", "--steps", "2", "--examples-per-rank", "4",
         "--strategy", strategy, "--timeout", "60"],
        capture_output=True, text=True, timeout=240, env=env)
    out = proc.stdout + proc.stderr
    assert proc.returncode == 0, out
    assert "all checks passed" in proc.stdout, out
    steps = [l for l in proc.stdout.splitlines() if l.startswith(f"[{strategy}] step ")]
    assert len(steps) == 2 and all(l.endswith(": equal") for l in steps), out
    # Long audio was cut into windows (chunks planned and encoded separately) in some step.
    cut = [re.search(r"(\d+) audio clips in (\d+) windows", l).groups() for l in steps]
    assert any(int(w) > int(c) for c, w in cut), out


def test_train_tiny_mllm_per_rank_mean_fails():
    """The check can fail: a per-rank mean loss gives other gradients than the global batch."""
    env = dict(os.environ, OMP_NUM_THREADS="1")
    proc = subprocess.run(
        [sys.executable, str(EXAMPLE), "--nproc", "2", "--steps", "1", "--examples-per-rank", "4",
         "--strategy", "orch", "--per-rank-mean", "--timeout", "60"],
        capture_output=True, text=True, timeout=240, env=env)
    assert proc.returncode != 0, proc.stdout + proc.stderr
    assert "MISMATCH" in proc.stdout and "all checks passed" not in proc.stdout
