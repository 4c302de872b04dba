"""The ALFWorld environment: gymnasium contract, determinism, bad input, step cap, exact replay."""

from __future__ import annotations

import json

import gymnasium
import pytest
from gymnasium.utils.env_checker import check_env

import environments.alfworld  # noqa: F401 - registers agentbed/alfworld-v0
from agentbed.agents.base import Action, Agent
from agentbed.branch import ForkPoint, Prefix, PrefixMismatch
from agentbed.log import TrajectoryWriter
from agentbed.runner import Budget, EpisodeSpec, run_episode
from agentbed.tools import make_action
from environments.alfworld.agents import make_base_agent
from environments.alfworld.env import NOTHING_HAPPENS, AlfworldEnv, parse_observation

TASK = "003-heat"


def test_passes_gymnasium_env_checker() -> None:
    env = gymnasium.make("agentbed/alfworld-v0", disable_env_checker=True)
    check_env(env.unwrapped, skip_render_check=True)


def test_first_observation_states_goal_and_admissible_commands() -> None:
    env = AlfworldEnv(TASK)
    observation, info = env.reset(seed=0)
    text, commands = parse_observation(observation)
    assert "Your task is to: " in text and info["goal"] in text
    assert "look" in commands and any(c.startswith("go to ") for c in commands)
    assert info["task_type"] == "pick_heat_then_place_in_recep" and info["split"] in ("train", "heldout")


def _run(tmp_path, name: str, flaw: str = "mixed", seed: int = 3) -> bytes:
    env = AlfworldEnv(TASK)
    log = tmp_path / f"{name}.jsonl"
    run_episode(env, make_base_agent(flaw, seed), EpisodeSpec("alfworld", TASK, flaw, seed),
                budget=Budget(50), writer=TrajectoryWriter(log))
    return log.read_bytes()


@pytest.fixture(scope="module")
def mixed_seed3(tmp_path_factory) -> bytes:
    """The trajectory bytes of flaw "mixed", seed 3, run once for the module: the determinism test
    runs it a second time and compares, the hash-seed test compares its subprocesses' runs with it."""
    return _run(tmp_path_factory.mktemp("mixed-seed3"), "a")


def test_same_seed_gives_the_same_trajectory_bytes(tmp_path, mixed_seed3) -> None:
    assert mixed_seed3 == _run(tmp_path, "b")
    assert _run(tmp_path, "c", seed=4) != mixed_seed3


@pytest.mark.parametrize("action", [
    "{not json",
    b"\xff\xfe binary",
    make_action("act", command="x" * 10_000),
    make_action("act", command=""),
    make_action("act", command="\x00"),
    make_action("act", command="fly to the moon"),
    make_action("act"),
    make_action("teleport", where="kitchen"),
])
def test_bad_actions_are_observations_not_crashes(action) -> None:
    env = AlfworldEnv(TASK)
    first, _ = env.reset(seed=0)
    observation, reward, terminated, truncated, info = env.step(action)
    assert isinstance(observation, str) and reward == 0.0 and not terminated
    if info.get("tool") == "act":
        assert observation.startswith(NOTHING_HAPPENS)
        assert parse_observation(observation)[1] == parse_observation(first)[1]  # nothing changed
    else:
        assert json.loads(observation)["error"]
    observation, *_ = env.step(make_action("look"))  # the game goes on
    assert "Admissible commands" in observation


class _Idle(Agent):
    name = "idle"

    def act(self, observation, tools):
        return Action(make_action("look"))


def test_episode_is_capped_at_fifty_steps() -> None:
    env = AlfworldEnv(TASK)
    record = run_episode(env, _Idle(), EpisodeSpec("alfworld", TASK, "idle", 0), budget=Budget(500))
    assert record.steps == 50 and record.status == "budget" and not record.success


def test_textgen_acceleration_leaves_every_observation_unchanged() -> None:
    from environments.alfworld.tw import set_textgen_acceleration

    def trace() -> list[str]:
        env = AlfworldEnv(TASK)
        agent = make_base_agent("noisy", 1)
        agent.reset(seed=1)
        observation, _ = env.reset(seed=1)
        out = [observation]
        for _ in range(12):
            observation, *_ = env.step(agent.act(observation, env.tool_specs()).text)
            out.append(observation)
        return out

    cached = trace()
    set_textgen_acceleration(False)
    try:
        uncached = trace()
    finally:
        set_textgen_acceleration(True)
    assert cached == uncached


def _prefix(steps: int, seed: int = 5) -> Prefix:
    env = AlfworldEnv(TASK)
    agent = make_base_agent("mixed", seed)
    agent.reset(seed=seed)
    observation, _ = env.reset(seed=seed)
    actions, observations = [], [observation]
    for _ in range(steps):
        action = agent.act(observation, env.tool_specs()).text
        observation, *_ = env.step(action)
        actions.append(action)
        observations.append(observation)
    return Prefix(task=TASK, seed=seed, actions=actions, observations=observations)


def test_verified_replay_reconstructs_the_state_and_detects_mismatches() -> None:
    prefix = _prefix(10)
    point = ForkPoint(lambda: AlfworldEnv(TASK), prefix, at_step=8, method="auto")
    env = point.materialize()
    assert env.last_observation == prefix.observations[8]
    # the next step from the reconstructed state matches the recorded one
    observation, *_ = env.step(prefix.actions[8])
    assert observation == prefix.observations[9]
    # the expert's plan does not depend on what else drew from Python's global random
    import random

    unseeded = ForkPoint(lambda: AlfworldEnv(TASK), prefix, at_step=8, seed_global_random=False)
    plans = []
    for noise in (1, 2):
        random.seed(noise)
        plans.append(unseeded.materialize().expert_command())
    assert plans[0] == plans[1] == point.materialize().expert_command()
    tampered = Prefix(TASK, prefix.seed, prefix.actions, prefix.observations[:5] + ["bogus"] + prefix.observations[6:])
    with pytest.raises(PrefixMismatch):
        ForkPoint(lambda: AlfworldEnv(TASK), tampered, at_step=8).materialize()


def test_snapshot_is_refused_so_branching_replays() -> None:
    from agentbed.env import SnapshotUnsupported

    env = AlfworldEnv(TASK)
    env.reset(seed=0)
    with pytest.raises(SnapshotUnsupported):
        env.snapshot()


def test_trajectory_bytes_do_not_depend_on_the_process_hash_seed(tmp_path, mixed_seed3) -> None:
    import os
    import subprocess
    import sys

    script = (
        "import sys\n"
        "from agentbed.log import TrajectoryWriter\n"
        "from agentbed.runner import Budget, EpisodeSpec, run_episode\n"
        "from environments.alfworld.agents import make_base_agent\n"
        "from environments.alfworld.env import AlfworldEnv\n"
        f"run_episode(AlfworldEnv({TASK!r}), make_base_agent('mixed', 3), EpisodeSpec('alfworld', {TASK!r}, 'mixed', 3),"
        " budget=Budget(50), writer=TrajectoryWriter(sys.argv[1]))\n"
    )
    logs = []
    for hash_seed in ("1", "2"):
        log = tmp_path / f"h{hash_seed}.jsonl"
        subprocess.run([sys.executable, "-c", script, str(log)], check=True,
                       env={**os.environ, "PYTHONHASHSEED": hash_seed})
        logs.append(log.read_bytes())
    assert logs[0] == logs[1] == mixed_seed3  # this process's run of the same episode
