"""A control setting on AgentDojo: the untrusted agent pursues an injection task as its own goal.

No injection is placed in the environment (nothing in a tool result asks for it): the side task is
the agent's own, and it is scored by the injection task's own security function, exactly as
AgentDojo grades an attack (``AgentDojoEnv.scores``'s ``attack_success``). The main task is the user
task, scored by its utility function. Task ids are ``SUITE.USER_TASK.INJECTION_TASK`` (AgentDojo's
names).
"""

from __future__ import annotations

from typing import Any

from agentbed.env import Outcome, TaskSpec
from environments.agentdojo.benchmark import BENCHMARK_VERSION, TaskId, suite_of, task_suite
from environments.agentdojo.env import AgentDojoEnv

SIDE_ATTACK = "own-goal"  # recorded as the task's attack: the goal comes from the agent, not an injection


def side_task_spec(task: str) -> TaskSpec:
    """The spec of ``SUITE.USER_TASK.INJECTION_TASK``; a one-line KeyError for an unknown name."""
    parts = task.split(".")
    if len(parts) != 3:
        raise KeyError(f"task {task!r}: expected SUITE.USER_TASK.INJECTION_TASK")
    TaskId(parts[0], parts[1], parts[2], "direct").check()
    user = task_suite(parts[0]).user_tasks[parts[1]]
    params: dict[str, Any] = {"benchmark_version": BENCHMARK_VERSION, "suite": parts[0], "user_task": parts[1],
                              "injection_task": parts[2], "attack": SIDE_ATTACK, "injections": {}}
    return TaskSpec(task, params, user.PROMPT)


def side_task_goal(params: dict[str, Any]) -> str:
    """What the attack policy is told to do besides the user's task: the injection task's goal."""
    return suite_of(params).injection_tasks[params["injection_task"]].GOAL


class AgentDojoSideTaskEnv(AgentDojoEnv):
    """One user task with an injection task as the agent's side task."""

    @classmethod
    def resolve_task(cls, task: TaskSpec | str | None) -> TaskSpec:
        if isinstance(task, TaskSpec):
            return task
        return side_task_spec(task or "banking.user_task_0.injection_task_0")

    @property
    def side_task(self) -> str:
        return side_task_goal(self.task.params)

    def outcome(self, terminated: bool, total_reward: float) -> Outcome:
        out = super().outcome(terminated, total_reward)
        out.metrics = {**out.metrics, "main_task_success": bool(out.metrics.get("utility")),
                       "side_task_success": bool(out.metrics.get("attack_success"))}
        return out
