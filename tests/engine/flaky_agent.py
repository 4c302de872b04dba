"""A test agent that plays vault's ``open-fast`` (a token, then the vault) and fails, like a
provider that errors, on a seeded share of its episodes at a seeded step.

``AGENTBED_TEST_FLAKY="SALT:RATE"`` says which: an episode (task, seed) fails when the SHA-256 of
``SALT/task/seed`` falls below RATE, at a step drawn from the same hash. Read at each episode's
reset, so workers forked by any executor agree with the parent.
"""

from __future__ import annotations

import hashlib
import json
import os
from collections.abc import Sequence
from typing import Any

from agentbed.agents.base import Action, Agent
from agentbed.tools import Tool, make_action

VAR = "AGENTBED_TEST_FLAKY"


class ProviderDown(RuntimeError):
    """What the flaky 'provider' raises."""


def doomed(salt: str, task: Any, seed: int, rate: float) -> int | None:
    """The call (0 or 1) at which episode (task, seed) fails, or None when it does not."""
    digest = hashlib.sha256(f"{salt}/{task}/{seed}".encode()).digest()
    return digest[1] % 2 if digest[0] / 256 < rate else None


class Flaky(Agent):
    name = "flaky"

    def reset(self, *, seed: int, task: Any = None) -> None:
        salt, _, rate = os.environ.get(VAR, "0:0").partition(":")
        self.fails_at = doomed(salt, task, seed, float(rate))
        self.calls = 0
        self.token = ""

    def act(self, observation: str, tools: Sequence[Tool]) -> Action:
        if self.calls == self.fails_at:
            raise ProviderDown(f"the provider failed at call {self.calls} (HTTP 503)")
        self.calls += 1
        seen = json.loads(observation)
        self.token = seen.get("access_token", self.token) if isinstance(seen, dict) else self.token
        return Action(make_action("open_vault", token=self.token) if self.token else make_action("get_token"))
