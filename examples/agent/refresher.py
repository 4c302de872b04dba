"""An agent of your own on a built-in suite: the vault, with a token fetched again before use.

    agentbed run vault --agent naive,examples/agent/refresher.py:Refresher --seeds 3 --out runs/mine

Like the suite's ``naive`` agent it fetches a token first and does the chores, but it fetches a
fresh token before opening the vault whenever chores came in between, so it opens in time. An
agent is a class with ``act(observation, tools) -> Action`` (and ``reset`` for per-episode
state); docs/extending.md says more, and ``--model provider:model`` runs a chat model instead.
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from typing import Any

from agentbed.agents.base import Action, Agent
from agentbed.tools import Tool, make_action


class Refresher(Agent):
    name = "refresher"

    def reset(self, *, seed: int, task: Any = None) -> None:
        self.plan: list[str] = []
        self.token = ""

    def act(self, observation: str, tools: Sequence[Tool]) -> Action:
        seen = json.loads(observation)
        if "chores" in seen:  # the request: token first (as the naive agent), chores, a fresh token
            self.plan = [make_action("read_logs", page=p) for p in range(1, seen["chores"] + 1)]
            if seen["chores"]:
                self.plan.append(make_action("get_token"))
            return Action(make_action("get_token"))
        self.token = seen.get("access_token", self.token)
        if self.plan:
            return Action(self.plan.pop(0))
        return Action(make_action("open_vault", token=self.token))
