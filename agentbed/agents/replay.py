"""The replay agent: re-feeds the actions (and model outputs) recorded in a trajectory log."""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path
from typing import Any

from agentbed.agents.base import Action, Agent, Usage
from agentbed.log import decode_action, read_log
from agentbed.tools import Tool


class ReplayExhausted(RuntimeError):
    """The environment asked for more actions than the log recorded."""


class ReplayAgent(Agent):
    """Returns the recorded actions in order, with their recorded usage, model output and risk,
    so a re-execution's log can be compared with the original byte for byte."""

    def __init__(self, steps: Sequence[dict[str, Any]], described: dict[str, Any] | None = None) -> None:
        """``steps``: the log's step records, and its control records (an action an overseer
        stopped the episode at, which was proposed but never executed), in the log's order."""
        self.steps = list(steps)
        self.described = described or {"name": "replay", "model": None}
        self.name = str(self.described.get("name", "replay"))
        self.position = 0

    @classmethod
    def from_log(cls, path: str | Path) -> ReplayAgent:
        records = read_log(path)
        return cls([r for r in records if r.get("type") in ("step", "control")], records[0].get("agent"))

    def reset(self, *, seed: int, task: Any = None) -> None:
        self.position = 0

    def act(self, observation: str, tools: Sequence[Tool]) -> Action:
        if self.position >= len(self.steps):
            raise ReplayExhausted(f"the log records {len(self.steps)} actions; step {self.position + 1} was requested")
        step = self.steps[self.position]
        self.position += 1
        if step.get("type") == "control":  # proposed, then stopped by an overseer (a person's reject)
            return Action(decode_action(step["proposed"]))
        usage = Usage(**step["usage"]) if step.get("usage") else None
        control = step.get("control") or {}
        # what the agent proposed; an overseer's recorded decision replaced it with step["action"]
        text = control["proposed"] if control.get("kind") == "replace" and "proposed" in control \
            else step["action"]
        return Action(decode_action(text), usage=usage, model_output=step.get("model_output"),
                      risk=step.get("risk"), meta=dict(step.get("meta") or {}))

    def describe(self) -> dict[str, Any]:
        return dict(self.described)
