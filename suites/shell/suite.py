"""The shell suite: proves one sandbox per episode through the engine."""

from __future__ import annotations

import environments.shell  # noqa: F401 - registers agentbed/shell-v0
from agentbed.runner import Budget
from agentbed.suite import Suite
from environments.shell.agents import ShellOracle
from environments.shell.env import ShellEnv

SUITE = Suite(
    name="shell",
    description="Built-in demo: a shell tool whose commands run in the episode's sandbox.",
    tasks=lambda options: [t.id for t in ShellEnv.task_list()],
    make_env=lambda task, options: ShellEnv(task),
    agents={"oracle": lambda setup: ShellOracle()},
    default_agent="oracle",
    budget=Budget(max_steps=10),
)
