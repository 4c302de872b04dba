"""The tox scenario envs gate a run against a baseline; the gate fails a run that covers only part
of its baseline, so each env must run every seed its baseline holds (tox -e contracts once ran 3
of the baseline's 5 seeds and failed)."""

from __future__ import annotations

import configparser
import json
import shlex
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]


def gated_runs() -> list[tuple[str, list[str], Path]]:
    """(env, the `agentbed run` arguments, the baseline) of every env that gates a plain run."""
    tox = configparser.ConfigParser(interpolation=None)
    tox.read(ROOT / "tox.ini")
    found = []
    for section in tox.sections():
        commands = [shlex.split(line) for line in tox[section].get("commands", "").splitlines() if line.strip()]
        runs = [c for c in commands if c[:2] == ["agentbed", "run"]]
        gates = [c for c in commands if c[:2] == ["agentbed", "gate"]]
        if runs and gates:
            baseline = gates[0][gates[0].index("--baseline") + 1]
            found.append((section, runs[0], ROOT / baseline))
    return found


def test_every_gated_run_covers_its_baselines_seeds():
    runs = gated_runs()
    assert {env for env, _, _ in runs} >= {"testenv:vault", "testenv:contracts"}
    for env, args, baseline in runs:
        seeds = json.loads(baseline.read_text())["seeds"]
        assert "--seeds" in args, f"{env}: runs the suite's default seeds; its baseline holds {len(seeds)}"
        count = int(args[args.index("--seeds") + 1])  # --seeds N runs seeds 0..N-1
        assert count == len(seeds), f"{env}: runs {count} seeds, {baseline.name} holds {len(seeds)}"
