# SPDX-License-Identifier: Apache-2.0
"""The tiny-MLLM trainer (examples/python/train_tiny_mllm.py) end to end: 2 gloo processes,
one step per strategy, loss and every gradient checked against a single-process reference."""
from __future__ import annotations

import os
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
    assert f"[{strategy}] step 1:" in proc.stdout and "equal" in proc.stdout, out


def test_train_tiny_mllm_per_rank_mean_fails():
    """The check can fail: a per-rank mean loss gives other gradients than the global batch."""
    env = dict(os.environ, OMP_NUM_THREADS="1")
    proc = subprocess.run(
        [sys.executable, str(EXAMPLE), "--nproc", "2", "--steps", "1", "--examples-per-rank", "4",
         "--strategy", "orch", "--per-rank-mean", "--timeout", "60"],
        capture_output=True, text=True, timeout=240, env=env)
    assert proc.returncode != 0, proc.stdout + proc.stderr
    assert "MISMATCH" in proc.stdout and "all checks passed" not in proc.stdout
