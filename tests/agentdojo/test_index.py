"""The committed index of AgentDojo's task names (what ``agentbed list`` reads instead of importing
agentdojo) is the installed benchmark's, and a run refuses an index that is not."""

from __future__ import annotations

import copy

import pytest

import environments.agentdojo.benchmark as benchmark
import environments.agentdojo.index as index
from agentbed.cli import main
from environments.agentdojo.benchmark import TASK_SUITES, injection_task_names, task_ids, user_task_names


def test_the_committed_index_is_agentdojos_own_enumeration():
    assert benchmark.committed_index() == index.live_index(), (
        f"{benchmark.INDEX.name} is not the installed agentdojo's task list: regenerate it with {benchmark.REGENERATE}")
    for suite in TASK_SUITES:
        assert benchmark.indexed_user_tasks(suite) == user_task_names(suite)
        assert benchmark.indexed_injection_tasks(suite) == injection_task_names(suite)
    assert len(task_ids()) == 97 + 4 * 949


def _tampered(monkeypatch: pytest.MonkeyPatch, suite: str, extra_user_task: str) -> None:
    changed = copy.deepcopy(benchmark.committed_index())
    changed["suites"][suite]["user_tasks"].append(extra_user_task)
    monkeypatch.setattr(benchmark, "committed_index", lambda: changed)


def test_a_stale_index_names_the_difference_and_the_command_that_regenerates_it(monkeypatch):
    _tampered(monkeypatch, "slack", "user_task_99")
    assert index.index_differences(("banking",)) == []
    with pytest.raises(ValueError, match=r"slack user_tasks: .*not installed: user_task_99.*scripts/agentdojo-index"):
        index.check_index()


def test_a_run_checks_its_tasks_against_the_real_benchmark_before_it_starts(monkeypatch, tmp_path, capsys):
    _tampered(monkeypatch, "slack", "user_task_99")
    out = tmp_path / "run"
    status = main(["run", "agentdojo", "--task", "slack.user_task_99", "--executor", "serial", "--quiet",
                   "--out", str(out)])
    assert status == 2 and not out.exists()
    err = capsys.readouterr().err
    assert err.startswith("agentbed: error: ") and "user_task_99" in err and "agentdojo-index" in err
