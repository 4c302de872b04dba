"""Fault injection: an agent wrapper that damages a share of its actions on purpose.

Used to show that a metric, a grader or the regression gate notices a worse agent: with
probability ``rate`` per step (from a seeded RNG) the action text is cut to half its length,
which the environment receives as a malformed or wrong call.
"""

from __future__ import annotations

import random
from collections.abc import Sequence
from typing import Any

from agentbed.agents.base import Action, Agent
from agentbed.tools import Tool


class FaultyAgent(Agent):
    def __init__(self, inner: Agent, rate: float, seed: int) -> None:
        if not 0.0 <= rate <= 1.0:
            raise ValueError(f"fault rate must be in [0, 1], not {rate}")
        self.inner, self.rate = inner, rate
        self.name, self.model = inner.name, inner.model
        self.rng = random.Random(seed)

    def reset(self, *, seed: int, task: Any = None) -> None:
        self.rng = random.Random(f"faults/{seed}")
        self.inner.reset(seed=seed, task=task)

    def act(self, observation: str, tools: Sequence[Tool]) -> Action:
        action = self.inner.act(observation, tools)
        if self.rng.random() < self.rate:
            text = action.text
            action.text = text[: len(text) // 2]
            action.meta = {**action.meta, "fault": "truncated"}
        return action

    def describe(self) -> dict[str, Any]:
        return {**self.inner.describe(), "faults": self.rate}
