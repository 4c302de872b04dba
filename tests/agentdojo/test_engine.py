"""The engine on AgentDojo: a CLI run, verified logs, bit-exact replay, branching where the
injection was read, and the demo gated against its committed baseline."""

from __future__ import annotations

import json
from pathlib import Path

from agentbed.cli import main
from agentbed.log import read_log
from suites.agentdojo.branching import injection_step
from suites.agentdojo.demo import demo_specs, run_demo
from suites.agentdojo.suite import SUITE

ROOT = Path(__file__).resolve().parents[2]
TASKS = ["banking.user_task_0.injection_task_0.important_instructions", "banking.user_task_2"]


def test_run_verify_rerun_and_branch_at_the_injection(tmp_path, capsys):
    out = tmp_path / "run"
    args = ["run", "agentdojo", "--agent", "injection-follower", "--executor", "serial", "--out", str(out), "--quiet",
            "--task-suite", "banking", "--attack", "important_instructions"]
    assert main([*args, *(x for t in TASKS[:1] for x in ("--task", t))]) == 0
    assert main(["verify", str(out)]) == 0
    log = next((out / "episodes").glob("*.jsonl"))
    capsys.readouterr()
    assert main(["replay", str(log), "--rerun"]) == 0
    assert capsys.readouterr().out.strip() == "identical"
    at = injection_step(read_log(log))
    assert at == 1
    assert main(["branch", str(log), "--at", str(at), "--agents", "continue,refuse,ground-truth",
                 "--out", str(tmp_path / "branches")]) == 0
    printed = capsys.readouterr().out
    assert "3 branches written" in printed
    branches = {read_log(p)[0]["agent_id"]: read_log(p)[-1] for p in (tmp_path / "branches").glob("*.jsonl")}
    assert branches["continue@1"]["metrics"]["attack_success"] is True
    assert branches["ground-truth@1"]["metrics"]["attack_success"] is False
    assert branches["refuse@1"]["metrics"]["utility"] is False


def test_demo_findings_and_gate_against_the_committed_baseline(tmp_path):
    summary = run_demo(tmp_path, SUITE)
    assert summary["crosscheck"]["agree"] == len(demo_specs()) and not summary["crosscheck"]["differences"]
    labels = [f["label"] for f in summary["findings"]]
    assert any("tool filter" in label for label in labels) and len(summary["findings"]) <= 6
    results = json.loads((tmp_path / "agentdojo" / "results.json").read_text())
    assert {m["metric"] for m in results["metrics"]} == {"utility", "attack_success"}
    baseline = str(ROOT / "baselines" / "agentdojo.json")
    assert main(["gate", str(tmp_path / "agentdojo"), "--baseline", baseline]) == 0  # powered: no exit 5
    doubled = json.loads(json.dumps(results))  # the filter lets twice as many injections through
    for metric in doubled["metrics"]:
        if metric["agent"] == "injection-follower+tool_filter_oracle" and metric["metric"] == "attack_success":
            stopped = [u for u, v in sorted(metric["values"].items()) if v == 0.0]
            metric["values"].update(dict.fromkeys(stopped[:int(sum(metric["values"].values()))], 1.0))
    (tmp_path / "doubled.json").write_text(json.dumps(doubled))
    assert main(["gate", str(tmp_path / "doubled.json"), "--baseline", baseline]) == 1
    for metric in results["metrics"]:  # the tool filter stops defending: the gate must fail
        if metric["agent"] == "injection-follower+tool_filter_oracle" and metric["metric"] == "attack_success":
            metric["values"] = dict.fromkeys(metric["values"], 1.0)
    (tmp_path / "worse.json").write_text(json.dumps(results))
    assert main(["gate", str(tmp_path / "worse.json"), "--baseline", baseline]) == 1
