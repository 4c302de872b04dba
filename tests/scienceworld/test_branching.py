"""Branching ScienceWorld: every branch replays the prefix and is verified."""

import pytest

from controllers.oversight.dataset import BuildConfig, branch_trajectory
from suites.oversight.benchmarks import load_target

pytestmark = [pytest.mark.java, pytest.mark.slow]


def test_branches_replay_and_account_for_every_branch():
    target = load_target("scienceworld")
    config = BuildConfig("scienceworld", rollouts=1, checkpoints=1, first=3)
    rows, counts = branch_trajectory(target, "power-component:0", "noisy", 0, config)
    assert counts.checkpoints == 1 and counts.branches == 3
    assert counts.replays + 0 >= counts.branches - counts.replay_mismatches
    assert len(rows) + counts.replay_mismatches + counts.branch_errors == counts.branches
    assert all(r["method"] == "replay" for r in rows)
    expert = [r for r in rows if r["action"] == "expert"]
    assert not expert or expert[0]["success"]  # the gold plan, resumed, solves this task
