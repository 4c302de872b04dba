"""Scripted agents for the shell environment."""

from __future__ import annotations

import json
from collections.abc import Sequence
from typing import Any

from agentbed.agents.base import Action, Agent
from agentbed.tools import Tool, make_action


class ShellOracle(Agent):
    """Writes the file in one command, checks it in a second, then submits."""

    name = "oracle"

    def reset(self, *, seed: int, task: Any = None) -> None:
        self.step = 0

    def act(self, observation: str, tools: Sequence[Tool]) -> Action:
        self.step += 1
        if self.step == 1:
            obs = json.loads(observation)
            self.path, self.word = obs["path"], obs["word"]
            return Action(make_action("run", command=f"printf %s {self.word} > {self.path}"))
        if self.step == 2:
            return Action(make_action("run", command=f"cat {self.path}"))
        return Action(make_action("submit"))
