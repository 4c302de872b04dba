"""``--benchmark-version``: every version the pinned agentdojo ships runs, its ground truth scores
the same under agentbed as under AgentDojo's benchmark functions at that version (a slice of the
tasks each version changed), and a run records its version."""

from __future__ import annotations

import functools
import json

import pytest
import yaml
from equal_subtrees import shortcut
from parse_memo import parse_once

from agentbed.cli import main
from environments.agentdojo.benchmark import BENCHMARK_VERSION, VERSIONS, TaskId, injection_task_names
from suites.agentdojo.crosscheck import Scores, agentbed_scores, compare, their_ground_truth

# user tasks and injection tasks that some version after v1 changed (agentdojo/default_suites/v1_*)
PLAIN = {"workspace": ["user_task_7", "user_task_13"], "travel": ["user_task_17"], "slack": ["user_task_4"],
         "banking": ["user_task_6", "user_task_15"]}
ATTACKED = {"workspace": ("user_task_0", ["injection_task_3", "injection_task_6", "injection_task_11"]),
            "travel": ("user_task_0", ["injection_task_5"]), "banking": ("user_task_0", ["injection_task_0"])}
# AgentDojo's runner parses the same few environment texts at every version (19 distinct texts
# among the 322 it parses in this file, 10 of the 89 long ones): each is parsed once per process
PARSED = functools.lru_cache(maxsize=32)(yaml.safe_load)


@pytest.fixture(autouse=True)
def _texts_parsed_once(monkeypatch):
    parse_once(monkeypatch, PARSED)


def test_the_offered_versions_are_the_ones_the_installed_package_ships():
    from agentdojo.task_suite.load_suites import _SUITES

    assert set(VERSIONS) == set(_SUITES) and BENCHMARK_VERSION == VERSIONS[-1]
    assert len(injection_task_names("workspace", "v1.1.2")) == 6 and len(injection_task_names("workspace")) == 14


@pytest.mark.parametrize("version", VERSIONS)
def test_the_ground_truth_scores_the_same_as_agentdojos_at_every_version(version, tmp_path):
    theirs: dict[TaskId, Scores] = {}
    for suite, users in PLAIN.items():
        theirs |= their_ground_truth(suite, None, tmp_path, user_tasks=users, version=version)
    for suite, (user, wanted) in ATTACKED.items():
        present = [i for i in wanted if i in injection_task_names(suite, version)]
        theirs |= their_ground_truth(suite, "important_instructions", tmp_path, user_tasks=[user], version=version,
                                     injection_tasks=present)
    assert len(theirs) == (11 if version >= "v1.2" else 9)
    with shortcut():  # agentbed's graders skip DeepDiff's walk of equal parts; AgentDojo's, the oracle, do not
        ours = agentbed_scores(sorted(theirs, key=str), "ground-truth", options={"benchmark_version": version})
    assert compare(ours, theirs) == []


def test_a_run_records_its_version_and_an_unknown_one_is_refused(tmp_path, capsys):
    out = tmp_path / "run"
    assert main(["run", "agentdojo", "--benchmark-version", "v1.1.1", "--task", "travel.user_task_17",
                 "--agent", "ground-truth", "--out", str(out), "--quiet"]) == 0
    assert json.loads((out / "run.json").read_text())["options"]["benchmark_version"] == "v1.1.1"
    (log,) = (out / "episodes").glob("*.jsonl")
    header = json.loads(log.read_text().splitlines()[0])
    assert '"benchmark_version": "v1.1.1"' in json.dumps(header, sort_keys=True)
    assert main(["run", "agentdojo", "--benchmark-version", "v9", "--task", "travel.user_task_17",
                 "--out", str(tmp_path / "bad"), "--quiet"]) == 2
    assert "v9" in capsys.readouterr().err
