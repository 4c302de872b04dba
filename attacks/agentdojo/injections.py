"""The injections of one (user task, injection task) pair under one of AgentDojo's attacks.

AgentDojo's attack classes build them (``agentdojo.attacks.load_attack``): each attack fills the
injection vectors that the user task's ground truth would show the agent with its template around
the injection task's goal. The attacks that address the model by name (important_instructions,
tool_knowledge) read it from the target pipeline's name; agentbed fixes that name per run (the
``victim`` option, default AgentDojo's default model ``gpt-4o-2024-05-13``, addressed as "GPT-4"),
so an attacked task's text never depends on which agent plays it.
"""

from __future__ import annotations

from functools import cache
from typing import Any

from environments.agentdojo.benchmark import TaskId, task_suite

DEFAULT_VICTIM = "gpt-4o-2024-05-13"


def _victim(name: str) -> Any:
    """A stand-in target pipeline that only carries a name (attacks read nothing else of it)."""
    from agentdojo.agent_pipeline.base_pipeline_element import BasePipelineElement

    class NamedTarget(BasePipelineElement):
        def query(self, *args: Any, **kwargs: Any) -> Any:  # noqa: ARG002 - never run
            raise RuntimeError("the attack's target pipeline is a name only")

    target = NamedTarget()
    target.name = name
    return target


@cache
def attacker(suite: str, attack: str, victim: str = DEFAULT_VICTIM, version: str | None = None) -> Any:
    """AgentDojo's attack ``attack`` on task suite ``suite`` at ``version`` (one per process: it
    caches the injection candidates of each user task)."""
    from agentdojo.attacks.attack_registry import load_attack

    return load_attack(attack, task_suite(suite, version), _victim(victim))


def injections(task: TaskId, victim: str = DEFAULT_VICTIM, version: str | None = None) -> dict[str, str]:
    """Injection vector -> text for an attacked task; empty for a user task alone."""
    if task.injection_task is None:
        return {}
    task.check(version)
    suite = task_suite(task.suite, version)
    made = attacker(task.suite, str(task.attack), victim, version).attack(
        suite.user_tasks[task.user_task], suite.injection_tasks[task.injection_task])
    return dict(sorted(made.items()))
