"""The ScienceWorld suite's entry into the engine (``agentbed run scienceworld``)."""

from __future__ import annotations

from typing import Any

import environments.scienceworld  # noqa: F401 - registers agentbed/scienceworld-v0
from agentbed.runner import Budget
from agentbed.suite import Option, Suite
from environments.scienceworld.agents import GoldAgent, RandomWalker
from environments.scienceworld.env import TASKS, ScienceWorldToolEnv, task_specs


def _tasks(options: dict[str, Any]) -> list[str]:
    wanted = options.get("task_type", "all")
    return [t.id for t in task_specs() if wanted in ("all", t.params["task"])]


SUITE = Suite(
    name="scienceworld",
    description="ScienceWorld science tasks in the real simulator (needs Java).",
    tasks=_tasks,
    make_env=lambda task, options: ScienceWorldToolEnv(task),
    agents={"gold": lambda setup: GoldAgent(), "random": lambda setup: RandomWalker()},
    default_agent="gold",
    # not "task": --task is the engine's (a task id); alfworld's option has the same name
    options={"task_type": Option("all", "one ScienceWorld task name, or all", choices=("all", *TASKS))},
    budget=Budget(max_steps=50),
)
