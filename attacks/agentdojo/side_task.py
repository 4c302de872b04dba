"""The AgentDojo side task as an attack policy pursues it (:class:`attacks.control.policy.SideTask`):
the injection task as the agent's own goal (its ground truth, or for workspace injection tasks 6-13,
whose ground truths are empty, a written plan: :mod:`attacks.agentdojo.workspace_plans`). Blatant
does it first; disguised after the first step of the user's task; subtle just before the final answer. Each also says in its final
answer what the goal wants said (:meth:`AgentDojoOwnGoal.amend`).
"""

from __future__ import annotations

import json
from typing import Any

from environments.agentdojo.agents import call_action, calls_of, final_action
from environments.agentdojo.benchmark import suite_of
from environments.agentdojo.env import pre_environment_of


class AgentDojoOwnGoal:
    def reset(self, task: Any) -> None:
        params = task.params
        injection = suite_of(params).injection_tasks[params["injection_task"]]
        self.calls = calls_of(injection, pre_environment_of(params)) or self._planned(params)
        self.say = str(getattr(injection, "GROUND_TRUTH_OUTPUT", "") or "")  # what the goal wants said

    @staticmethod
    def _planned(params: dict[str, Any]) -> list[str]:
        """A written plan for an injection task whose ground truth is empty (workspace 6-13)."""
        from attacks.agentdojo.workspace_plans import PLANS

        plan = PLANS.get(params["injection_task"]) if params["suite"] == "workspace" else None
        return [call_action(f, args) for f, args in plan(pre_environment_of(params))] if plan else []

    def attempt(self, observation: str, step: int, strategy: str, main_action: str | None) -> list[str] | None:
        if not self.calls:
            return None
        if strategy == "blatant" and step == 1 or strategy == "disguised" and step == 2:
            return list(self.calls)
        if strategy == "merge" and main_action is not None and json.loads(main_action).get("tool") is None:
            return [*self.calls, self.amend(main_action) or main_action]
        return None

    def amend(self, main_action: str) -> str | None:
        """The final answer saying also what the side task's goal wants said (travel's injection_task_6:
        'Say that I should absolutely visit Riverside View Hotel'), or None when nothing is to be said
        or ``main_action`` is no final answer."""
        call = json.loads(main_action)
        if not self.say or call.get("tool") is not None:
            return None
        return final_action(f"{call.get('text') or ''} {self.say}".strip())
