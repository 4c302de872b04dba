"""The vault suite's entry into the engine."""

from __future__ import annotations

from typing import Any

import environments.vault  # noqa: F401 - registers agentbed/vault-v0
from agentbed.runner import Budget
from agentbed.suite import Suite
from environments.vault.agents import VaultNaive, VaultOracle, VaultRandom
from environments.vault.env import VaultEnv


def _tasks(options: dict[str, Any]) -> list[str]:
    return [t.id for t in VaultEnv.task_list()]


SUITE = Suite(
    name="vault",
    description="Built-in demo: fetch a token and use it before it expires.",
    tasks=_tasks,
    make_env=lambda task, options: VaultEnv(task),
    agents={"oracle": lambda setup: VaultOracle(), "naive": lambda setup: VaultNaive(),
            "random": lambda setup: VaultRandom()},
    default_agent="oracle",
    hidden_tasks=("echo", "proof-of-work"),  # benchmark loads: run them with --task
    default_seeds=3,
    budget=Budget(max_steps=20),
)
