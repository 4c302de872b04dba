"""One sandbox per episode: an environment with a shell tool, run by the engine's runner."""

from __future__ import annotations

import json
from typing import Any

import pytest

from agentbed.agents.base import Action, Agent
from agentbed.env import TaskSpec, ToolEnv, ToolResult
from agentbed.runner import EpisodeSpec, run_episode
from agentbed.sandbox import EpisodeSandbox
from agentbed.tools import make_action, tool


class ShellEnv(ToolEnv):
    """A minimal environment offering a shell; the sandbox lives outside ``self.state``."""

    tools = (tool("shell", "Run a shell command in the sandbox.", cost=1.0, command={"type": "string"}),
             tool("submit", "Finish.", cost=0.0))
    can_snapshot = False
    backend = "local"

    def __init__(self, task: Any = None, render_mode: str | None = None) -> None:
        super().__init__(task, render_mode)
        self.sandboxes = EpisodeSandbox(self.backend)

    @classmethod
    def task_list(cls) -> list[TaskSpec]:
        return [TaskSpec("shell", {}, "Run commands.")]

    def setup(self, rng: Any) -> str:
        self.sandboxes.fresh()
        self.state = {"commands": 0}
        return "ready"

    def tool_shell(self, command: str) -> ToolResult:
        self.state["commands"] += 1
        result = self.sandboxes.sandbox.exec(command, timeout=10)
        # Wall-clock duration stays out of the observation: it would break determinism.
        return ToolResult(json.dumps({"status": result.status, "exit_code": result.exit_code,
                                      "stdout": result.stdout.decode(errors="replace")}))

    def tool_submit(self) -> ToolResult:
        return ToolResult("done", reward=1.0, terminated=True)

    def close(self) -> None:
        self.sandboxes.close()
        super().close()


class ScriptAgent(Agent):
    name = "script"

    def __init__(self, actions: list[str | Exception]) -> None:
        self.actions = list(actions)

    def act(self, observation: str, tools: Any) -> Action:
        step = self.actions.pop(0)
        if isinstance(step, Exception):
            raise step
        return Action(step)


@pytest.fixture
def shell_env(backend):
    ShellEnv.backend = backend
    env = ShellEnv()
    yield env
    env.close()


def test_one_sandbox_per_episode(shell_env, tmp_path):
    spec = EpisodeSpec("sandbox-test", "shell", "script", seed=0)
    agent = ScriptAgent([make_action("shell", command="echo kept > f; cat f"),
                         make_action("shell", command="cat f"), make_action("submit")])
    record = run_episode(shell_env, agent, spec)
    assert record.status == "ok" and record.success
    first = shell_env.sandboxes.sandbox
    assert first.exec(["cat", "f"]).stdout == b"kept\n"  # reused across the steps

    agent = ScriptAgent([make_action("shell", command="cat f"), make_action("submit")])
    run_episode(shell_env, agent, spec)
    assert first.closed  # the next episode's reset ended it
    assert shell_env.sandboxes.sandbox.exec(["cat", "f"]).status == "nonzero"  # fresh workdir


def test_sandbox_is_cleaned_when_the_episode_errors(shell_env):
    spec = EpisodeSpec("sandbox-test", "shell", "script", seed=0)
    agent = ScriptAgent([make_action("shell", command="sleep 300 & echo started"), RuntimeError("agent crashed")])
    record = run_episode(shell_env, agent, spec)
    assert record.status == "error"
    sandbox = shell_env.sandboxes.sandbox
    shell_env.close()
    assert sandbox.closed


def test_hostile_arguments_are_observations(shell_env):
    spec = EpisodeSpec("sandbox-test", "shell", "script", seed=0)
    agent = ScriptAgent([make_action("shell", command="yes"), make_action("shell", command="\x00\xff" * 1000),
                         make_action("submit")])
    record = run_episode(shell_env, agent, spec)
    assert record.status == "ok"


def test_environment_holding_a_sandbox_refuses_deep_copy():
    import copy

    with pytest.raises(TypeError, match="can_snapshot"):
        copy.deepcopy(EpisodeSandbox("local"))
