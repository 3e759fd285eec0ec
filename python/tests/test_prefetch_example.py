# SPDX-License-Identifier: Apache-2.0
"""examples/python/prefetch_planning.py: a background-thread plan equals the foreground one and
the trainer's thread keeps running while orch plans (the GIL is released)."""
import pathlib
import subprocess
import sys

EXAMPLE = pathlib.Path(__file__).resolve().parents[2] / "examples" / "python" / "prefetch_planning.py"


def test_prefetch_planning_example():
    run = subprocess.run([sys.executable, str(EXAMPLE), "--ranks", "64", "--steps", "2"],
                         capture_output=True, text=True, timeout=120, check=False)
    assert run.returncode == 0, run.stdout + run.stderr
    assert "all checks passed" in run.stdout
    assert run.stdout.count("foreground plan equal: True") == 2
