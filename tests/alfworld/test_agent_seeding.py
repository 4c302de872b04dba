"""Issue 54 item 1 for the base trajectories: a scripted agent's random streams (its flaws and its
stated-risk noise) are seeded from the game, the agent and the seeds, by a stable hash, so each
game draws its own numbers: the flaw and noise rates over many games are the stated ones and the
games are independent. The legacy seeding (kept only to rebuild older datasets) gave every game
the same numbers: the tests show that too.

The observation is synthetic (one room, one goal), the same for every game, so any difference
between games comes from their streams alone."""

from __future__ import annotations

import math
import os
import subprocess
import sys

import pytest

from agentbed.env import TaskSpec
from environments.alfworld import agents
from environments.alfworld.agents import game_stream, make_base_agent

GAMES = [f"s9-{i:03d}-pick" for i in range(1500)]
INTRO = ("-= Welcome to TextWorld, ALFRED! =-\n\nYou are in the middle of a room. Looking quickly around you, "
         "you see a cabinet 1, a countertop 1, a fridge 1, a shelf 1, and a sinkbasin 1.\n\n"
         "Your task is to: put some mug on shelf.\n\nAdmissible commands:\n- go to cabinet 1\n"
         "- go to countertop 1\n- go to fridge 1\n- go to shelf 1\n- go to sinkbasin 1\n- inventory\n- look")
PLAN = "the plan's command"  # what the plan would send: never an admissible command, so a slip shows


@pytest.fixture
def planless(monkeypatch):
    """The plan replaced by a command that is never admissible: a command from the listing is a
    noise slip, exactly."""
    monkeypatch.setattr(agents, "choose_command", lambda *args: PLAN)


def _first_step(flaw: str, game: str, seed: int = 0, seeding: str = "game", **params):
    agent = make_base_agent(flaw, seed, seeding=seeding, **params)
    agent.reset(seed=seed, task=TaskSpec(game))
    action = agent.act(INTRO, ())
    return agent, action


def _within_binomial(hits: int, n: int, p: float, z: float = 4.0) -> bool:
    """``hits`` of ``n`` is within ``z`` standard errors of rate ``p`` (z = 4: a false alarm about
    once in 16,000 fixed draws; the draws here are fixed, so the test cannot flake)."""
    return abs(hits - n * p) <= z * math.sqrt(n * p * (1 - p))


def _slipped(action) -> bool:
    return PLAN not in action.text


def test_the_same_game_agent_and_seed_give_the_same_streams():
    a, b = make_base_agent("mixed", 3), make_base_agent("mixed", 3)
    for agent in (a, b):
        agent.reset(seed=3, task=TaskSpec("017-heat"))
    assert [a.rng.random() for _ in range(50)] == [b.rng.random() for _ in range(50)]
    assert [a.risk_rng.random() for _ in range(50)] == [b.risk_rng.random() for _ in range(50)]
    # any other game, agent or seed: another stream
    firsts = set()
    for flaw, seed, game in [("mixed", 3, "017-heat"), ("mixed", 3, "018-cool"), ("noisy", 3, "017-heat"),
                             ("mixed", 4, "017-heat"), ("mixed", 3, "s4-017-heat")]:
        agent = make_base_agent(flaw, seed)
        agent.reset(seed=seed, task=TaskSpec(game))
        firsts.add(agent.rng.random())
    assert len(firsts) == 5


def test_the_streams_hash_is_stable_across_processes():
    """A SHA-256 of the key, not Python's ``hash()``, which is salted per process."""
    code = "from environments.alfworld.agents import game_stream; print(game_stream('k', '017-heat', 1).random())"
    env = {**os.environ, "PYTHONHASHSEED": "random"}
    outs = {subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True, env=env,
                           cwd=os.getcwd()).stdout.strip() for _ in range(2)}
    assert outs == {repr(game_stream("k", "017-heat", 1).random())}


def test_the_noise_flaw_slips_at_its_rate_independently_across_games(planless):
    rate = 0.5
    slips = [_slipped(_first_step("noisy", g, noise=rate)[1]) for g in GAMES]
    assert _within_binomial(sum(slips), len(slips), rate)
    # independent across games: two consecutive games slip alike half the time, not always
    alike = sum(a == b for a, b in zip(slips, slips[1:], strict=False))
    assert _within_binomial(alike, len(slips) - 1, 0.5)
    # the legacy seeding: the same draw in every game
    assert len({_slipped(_first_step("noisy", g, seeding="legacy", noise=rate)[1]) for g in GAMES[:100]}) == 1


def test_the_forget_flaw_fires_at_its_stated_rate():
    rate = agents.FLAWS["forgetful"].forget  # 0.06, the agent as the datasets use it
    forgot = [_first_step("forgetful", g)[0].forgot for g in GAMES]
    assert _within_binomial(sum(forgot), len(forgot), rate)
    pairs = sum(a and b for a, b in zip(forgot, forgot[1:], strict=False))
    assert _within_binomial(pairs, len(forgot) - 1, rate**2)
    assert len({_first_step("forgetful", g, seeding="legacy")[0].forgot for g in GAMES[:100]}) == 1


def test_the_stated_risk_noise_has_its_spread_and_is_independent_across_games():
    risks = [_first_step("mixed", g)[1].risk for g in GAMES]
    n = len(risks)
    mean = sum(risks) / n
    sd = math.sqrt(sum((r - mean) ** 2 for r in risks) / (n - 1))
    # the noise is gauss(0, 0.03) on the same belief in every game (clipped at 0: far below)
    assert abs(sd - 0.03) < 4 * 0.03 / math.sqrt(2 * (n - 1))
    lag = sum((a - mean) * (b - mean) for a, b in zip(risks, risks[1:], strict=False)) / ((n - 1) * sd**2)
    assert abs(lag) < 4 / math.sqrt(n)
    assert len({_first_step("mixed", g, seeding="legacy")[1].risk for g in GAMES[:100]}) == 1


def test_a_seeding_scheme_is_checked():
    with pytest.raises(ValueError, match="seeding"):
        make_base_agent("noisy", 0, seeding="by-hash")
