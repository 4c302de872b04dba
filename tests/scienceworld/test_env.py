"""ScienceWorld through the real simulator (a JVM)."""

import gymnasium
import pytest
from gymnasium.utils.env_checker import check_env

import environments.scienceworld  # noqa: F401
from agentbed.branch import ForkPoint, Prefix
from agentbed.runner import Budget, EpisodeSpec, run_episode
from agentbed.tools import make_action
from environments.scienceworld.agents import GoldAgent
from environments.scienceworld.env import ScienceWorldToolEnv, gold_path

pytestmark = pytest.mark.java


def test_gold_path_wins_and_a_wrong_focus_fails():
    env = ScienceWorldToolEnv("find-animal:0")
    spec = EpisodeSpec("scienceworld", "find-animal:0", "gold", 0)
    record = run_episode(env, GoldAgent(), spec, budget=Budget(max_steps=50))
    assert record.status == "ok" and record.success and record.metrics["score"] == 100
    obs, _ = env.reset(seed=0)
    assert obs.startswith("Task: Your task is to find")
    obs, reward, terminated, _, info = env.step(make_action("act", command="focus on air"))
    assert terminated and info["score"] < 0
    assert env.outcome(terminated, reward).labels == ["FAILED_TASK"]
    env.close()


def test_bad_agent_input_is_an_observation():
    env = ScienceWorldToolEnv("find-plant:0")
    env.reset(seed=0)
    obs, *_ = env.step(make_action("act", command="x" * 10_000))
    assert "invalid_arguments" in obs
    obs, *_ = env.step(b"\xff\xfe")
    assert "invalid_utf8" in obs
    obs, reward, terminated, *_ = env.step(make_action("act", command="dance wildly"))
    assert obs == "No known action matches that input." and not terminated and reward == 0
    env.close()


def test_registered_env_passes_gymnasium_checker():
    env = gymnasium.make("agentbed/scienceworld-v0")
    check_env(env.unwrapped, skip_render_check=True)
    env.close()


def test_verified_replay_reproduces_a_deterministic_task():
    env = ScienceWorldToolEnv("power-component:0")
    first, _ = env.reset(seed=0)
    actions = [make_action("act", command=c) for c in gold_path("power-component", 0)[:4]]
    observations = [first] + [env.step(a)[0] for a in actions]
    point = ForkPoint(lambda: ScienceWorldToolEnv("power-component:0"), Prefix("power-component:0", 0, actions,
                                                                                  observations), 4, "replay")
    replayed = point.materialize()
    assert replayed.last_observation == observations[-1]
    env.close()
    replayed.close()
