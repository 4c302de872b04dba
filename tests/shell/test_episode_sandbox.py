"""One sandbox per episode through the engine: reused across steps, released however the episode ends."""

import json

import pytest

from agentbed.agents.base import Action, Agent
from agentbed.runner import EpisodeSpec, run_episode
from agentbed.sandbox import docker_ready, local_ready
from agentbed.testing import require
from agentbed.tools import make_action
from environments.shell.agents import ShellOracle
from environments.shell.env import ShellEnv

SPEC = EpisodeSpec("shell", "write-file", "x", 0)


@pytest.fixture(params=["local", "docker"])
def backend(request):
    missing = local_ready() if request.param == "local" else docker_ready()
    require(missing is None, f"the {request.param} sandbox", missing or "")
    return request.param


class _Recorder(Agent):
    """Runs a few commands, remembering the sandbox each one ran in; can fail on purpose."""

    name = "recorder"

    def __init__(self, env, fail_at=None):
        self.env, self.fail_at, self.sandboxes, self.outputs = env, fail_at, [], []

    def act(self, observation, tools):
        step = len(self.sandboxes)
        if step and observation.startswith("{"):
            self.outputs.append(json.loads(observation).get("stdout"))
        if step == self.fail_at:
            raise RuntimeError("agent crashed mid-episode")
        if step >= 1:
            self.sandboxes.append(self.env.episode_sandbox.sandbox)
        else:
            self.sandboxes.append(None)
        commands = ["echo one > state.txt", "cat state.txt", "echo $HOSTNAME; cat state.txt"]
        if step < len(commands):
            return Action(make_action("run", command=commands[step]))
        return Action(make_action("submit"))


def test_one_sandbox_is_reused_across_steps_and_released_at_the_end(backend):
    env = ShellEnv(backend=backend)
    agent = _Recorder(env)
    record = run_episode(env, agent, SPEC)
    assert record.status == "ok"
    used = [s for s in agent.sandboxes if s is not None]
    assert used and all(s is used[0] for s in used), "every step ran in the same sandbox"
    assert agent.outputs[1].strip() == "one"  # the file written in step 1 was still there in step 2
    assert used[0].closed, "the runner released the sandbox when the episode ended"


def test_sandbox_is_released_when_the_episode_errors(backend):
    env = ShellEnv(backend=backend)
    agent = _Recorder(env, fail_at=2)
    record = run_episode(env, agent, SPEC)
    assert record.status == "error" and "crashed mid-episode" in record.error
    assert agent.sandboxes[1].closed


def test_the_next_episode_gets_a_fresh_sandbox(backend):
    env = ShellEnv(backend=backend)
    assert run_episode(env, ShellOracle(), SPEC).success
    first = env.episode_sandbox
    leftover = run_episode(env, _Recorder(env), EpisodeSpec("shell", "write-file", "x", 1))
    assert leftover.status == "ok" and first.started is False
