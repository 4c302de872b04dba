"""bench/scale.py prints each step's figures as soon as it is measured (a 100,000-episode run
stopped for the load keeps what it measured) and the table at the end. Timings are not asserted."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
STEPS = ("run (serial)", "verify", "report", "viewer runs list (cold)")


def test_each_step_is_printed_when_measured_and_the_table_at_the_end():
    env = {**os.environ, "PYTHONPATH": os.pathsep.join(p for p in sys.path if p)}
    done = subprocess.run([sys.executable, str(ROOT / "bench" / "scale.py"), "--sizes", "12"], capture_output=True,
                          text=True, env=env, timeout=600, cwd=ROOT)
    assert done.returncode == 0, done.stderr
    lines = done.stderr.splitlines()
    at = [next(i for i, line in enumerate(lines) if line.startswith(f"12 episodes, {step}: ")) for step in STEPS]
    assert at == sorted(at)  # in the order measured
    assert all("ms/episode" in lines[i] and "MiB" in lines[i] for i in at)
    rows = [line for line in done.stdout.splitlines() if line.startswith("| ")]
    assert [r.split(" | ")[0].removeprefix("| ") for r in rows[1:]] == list(STEPS)
