"""Scripted vault agents: an oracle, a naive one that uses a stale token, and a random one."""

from __future__ import annotations

import hashlib
import json
import random
from collections.abc import Sequence
from typing import Any

from agentbed.agents.base import Action, Agent
from agentbed.tools import Tool, make_action


class VaultOracle(Agent):
    """Does the chores first, then fetches a fresh token and uses it at once.

    It plans from the task it is given at reset, so it can also take over mid-episode (as an
    expert the controller hands over to): chores already done are simply done again.
    """

    name = "oracle"

    def reset(self, *, seed: int, task: object = None) -> None:
        params = getattr(task, "params", {}) or {}
        self.plan: list[str] = [make_action("read_logs", page=p) for p in range(1, params.get("chores", 0) + 1)]
        self.plan.append(make_action("get_token"))

    def act(self, observation: str, tools: Sequence[Tool]) -> Action:
        obs = json.loads(observation)
        if obs.get("task") == "echo":
            return Action(make_action("submit", answer=obs["word"]), risk=0.0)
        if obs.get("task") == "proof-of-work":
            return Action(make_action("prove", nonce=_search_nonce(obs["challenge"], obs["difficulty"])), risk=0.0)
        if self.plan:
            return Action(self.plan.pop(0), risk=0.1)
        return Action(make_action("open_vault", token=obs["access_token"]), risk=0.1)


def _search_nonce(challenge: str, difficulty: int) -> str:
    target = "0" * difficulty
    nonce = 0
    while not hashlib.sha256(f"{challenge}{nonce}".encode()).hexdigest().startswith(target):
        nonce += 1
    return str(nonce)


class VaultNaive(Agent):
    """Fetches the token first, does the chores, then uses the (by then stale) token."""

    name = "naive"

    def reset(self, *, seed: int, task: object = None) -> None:
        self.token: str | None = None
        self.chores = 0
        self.done = 0
        self.first = True

    def act(self, observation: str, tools: Sequence[Tool]) -> Action:
        obs = json.loads(observation)
        if self.first:
            self.first = False
            if obs.get("task") == "echo":
                return Action(make_action("submit", answer=obs["word"].upper()), risk=0.5)
            self.chores = obs["chores"]
            return Action(make_action("get_token"), risk=0.5)
        if self.token is None:
            self.token = obs.get("access_token", "")
        if self.done < self.chores:
            self.done += 1
            return Action(make_action("read_logs", page=self.done), risk=0.5)
        return Action(make_action("open_vault", token=self.token), risk=0.5)


class VaultRandom(Agent):
    """Random tool calls, sometimes malformed: exercises error observations."""

    name = "random"

    def reset(self, *, seed: int, task: object = None) -> None:
        self.rng = random.Random(seed)

    def act(self, observation: str, tools: Sequence[Tool]) -> Action:
        roll = self.rng.random()
        if roll < 0.1:
            return Action("{not json", risk=0.9)
        if roll < 0.2:
            return Action(make_action("open_vault", token=123), risk=0.9)
        choice = self.rng.choice(["get_token", "read_logs", "wait", "open_vault"])
        arguments: dict[str, dict[str, Any]] = {
            "get_token": {}, "read_logs": {"page": self.rng.randint(1, 3)}, "wait": {"seconds": 5},
            "open_vault": {"token": "guess"}}
        args = arguments[choice]
        return Action(make_action(choice, **args), risk=0.9)
