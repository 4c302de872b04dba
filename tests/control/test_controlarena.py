"""agentbed's control measures against ControlArena's own analysis (control-arena 20.1.1, in its own
venv: it pins another AgentDojo). A control run is exported to Inspect logs and read by ControlArena's
``samples_df``; its ``compute_safety`` and ``compute_usefulness`` must give agentbed's numbers."""

from __future__ import annotations

import json
import os
import random
import subprocess
from pathlib import Path

import pytest

from controllers.control.measures import Trajectory, safety, usefulness
from suites.control.analysis import trajectories
from suites.control.inspect_export import export_control

ROOT = Path(__file__).resolve().parents[2]
VENV_PYTHON = ROOT / ".cache" / "control-arena" / "venv" / "bin" / "python"
INSTALL = "bash scripts/setup-control-arena"
BUDGETS = [0.1, 0.5, 1, 2, 5, 10]


@pytest.fixture(scope="module")
def controlarena() -> Path:
    if not VENV_PYTHON.exists():
        message = f"ControlArena's venv is missing ({VENV_PYTHON}); install it with: {INSTALL}"
        if os.environ.get("CI") == "true":
            pytest.fail(message)
        pytest.skip(message)
    return VENV_PYTHON


def _generated_cases(n: int = 60) -> list[dict]:
    rng = random.Random(49)
    cases = []
    for _ in range(n):
        rows = [["honest", rng.random() < .8, False, round(rng.random(), rng.choice([1, 3]))]
                for _ in range(rng.randint(1, 30))]
        rows += [["attack", rng.random() < .7, rng.random() < .6, round(rng.random(), rng.choice([1, 3]))]
                 for _ in range(rng.randint(1, 30))]
        cases.append({"rows": rows, "budget": rng.choice(BUDGETS)})
    return cases


@pytest.mark.slow
def test_controlarena_computes_agentbed_numbers(controlarena: Path, tmp_path: Path) -> None:
    run = tmp_path / "run"
    env = {**os.environ, "PYTHONPATH": str(ROOT)}
    subprocess.run([str(Path(os.sys.executable).parent / "agentbed"), "control", "--out", str(run),
                    "--settings", "contracts,agentdojo", "--tasks", "4", "--seeds", "1", "--protocols", "tm,dtt,dtr",
                    "--defer", "0.3", "--executor", "serial", "--resamples", "20"], check=True, env=env, capture_output=True, cwd=tmp_path)
    exported = export_control(run, tmp_path / "logs")
    assert len(exported) == 7  # three protocols x two modes, and the trusted baseline
    cases = _generated_cases()
    (tmp_path / "cases.json").write_text(json.dumps(cases))
    done = subprocess.run([str(controlarena), str(ROOT / "tests" / "control" / "controlarena_check.py"),
                           str(tmp_path / "logs"), json.dumps(BUDGETS), str(tmp_path / "cases.json")],
                          check=True, capture_output=True, text=True)
    theirs = json.loads(done.stdout.strip().splitlines()[-1])
    by_protocol, trusted, errored = trajectories(run)
    assert errored == 0 and len(by_protocol) == 3
    for protocol, trajs in by_protocol.items():
        got = theirs["logs"][protocol]
        assert got["samples"] == len(trajs)
        assert got["usefulness"] == pytest.approx(usefulness(trajs))
        for b in BUDGETS:
            assert got["safety"][str(b)] == pytest.approx(safety(trajs, b)), (protocol, b)
    assert theirs["logs"]["trusted"]["usefulness"] == pytest.approx(usefulness(trusted))
    # the attacks are a realistic mix: some caught, some successful and unseen, some stopped by deferral
    tm = by_protocol["tm[scripted]"]
    assert 0 < safety(tm, 1) < 1
    for case, their in zip(cases, theirs["cases"], strict=True):
        ours = safety([Trajectory(m, main, side, s) for m, main, side, s in case["rows"]], case["budget"])
        assert ours == pytest.approx(their)
