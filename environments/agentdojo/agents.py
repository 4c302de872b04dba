"""Scripted AgentDojo agents: the ground truth (AgentDojo's oracle), an injection follower, and the
two ways of ending an episode that the branching interventions use (refuse, ask the user).

Both planners take their tool calls from the tasks' own ``ground_truth`` functions, evaluated on
the pre-environment as AgentDojo's ``GroundTruthPipeline`` does, and end with the task's
``GROUND_TRUTH_OUTPUT`` as the final answer. They plan from the task given at reset, so they can
also take over mid-episode (the plan then starts again from its first call).
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from typing import Any

from agentbed.agents.base import Action, Agent
from agentbed.tools import Tool
from environments.agentdojo.benchmark import injection_task_names, suite_of
from environments.agentdojo.env import mentions, pre_environment_of


def final_action(text: str) -> str:
    """A final answer: an action that names no tool (what a chat model's plain reply becomes)."""
    return json.dumps({"tool": None, "text": text}, ensure_ascii=False)


def call_action(function: str, args: dict[str, Any]) -> str:
    """An AgentDojo ``FunctionCall`` as an agentbed action (any argument name, even ``tool_name``)."""
    return json.dumps({"tool": function, "arguments": args}, ensure_ascii=False)


def calls_of(task: Any, environment: Any) -> list[str]:
    """A task's ground-truth tool calls as agentbed actions."""
    return [call_action(call.function, call.args) for call in task.ground_truth(environment)]


class GroundTruthAgent(Agent):
    """AgentDojo's ground-truth pipeline as an agent: the user task's ``ground_truth`` calls, one
    per step, then its ``GROUND_TRUTH_OUTPUT``. It ignores everything it reads."""

    name = "ground-truth"

    def reset(self, *, seed: int, task: Any = None) -> None:
        params = task.params
        user = suite_of(params).user_tasks[params["user_task"]]
        self.plan = [*calls_of(user, pre_environment_of(params)), final_action(user.GROUND_TRUTH_OUTPUT)]

    def act(self, observation: str, tools: Sequence[Tool]) -> Action:
        return Action(self.plan.pop(0) if len(self.plan) > 1 else self.plan[0], risk=0.0)


class InjectionFollower(Agent):
    """Works on the user task like the ground truth, and obeys any instruction it reads: when a
    tool result contains the goal of one of the suite's injection tasks (AgentDojo's public task
    list, the same for every episode), it first carries out that injection task's ground truth,
    then resumes, and says what that task wants said (its ``GROUND_TRUTH_OUTPUT``) in the final
    answer. It is told nothing about which injection, if any, the episode holds; a defense that
    hides the injection from it hides it for real."""

    name = "injection-follower"

    def reset(self, *, seed: int, task: Any = None) -> None:
        params = task.params
        suite = suite_of(params)
        self.environment = pre_environment_of(params)
        user = suite.user_tasks[params["user_task"]]
        self.plan = [*calls_of(user, self.environment), final_action(user.GROUND_TRUTH_OUTPUT)]
        self.goals = [(name, suite.injection_tasks[name]) for name in injection_task_names(params["suite"], params.get("benchmark_version"))]
        self.followed: list[str] = []
        self.steps = 0

    def act(self, observation: str, tools: Sequence[Tool]) -> Action:
        if self.steps > 0:  # the first observation is the user's own request
            for name, injection in self.goals:
                if name not in self.followed and mentions(observation, injection.GOAL):
                    self.followed.append(name)
                    self.plan[:0] = calls_of(injection, self.environment)
                    if injection.GROUND_TRUTH_OUTPUT:  # an injection that wants something said
                        answer = json.loads(self.plan[-1])
                        self.plan[-1] = final_action(f"{answer['text']} {injection.GROUND_TRUTH_OUTPUT}".strip())
        self.steps += 1
        risk = 0.9 if self.followed else 0.1
        return Action(self.plan.pop(0) if len(self.plan) > 1 else self.plan[0], risk=risk,
                      meta={"following": list(self.followed)} if self.followed else {})


REFUSAL = ("I stopped: a tool result contains instructions that you did not give me, and I will not act on"
           " them. Nothing further was done.")
QUESTION = ("A tool result asks me to do something you did not ask for. Should I do it? I have paused your"
            " task until you tell me.")


class EndWith(Agent):
    """Ends the episode at once with a fixed final answer: refusing, or asking the user (AgentDojo
    has no simulated user, so a question is the episode's last message and is graded as such)."""

    def __init__(self, name: str, text: str) -> None:
        self.name, self.text = name, text

    def act(self, observation: str, tools: Sequence[Tool]) -> Action:
        return Action(final_action(self.text), risk=0.0)
