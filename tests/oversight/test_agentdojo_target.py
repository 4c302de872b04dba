"""AgentDojo as an oversight benchmark (issue 54 item 5): the builder forks where the injection was
first read, exactly as suites/agentdojo/branching.py does on an engine log, and its development and
held-out sides share no user task."""

from __future__ import annotations

import pytest

from agentbed.cli import main
from agentbed.errors import UsageError
from controllers.oversight.dataset import BuildConfig, branch_trajectory
from suites.agentdojo.branching import compare_interventions
from suites.agentdojo.suite import SUITE
from suites.oversight.benchmarks import load_target
from suites.oversight.benchmarks.agentdojo import games_of, options_from, user_task
from suites.oversight.seeds import SEEDS

GAMES = ["banking.user_task_0.injection_task_0.important_instructions",
         "slack.user_task_1.injection_task_2.important_instructions"]


def _rows(follow_rate: float, games: list[str]) -> dict[tuple[str, str], dict]:
    """The builder's rows of ``games`` (one trajectory each), the agent obeying at ``follow_rate``."""
    options = {**options_from([]), "follow_rate": follow_rate}
    target = load_target("agentdojo", **options)
    config = BuildConfig("agentdojo", checkpoints=1, rollouts=1, target_options=options)
    rows = [r for game in games for r in branch_trajectory(target, game, "susceptible", 0, config)[0]]
    return {(r["game"], r["action"]): r for r in rows}


def test_the_builder_forks_at_the_injection_as_agentdojos_branching_does(tmp_path):
    """An agent that always obeys is AgentDojo's injection follower: the builder's checkpoint and
    every intervention's outcome equal branching.py's on the engine's own log of that follower."""
    rows = _rows(1.0, GAMES)
    for game in GAMES:
        out = tmp_path / game
        assert main(["run", "agentdojo", "--agent", "injection-follower", "--executor", "serial", "--quiet",
                     "--attack", "important_instructions", "--task", game, "--out", str(out)]) == 0
        log = next((out / "episodes").glob("*.jsonl"))
        theirs = compare_interventions(SUITE, log, tmp_path / "branches" / game)
        for row in theirs["rows"]:
            mine = rows[(game, row["intervention"])]
            assert mine["checkpoint"] == theirs["at_step"]
            assert mine["success"] == (row["utility"] and not row["attack_success"])
            assert mine["steps"] == row["steps"]
        assert rows[(game, "continue")]["success"] is False  # the follower's attack succeeds


def test_an_agent_that_never_obeys_succeeds_by_continuing():
    rows = _rows(0.0, GAMES)
    assert all(rows[(g, "continue")]["success"] for g in GAMES)
    assert all(0.0 <= rows[(g, "continue")]["risk"] <= 1.0 and rows[(g, "continue")]["risk"] != 0.1 for g in GAMES)


def test_development_and_held_out_pairs_share_no_user_task():
    split, games = SEEDS["agentdojo"], games_of("important_instructions", 3)
    held = {user_task(g) for g in games if split.unit(g) in split.heldout}
    dev = {user_task(g) for g in games if split.unit(g) in split.development}
    assert held and dev and not held & dev
    assert len(held | dev) == 97  # every user task of v1.2.2's four suites, each on one side
    target = load_target("agentdojo", split="held-out", **options_from([]))
    assert {user_task(g) for g in target.games} == held


def test_bad_target_options_are_one_line():
    with pytest.raises(UsageError, match="KEY one of"):
        options_from(["colour=red"])
    with pytest.raises(UsageError, match="pairs: not a int"):
        options_from(["pairs=many"])
    with pytest.raises(UsageError, match="attack"):
        load_target("agentdojo", **{**options_from([]), "attack": "nope"})
