"""The committed index of AgentDojo's task names at every benchmark version (what ``agentbed list``
reads instead of importing agentdojo) is the installed benchmark's, and a run refuses an index that is not."""

from __future__ import annotations

import copy

import pytest

import environments.agentdojo.benchmark as benchmark
import environments.agentdojo.index as index
from agentbed.cli import main
from environments.agentdojo.benchmark import (
    TASK_SUITES,
    VERSIONS,
    injection_task_names,
    task_ids,
    user_task_names,
)


def test_the_committed_index_is_agentdojos_own_enumeration():
    assert benchmark.committed_index() == index.live_index(), (
        f"{benchmark.INDEX.name} is not the installed agentdojo's task list: regenerate it with {benchmark.REGENERATE}")
    for version in VERSIONS:
        for suite in TASK_SUITES:
            assert benchmark.indexed_user_tasks(suite, version) == user_task_names(suite, version)
            assert benchmark.indexed_injection_tasks(suite, version) == injection_task_names(suite, version)
    assert len(task_ids()) == 97 + 4 * 949
    # v1.2 added 8 workspace injection tasks: 4 attacks x 40 user tasks x 8 pairs more than v1.1.2
    assert {v: len(task_ids(version=v)) for v in VERSIONS} == {
        "v1": 2613, "v1.1": 2613, "v1.1.1": 2613, "v1.1.2": 2613, "v1.2": 3893, "v1.2.1": 3893, "v1.2.2": 3893}


def _tampered(monkeypatch: pytest.MonkeyPatch, suite: str, extra_user_task: str, version: str = "v1.2.2") -> None:
    changed = copy.deepcopy(benchmark.committed_index())
    changed["versions"][version][suite]["user_tasks"].append(extra_user_task)
    monkeypatch.setattr(benchmark, "committed_index", lambda: changed)


def test_a_stale_index_names_the_difference_and_the_command_that_regenerates_it(monkeypatch):
    _tampered(monkeypatch, "slack", "user_task_99")
    assert index.index_differences(("banking",)) == []
    with pytest.raises(ValueError, match=r"v1.2.2 slack user_tasks: .*not installed: user_task_99.*scripts/agentdojo-index"):
        index.check_index()
    _tampered(monkeypatch, "travel", "user_task_77", "v1.1")
    assert index.index_differences(("travel",)) == []  # v1.2.2's travel is as installed
    with pytest.raises(ValueError, match=r"v1.1 travel user_tasks: .*not installed: user_task_77"):
        index.check_index(("travel",), "v1.1")


def test_a_run_checks_its_tasks_against_the_real_benchmark_before_it_starts(monkeypatch, tmp_path, capsys):
    _tampered(monkeypatch, "slack", "user_task_99")
    out = tmp_path / "run"
    status = main(["run", "agentdojo", "--task", "slack.user_task_99", "--executor", "serial", "--quiet",
                   "--out", str(out)])
    assert status == 2 and not out.exists()
    err = capsys.readouterr().err
    assert err.startswith("agentbed: error: ") and "user_task_99" in err and "agentdojo-index" in err
    _tampered(monkeypatch, "banking", "user_task_98", "v1")  # another version's index is checked alike
    status = main(["run", "agentdojo", "--task", "banking.user_task_98", "--benchmark-version", "v1", "--executor",
                   "serial", "--quiet", "--out", str(out)])
    assert status == 2 and not out.exists()
    err = capsys.readouterr().err
    assert "v1 banking user_tasks" in err and "user_task_98" in err
