"""`agentbed list agentdojo` counts its 3,893 tasks per task suite and attack instead of printing every
id (``--all`` does), says which benchmark version it counted and counts every version's, lists
another version's with ``--benchmark-version``; and ``--task`` takes shell-style patterns."""

from __future__ import annotations

import json

from agentbed.cli import main


def test_list_counts_per_suite_and_attack_and_all_lists_every_id(capsys):
    assert main(["list", "agentdojo"]) == 0
    out = capsys.readouterr().out
    assert "(3893 in all at --benchmark-version v1.2.2; --all or --json lists every id)" in out
    assert ("tasks by --benchmark-version: v1 2613, v1.1 2613, v1.1.1 2613, v1.1.2 2613, v1.2 3893, v1.2.1 3893,"
            " v1.2.2 3893 (listed: v1.2.2;") in out
    assert "by task_suite: workspace 2280, travel 580, banking 592, slack 441" in out
    assert "by attack: none 97, important_instructions 949, tool_knowledge 949, direct 949, ignore_previous 949" in out
    assert max(len(line) for line in out.splitlines()) < 400
    assert main(["list", "agentdojo", "--all"]) == 0
    ids = [line.strip() for line in capsys.readouterr().out.splitlines() if line.startswith("    ")]
    assert len(ids) == 3893 and ids[0] == "workspace.user_task_0"


def test_list_takes_the_suites_options_and_counts_each_benchmark_version(capsys):
    assert main(["list", "agentdojo", "--benchmark-version", "v1.1", "--task-suite", "workspace"]) == 0
    out = capsys.readouterr().out
    # v1.1's workspace: 40 user tasks, 6 injection tasks (v1.2 added 8), 4 attacks
    assert "(1000 in all at --benchmark-version v1.1 --task-suite workspace;" in out
    assert "tasks by --benchmark-version: v1 1000, v1.1 1000, v1.1.1 1000, v1.1.2 1000, v1.2 2280," in out
    assert main(["list", "agentdojo", "--benchmark-version", "v1", "--all"]) == 0
    ids = [line.strip() for line in capsys.readouterr().out.splitlines() if line.startswith("    ")]
    assert len(ids) == 97 + 4 * (40 * 6 + 20 * 7 + 16 * 9 + 21 * 5) and "workspace.user_task_0.injection_task_6.direct" not in ids
    assert main(["list", "agentdojo", "--json", "--benchmark-version", "v1.2.1", "--attack", "none"]) == 0
    listing = json.loads(capsys.readouterr().out)["suites"][0]
    assert listing["listed_with"]["benchmark_version"] == "v1.2.1" and len(listing["tasks"]) == 97
    assert listing["task_counts"] == {"benchmark_version": {v: 97 for v in
                                                            ("v1", "v1.1", "v1.1.1", "v1.1.2", "v1.2", "v1.2.1", "v1.2.2")}}
    for argv, named in ((["list", "agentdojo", "--benchmark-version", "v9"], "v9"),
                        (["list", "agentdojo", "--no-such", "x"], "no_such"),
                        (["list", "--benchmark-version", "v1"], "--benchmark-version")):
        assert main(argv) == 2
        err = capsys.readouterr().err
        assert err.startswith("agentbed: error: ") and named in err and len(err.splitlines()) == 1


def test_task_patterns_select_tasks(tmp_path, capsys):
    assert main(["run", "agentdojo", "--attack", "none", "--task", "banking.user_task_1?", "--out", str(tmp_path / "r"),
                 "--executor", "serial"]) == 0
    results = json.loads((tmp_path / "r" / "results.json").read_text())
    units = {u for m in results["metrics"] for u in m["values"]}
    assert units == {f"banking.user_task_1{i}/0" for i in range(6)}
    assert main(["run", "agentdojo", "--task", "banking.nothing*", "--out", str(tmp_path / "n")]) == 2
    assert "matches no task" in capsys.readouterr().err
