"""`agentbed list agentdojo` counts its 3,893 tasks per task suite and attack instead of printing every
id (``--all`` does), and ``--task`` takes shell-style patterns."""

from __future__ import annotations

import json

from agentbed.cli import main


def test_list_counts_per_suite_and_attack_and_all_lists_every_id(capsys):
    assert main(["list", "agentdojo"]) == 0
    out = capsys.readouterr().out
    assert "(3893 in all; --all or --json lists every id)" in out
    assert "by task_suite: workspace 2280, travel 580, banking 592, slack 441" in out
    assert "by attack: none 97, important_instructions 949, tool_knowledge 949, direct 949, ignore_previous 949" in out
    assert max(len(line) for line in out.splitlines()) < 400
    assert main(["list", "agentdojo", "--all"]) == 0
    ids = [line.strip() for line in capsys.readouterr().out.splitlines() if line.startswith("    ")]
    assert len(ids) == 3893 and ids[0] == "workspace.user_task_0"


def test_task_patterns_select_tasks(tmp_path, capsys):
    assert main(["run", "agentdojo", "--attack", "none", "--task", "banking.user_task_1?", "--out", str(tmp_path / "r"),
                 "--executor", "serial"]) == 0
    results = json.loads((tmp_path / "r" / "results.json").read_text())
    units = {u for m in results["metrics"] for u in m["values"]}
    assert units == {f"banking.user_task_1{i}/0" for i in range(6)}
    assert main(["run", "agentdojo", "--task", "banking.nothing*", "--out", str(tmp_path / "n")]) == 2
    assert "matches no task" in capsys.readouterr().err
