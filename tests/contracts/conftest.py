"""Fixtures for the contracts tests: run one episode of a task with an agent, in process."""

from __future__ import annotations

from collections.abc import Callable

import pytest

from agentbed.agents.base import Agent
from agentbed.runner import Budget, EpisodeRecord, EpisodeSpec, run_episode
from environments.contracts.env import ContractEnv


def play_episode(task: str, agent: Agent, seed: int = 0, feedback: bool = False) -> EpisodeRecord:
    spec = EpisodeSpec("contracts", task, agent.name, seed, {"feedback": "on" if feedback else "off"})
    return run_episode(ContractEnv(task, feedback=feedback), agent, spec, budget=Budget(max_steps=80))


@pytest.fixture
def play() -> Callable[..., EpisodeRecord]:
    return play_episode
