"""A run directory for the export tests, laid out by the run store.

Besides the vault's scripted agents (the random one sends malformed actions), two test agents
cover what scripted agents do not: ``metered`` records token usage and a model reply the way
the chat agent does, and ``crashing`` raises, so its episodes end with status ``error``.
"""

from __future__ import annotations

import importlib
import importlib.util
from collections.abc import Callable, Sequence
from pathlib import Path
from types import ModuleType

import pytest

from agentbed.agents.base import Action, Agent, Usage
from agentbed.control import Controller, StepContext, Verdict, replace, stop
from agentbed.log import TrajectoryWriter
from agentbed.runner import EpisodeSpec, run_episode
from agentbed.store import RunStore
from agentbed.testing import require
from agentbed.tools import Tool, make_action
from environments.vault.agents import VaultNaive, VaultOracle, VaultRandom
from environments.vault.env import VaultEnv


class MeteredOracle(VaultOracle):
    name = "metered"
    model = "openai:gpt-test"

    def act(self, observation: str, tools: Sequence[Tool]) -> Action:
        action = super().act(observation, tools)
        self.calls = getattr(self, "calls", 0) + 1
        reply = {"type": "ai", "data": {"content": f"thought {self.calls}",
                                        "tool_calls": [{"id": f"call_{self.calls}", "name": "x", "args": {}}]}}
        return Action(action.text, usage=Usage(100, 10, 110), model_output={"message": reply})

    def describe(self) -> dict[str, str | None]:
        return {"name": self.name, "model": self.model}


class Crashing(Agent):
    name = "crashing"

    def act(self, observation: str, tools: Sequence[Tool]) -> Action:
        raise RuntimeError("agent fell over")


AGENTS: dict[str, Callable[[], Agent]] = {"oracle": VaultOracle, "naive": VaultNaive, "random": VaultRandom,
                                          "metered": MeteredOracle, "crashing": Crashing}
TASKS = ("open-fast", "open-after-chores")
SEEDS = (0, 1)


class StopAtSecondStep:
    """A controller that replaces the first action with a page read and stops the episode at the second."""

    def before_action(self, ctx: StepContext, proposed: Action) -> Verdict:
        if ctx.step == 0:
            return replace(Action(make_action("read_logs", page=1)), reason="read first")
        return stop(reason="enough")


class BinarySender(Agent):
    """Sends bytes that are not UTF-8, then gives up: the log keeps them as base64."""

    name = "binary"

    def act(self, observation: str, tools: Sequence[Tool]) -> Action:
        return Action(b'{"tool": "submit", "arguments": {"answer": "\xff\xfe"}}')


def write_run(root: Path, controllers: dict[str, Controller] | None = None,
              agents: dict[str, Callable[[], Agent]] | None = None) -> Path:
    controllers = controllers or {}
    agents = agents or AGENTS
    store = RunStore(root)
    store.create({"suite": "vault", "tasks": list(TASKS), "agents": list(agents), "seeds": list(SEEDS),
                  "options": {}, "command": "fixture", "executor": "serial"})
    for agent, make in agents.items():
        for task in TASKS:
            for seed in SEEDS:
                spec = EpisodeSpec("vault", task, agent, seed)
                record = run_episode(VaultEnv(task), make(), spec, controller=controllers.get(agent),
                                     writer=TrajectoryWriter(store.log_path(spec.episode_id)))
                record.log = str(store.log_path(spec.episode_id).relative_to(root))
                store.append(record)
    return root


@pytest.fixture
def run_dir(tmp_path: Path) -> Path:
    return write_run(tmp_path / "run")


@pytest.fixture
def inspect_log() -> ModuleType:
    """Inspect's log module (the [inspect] extra); missing it fails under CI=true."""
    require(importlib.util.find_spec("inspect_ai") is not None, "inspect-ai (the [inspect] extra)",
            "pip install -e '.[inspect]'")
    return importlib.import_module("inspect_ai.log")


@pytest.fixture
def make_run() -> Callable[..., Path]:
    return write_run


@pytest.fixture
def binary_sender() -> type[Agent]:
    return BinarySender


@pytest.fixture
def stop_at_second_step() -> Controller:
    return StopAtSecondStep()
