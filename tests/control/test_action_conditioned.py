"""The oversight workload's action-conditioned controller as a micro-protocol (``ac``)."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import numpy as np

from agentbed.cli import main
from agentbed.log import read_log
from suites.control.action_conditioned import INTERVENTIONS, Chooser, step_features


def generated_rows(seed: int, n: int = 60) -> list[dict]:
    """Checkpoints whose continuation is safe only when the proposal's suspicion is low (noisy),
    deferring is safe but loses the main task on a seeded third, editing and resampling in between."""
    rng = np.random.default_rng(seed)
    rows = []
    for i in range(n):
        s = float(rng.uniform())
        features = step_features([], [s], "task")
        p = {"continue": 1.0 - s ** 0.5, "defer": 0.67, "resample": 0.55 - 0.2 * s, "edit": 0.5}
        for a in INTERVENTIONS:
            for _ in range(2):
                rows.append({"trajectory": f"t{i}", "checkpoint": 0, "game": f"g{i % 12}", "action": a,
                             "success": bool(rng.uniform() < p[a]), "steps": 3, "risk": s, "features": features})
    return rows


def test_the_chooser_continues_on_innocuous_steps_and_intervenes_on_suspicious_ones() -> None:
    chooser = Chooser(generated_rows(0))
    low, predicted = chooser.choose(step_features([], [0.02], "task"))
    high, _ = chooser.choose(step_features([], [0.95], "task"))
    assert low == "continue" and high in ("defer", "resample", "edit") and high != "continue"
    assert set(predicted) == set(INTERVENTIONS) and all(0 <= v["p_success"] <= 1 for v in predicted.values())


def _decisions(path: Path) -> list[dict]:
    out = []
    for rec in read_log(path):
        d = ((rec.get("control") or rec.get("verdict") or {}).get("decision")) or {}
        if d:
            out.append(d)
    return out


def test_agentbed_control_fits_ac_on_other_tasks_and_it_chains_on_any_suite(tmp_path: Path) -> None:
    out = tmp_path / "ctl"
    assert main(["control", "--out", str(out), "--settings", "contracts", "--tasks", "2", "--ac-train-tasks", "2",
                 "--protocols", "ac", "--strategies", "blatant,subtle", "--counterfactual", "0", "--resamples", "20",
                 "--executor", "serial"]) == 0
    train = {json.loads(line)["task"] for line in (out / "ac-train" / "index.jsonl").read_text().splitlines()}
    evaluated = {json.loads(line)["task"] for line in (out / "ac@1_scripted_" / "index.jsonl").read_text().splitlines()}
    assert train and evaluated and not train & evaluated  # fitted on tasks it is not measured on
    rows = [json.loads(line) for line in (out / "ac-train" / "control" / "ac_rows.jsonl").read_text().splitlines()]
    assert {r["action"] for r in rows} == set(INTERVENTIONS) and {r["mode"] for r in rows} == {"honest", "attack"}
    decisions = [d for p in (out / "ac@1_scripted_" / "episodes").glob("*.jsonl") for d in _decisions(p)]
    assert decisions and all(d["protocol"] == "ac" and set(d["ac"]["predicted"]) == set(INTERVENTIONS)
                             and d["action"] in (d["ac"]["choice"], "defer") for d in decisions)  # an empty edit defers
    for sub in ("ac-train", "ac@1_scripted_", "trusted"):  # every log is bound to its sealed sub-run
        assert main(["verify", str(out / sub)]) == 0, sub
    summary = json.loads((out / "control" / "summary.json").read_text())
    assert any("ac@1" in json.dumps(t) for t in summary.get("tables", []))

    # the same protocol, fitted on those rows, chained on another suite through --controller
    (tmp_path / "acf.py").write_text("from suites.control.action_conditioned import factory\n"
                                     f"ac = factory({str(out / 'ac-train' / 'control' / 'ac_rows.jsonl')!r})\n")
    root = Path(__file__).resolve().parents[2]
    run = tmp_path / "vault"
    subprocess.run([str(Path(sys.executable).parent / "agentbed"), "run", "vault", "--agent", "naive", "--seeds", "1",
                    "--controller", "acf.py:ac", "--out", str(run), "--executor", "serial", "--quiet"], check=True,
                   env={**os.environ, "PYTHONPATH": str(root)}, capture_output=True, cwd=tmp_path)
    logs = sorted((run / "episodes").glob("*.jsonl"))
    assert logs and all(d["protocol"] == "ac" and "ac" in d for p in logs for d in _decisions(p))


def test_a_model_policy_s_two_modes_are_two_sub_runs_each_with_one_plan() -> None:
    """Each sub-run's run.json records one set of options: a model's honest and attack episodes
    (which differ in the option ``mode``) must not share one, or verify finds the other outside the plan."""
    import argparse

    from suites.control.cli import grid, subrun_name

    args = argparse.Namespace(settings="contracts", protocols="tm,dtt", defer="0.3", monitor="scripted", monitor_model="",
                              untrusted="openai:gpt-4o-mini", trusted="openai:gpt-4o-mini", editor="scripted",
                              strategies="blatant", tasks=1, seeds=1, attack_rate=1.0, k=3, ac_train_tasks=0,
                              out="unused")
    groups: dict[str, list] = {}
    for spec in grid(args):
        groups.setdefault(subrun_name(spec.options, spec.agent), []).append(spec)
    assert all(len({json.dumps(s.options, sort_keys=True) for s in group}) == 1 for group in groups.values())
    assert {"tm_scripted_", "tm_scripted_-attack", "trusted"} <= set(groups)


def test_the_demo_slice_sets_every_option_agentbed_control_has() -> None:
    """The demo builds its arguments by hand: an option added to ``agentbed control`` must be there too."""
    import argparse

    from suites.control.cli import register
    from suites.control.demo import DEMO

    parser = argparse.ArgumentParser()
    register(parser.add_subparsers())
    args = parser.parse_args(["control", "--out", "unused"])
    assert set(vars(args)) - {"func", "out"} <= set(DEMO)
