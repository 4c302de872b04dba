"""Branching real ALFWorld games through environments.alfworld's public factories."""

import importlib.util

import pytest

from agentbed.testing import require
from controllers.oversight.dataset import BuildConfig, branch_trajectory

pytestmark = [pytest.mark.alfworld, pytest.mark.slow]


@pytest.fixture(scope="module")
def target():
    require(importlib.util.find_spec("alfworld") is not None, "the alfworld package",
            "pip install -e '.[alfworld]' (compiles for about 2 minutes)")
    from suites.oversight.benchmarks import load_target

    return load_target("alfworld", games=2)


def test_alfworld_prefix_replay_is_verified_and_deterministic(target):
    config = BuildConfig("alfworld", rollouts=2, checkpoints=1, first=5)
    rows, counts = branch_trajectory(target, target.games[0], "noisy", 0, config)
    again, _ = branch_trajectory(target, target.games[0], "noisy", 0, config)
    assert counts.replay_mismatches == 0 and counts.branch_errors == 0
    assert counts.replays == counts.branches == 8  # 4 actions x 2 rollouts
    assert {r["action"] for r in rows} == {"continue", "expert", "planner", "reflect"}
    assert rows == again  # seeded global random: the handcoded expert repeats itself


def test_alfworld_rows_carry_progress_features_identical_for_every_action(target):
    import json

    from controllers.oversight.dataset import Dataset
    from suites.oversight.benchmarks.alfworld_progress import PROGRESS_FEATURE_NAMES
    from suites.oversight.refeature import refeature

    config = BuildConfig("alfworld", games=1, rollouts=1, checkpoints=2, first=2, every=2)
    rows, counts = branch_trajectory(target, target.games[0], "forgetful", 1, config)
    assert counts.checkpoints == 2 and rows
    per_checkpoint = {}
    for row in rows:
        per_checkpoint.setdefault(row["checkpoint"], set()).add(json.dumps(row["features"], sort_keys=True))
        assert set(PROGRESS_FEATURE_NAMES) <= set(row["features"])
    assert all(len(v) == 1 for v in per_checkpoint.values())  # same prefix, same features, whatever the action
    # recomputing them from the replayed base trajectory (prefix only) gives the same values
    # as a build records it: the target's notes name how its base agents seeded their streams
    provenance = {"benchmark": "alfworld", "config": {"benchmark": "alfworld", "target_options": {"games": 2}},
                  "target_notes": target.notes, "git_commit": ""}
    again = refeature(Dataset(provenance, rows))
    assert again.rows == rows
    assert again.provenance["feature_names"][-len(PROGRESS_FEATURE_NAMES):] == list(PROGRESS_FEATURE_NAMES)


def test_the_expert_as_shipped_changes_only_the_expert_branches(target):
    from suites.oversight.benchmarks import load_target

    fixed = target  # the default since issue 34
    shipped_target = load_target("alfworld", games=2, expert_as_shipped=True)
    assert fixed.make_env(fixed.games[0]).fix_expert_bookkeeping is True
    assert shipped_target.make_env(fixed.games[0]).fix_expert_bookkeeping is False
    assert "bookkeeping fixed" in fixed.notes["expert"] and "as shipped" in shipped_target.notes["expert"]
    target = shipped_target
    config = BuildConfig("alfworld", rollouts=1, checkpoints=2, first=3, every=6)
    shipped, _ = branch_trajectory(target, target.games[0], "forgetful", 1, config)
    repaired, counts = branch_trajectory(fixed, fixed.games[0], "forgetful", 1, config)
    assert counts.replay_mismatches == 0 and counts.branch_errors == 0
    # the base agents and reflect never consult the expert: same trajectories, same rows
    assert [r for r in repaired if r["action"] != "expert"] == [r for r in shipped if r["action"] != "expert"]
    assert len([r for r in repaired if r["action"] == "expert"]) == len([r for r in shipped if r["action"] == "expert"])
