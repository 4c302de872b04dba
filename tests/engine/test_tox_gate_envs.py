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


def test_every_gated_run_has_no_task_its_baseline_lacks():
    """The gate refuses results with tasks the baseline never had (a baseline of another task
    set), so each env's run must stay within its baseline's tasks."""
    from agentbed.suite import get_suite

    for env, args, baseline in gated_runs():
        suite = get_suite(args[2])
        tasks = args[args.index("--task") + 1:] if "--task" in args else \
            [t for t in suite.task_ids(suite.resolve_options({})) if t not in suite.hidden_tasks]
        groups = {u.split("/", 1)[0] for m in json.loads(baseline.read_text())["metrics"] for u in m["values"]}
        assert set(tasks) <= groups, f"{env}: tasks {sorted(set(tasks) - groups)[:5]} are not in {baseline.name}"
