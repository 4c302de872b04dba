"""The alfworld suite: task selection, option errors, the summary of real episodes, the CLI."""

from __future__ import annotations

import subprocess
import sys

import pytest

from agentbed.runner import Budget, EpisodeSpec, run_episode
from agentbed.suite import SuiteError, get_suite
from suites.alfworld.suite import SUITE, select_tasks, summarize


def test_suite_is_registered_and_selects_tasks_by_split_and_type() -> None:
    assert get_suite("alfworld") is not None
    everything = select_tasks({"games": 320})
    heldout = select_tasks({"games": 320, "split": "heldout"})
    assert len(everything) == 320 and len(heldout) == 64
    assert not set(heldout) & set(select_tasks({"games": 320, "split": "train"}))
    assert select_tasks({"games": 12, "task_type": "pick_two_obj_and_place"}) == ["005-two", "011-two"]


@pytest.mark.parametrize("given", [{"games": "0"}, {"games": "999"}, {"games": "many"}, {"split": "test"}])
def test_bad_options_name_the_option(given) -> None:
    with pytest.raises(SuiteError, match="--"):
        select_tasks(SUITE.resolve_options(given))


def test_summary_of_real_episodes_has_intervals_and_the_expert_difference() -> None:
    records = []
    for task in ("000-simple", "004-cool"):
        for agent in ("scripted-looping", "expert"):
            spec = EpisodeSpec("alfworld", task, agent, 0)
            env = SUITE.make_env(task, {})
            records.append(run_episode(env, SUITE.make_agent(spec, env), spec, budget=Budget(50)))
    summary = summarize(records, {})
    assert summary["episodes"] == 4 and summary["seeds"] == 1
    assert {h["agent"] for h in summary["headline"]} == {"scripted-looping", "expert"}
    assert all(h["low"] <= h["estimate"] <= h["high"] for h in summary["headline"])
    assert summary["tables"][1]["rows"][0][0] == "scripted-looping"
    assert summary["figures"][0]["svg"].startswith("<svg")
    from_index = summarize([r.to_dict() for r in records], {})  # `agentbed run` passes index rows
    assert from_index["tables"] == summary["tables"]


def test_generation_cli_rejects_bad_counts() -> None:
    result = subprocess.run([sys.executable, "-m", "environments.alfworld.games", "--count", "0"],
                            capture_output=True, text=True)
    assert result.returncode == 2 and "--count" in result.stderr
