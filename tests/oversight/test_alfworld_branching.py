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
    from controllers.oversight.benchmarks import load_target

    return load_target("alfworld", games=2)


def test_alfworld_prefix_replay_is_verified_and_deterministic(target):
    config = BuildConfig("alfworld", rollouts=2, checkpoints=1, first=5)
    rows, counts = branch_trajectory(target, target.games[0], "noisy", 0, config)
    again, _ = branch_trajectory(target, target.games[0], "noisy", 0, config)
    assert counts.replay_mismatches == 0 and counts.branch_errors == 0
    assert counts.replays == counts.branches == 6
    assert {r["action"] for r in rows} == {"continue", "expert", "reflect"}
    assert rows == again  # seeded global random: the handcoded expert repeats itself
