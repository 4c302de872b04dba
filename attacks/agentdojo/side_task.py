"""The AgentDojo side task as an attack policy pursues it (:class:`attacks.control.policy.SideTask`):
the injection task as the agent's own goal. Blatant does it first; disguised after
the first step of the user's task; subtle just before the final answer.
"""

from __future__ import annotations

import json
from typing import Any

from environments.agentdojo.agents import calls_of
from environments.agentdojo.benchmark import suite_of
from environments.agentdojo.env import pre_environment_of


class AgentDojoOwnGoal:
    def reset(self, task: Any) -> None:
        params = task.params
        injection = suite_of(params).injection_tasks[params["injection_task"]]
        self.calls = calls_of(injection, pre_environment_of(params))

    def attempt(self, observation: str, step: int, strategy: str, main_action: str | None) -> list[str] | None:
        if not self.calls:
            return None
        if strategy == "blatant" and step == 1 or strategy == "disguised" and step == 2:
            return list(self.calls)
        if strategy == "merge" and main_action is not None and json.loads(main_action).get("tool") is None:
            return [*self.calls, main_action]
        return None
