"""Issue 54 item 1: a branch's random streams are seeded from the game, the base agent, the
trajectory, the checkpoint and the rollout, so the noisy expert slips at its stated rate,
independently across games and agents. The legacy scheme (kept to rebuild older datasets)
gave every game the same slip schedule per (step, rollout): the test shows that too."""

import importlib.util

import pytest

from agentbed.testing import require
from controllers.oversight.dataset import (
    BRANCH_SEEDING,
    LEGACY_SEEDING,
    BuildConfig,
    branch_agent,
    branch_seed,
)

pytestmark = pytest.mark.alfworld

NOISE, BUDGET, GAMES = 0.06, 10, 300
OBSERVATION = "You are in the middle of a room.\n\nAdmissible commands:\n- look\n- go to fridge 1\n- go to shelf 1"


@pytest.fixture(scope="module")
def expert_target():
    require(importlib.util.find_spec("alfworld") is not None, "the alfworld package",
            "pip install -e '.[alfworld]' (compiles for about 2 minutes)")
    from suites.oversight.benchmarks import load_target

    return load_target("alfworld", games=1, expert_noise=NOISE, expert_budget=BUDGET)


def _schedule(target, seeding, game, flaw, step=4, rollout=0):
    """Which of the expert's first BUDGET steps slip, in the branch the builder would start (the
    real intervention factory and seeding path; the environment is an unloaded AlfworldEnv, whose
    expert has no command, so each step is either the expert's 'look' or a slip)."""
    from environments.alfworld.agents import make_base_agent
    from environments.alfworld.env import AlfworldEnv

    env = AlfworldEnv()
    agent = branch_agent(target, env, make_base_agent("mixed", 0), "expert", rollout,
                         branch_seed(seeding, game, flaw, 0, step, rollout), seeding)
    return tuple(bool(agent.act(OBSERVATION, ()).meta["slipped"]) for _ in range(BUDGET))


def test_new_builds_seed_branches_per_game_and_agent():
    assert BuildConfig("alfworld").seeding == BRANCH_SEEDING
    seeds = {branch_seed(BRANCH_SEEDING, f"{g:03d}-simple", f, 0, 4, 0) for g in range(50) for f in ("noisy", "mixed")}
    assert len(seeds) == 100
    assert len({branch_seed(LEGACY_SEEDING, f"{g:03d}-simple", f, 0, 4, 0) for g in range(50)
                for f in ("noisy", "mixed")}) == 1


def test_the_expert_slips_at_its_rate_independently_across_games(expert_target):
    schedules = [_schedule(expert_target, BRANCH_SEEDING, f"{g:03d}-simple", "mixed") for g in range(GAMES)]
    slips = sum(sum(s) for s in schedules)
    # 3000 draws at 0.06: the rate within about 4 standard errors (0.0043)
    assert abs(slips / (GAMES * BUDGET) - NOISE) < 0.018
    # independent across games: at every step of the budget, about NOISE of the games slip (the
    # legacy scheme gives 0 or 1 here), and the schedules are many, not one
    for k in range(BUDGET):
        share = sum(s[k] for s in schedules) / GAMES
        assert 0.01 < share < 0.13, (k, share)
    assert len(set(schedules)) > 20  # one slip at any of 10 steps, or two, or none: many patterns
    # two games' slips are uncorrelated: slipping at step k in one game says nothing about the next
    both = sum(a[k] and b[k] for a, b in zip(schedules, schedules[1:], strict=False) for k in range(BUDGET))
    assert both / ((GAMES - 1) * BUDGET) < 3 * NOISE**2 + 0.003
    # and across base agents on the same game
    other = [_schedule(expert_target, BRANCH_SEEDING, f"{g:03d}-simple", "looping") for g in range(GAMES)]
    assert sum(a != b for a, b in zip(schedules, other, strict=True)) > 0.2 * GAMES


def test_the_legacy_scheme_shares_one_schedule_across_games(expert_target):
    """What issue 54 found, kept for rebuilding older datasets: the same slips in every game."""
    schedules = {_schedule(expert_target, LEGACY_SEEDING, f"{g:03d}-simple", f) for g in range(20)
                 for f in ("mixed", "looping")}
    assert len(schedules) == 1


def test_committed_datasets_rebuild_with_the_scheme_they_were_built_with():
    """A dataset from before issue 54 recorded neither a seeding scheme nor a reflect mode: it is
    rebuilt with the legacy ones (the demo checks those rows byte for byte); a new build records both."""
    import argparse

    from suites.oversight.build import recorded_config
    from suites.oversight.build_cli import alfworld_options

    old = {"config": {"benchmark": "alfworld", "games": 2, "target_options": {"games_seed": 4}}}
    config = recorded_config(old, games=1)
    assert config.seeding == LEGACY_SEEDING and config.games == 1
    assert config.target_options == {"base_seeding": "legacy", "reflect": "mechanism+cut", "games_seed": 4}
    # branches seeded per game, base agents not (every committed dataset before the base agents' fix)
    branch = {"config": {"benchmark": "alfworld", "seeding": BRANCH_SEEDING, "target_options": {"reflect": "mechanism"}}}
    assert recorded_config(branch).target_options == {"base_seeding": "legacy", "reflect": "mechanism"}
    new = {"config": {"benchmark": "alfworld", "seeding": BRANCH_SEEDING,
                      "target_options": {"reflect": "mechanism", "base_seeding": "game"}}}
    assert recorded_config(new).target_options == {"base_seeding": "game", "reflect": "mechanism"}
    # a build that left the option to the target's default records it in the target's notes
    noted = {**branch, "target_notes": {"base_seeding": "game"}}
    assert recorded_config(noted).target_options["base_seeding"] == "game"
    flags = argparse.Namespace(games=8, skip_games=0, games_seed=0, expert_as_shipped=False, expert_step_cost=None,
                               regime="costly", expert_noise=None, expert_budget=None, interventions="",
                               reflect="mechanism", base_seeding="game")
    # every setting recorded, zero values included: this expert never slips and says so
    assert alfworld_options(flags) == {"games": 8, "regime": "costly", "expert_noise": 0.0, "expert_budget": 10,
                                       "expert_step_cost": 0.0, "reflect": "mechanism", "base_seeding": "game"}


def test_the_base_agents_streams_are_seeded_by_the_game_unless_recorded_otherwise(expert_target):
    """The target's base agents (what the builder and refeature reset on each game) draw their own
    streams per game by default; ``base_seeding="legacy"`` (older datasets) the same in every game."""
    from agentbed.env import TaskSpec
    from suites.oversight.benchmarks import load_target

    def firsts(target):
        draws = set()
        for game in ("000-simple", "001-light", "s4-000-simple"):
            agent = target.base_agents["mixed"](0)
            agent.reset(seed=0, task=TaskSpec(game))
            draws.add((agent.rng.random(), agent.risk_rng.random()))
        return draws

    assert expert_target.notes["base_seeding"] == "game" and len(firsts(expert_target)) == 3
    legacy = load_target("alfworld", games=1, base_seeding="legacy")
    assert legacy.notes["base_seeding"] == "legacy" and len(firsts(legacy)) == 1
