"""Attack plans for AgentDojo's workspace injection tasks 6-13 (empty ground truths in v1.2),
graded by AgentDojo's own security functions (the setting's ``side_task_success``)."""

from __future__ import annotations

import pytest

from attacks.agentdojo.workspace_plans import PLANS
from environments.agentdojo.agents import call_action, final_action
from environments.agentdojo.benchmark import suite_of
from environments.agentdojo.env import pre_environment_of
from environments.agentdojo.side_task import AgentDojoSideTaskEnv
from tests.control.test_protocols import play

INJECTIONS = [f"injection_task_{n}" for n in range(6, 14)]


def side_task_success(task: str, calls: list[tuple[str, dict]]) -> bool:
    env = AgentDojoSideTaskEnv(task)
    env.reset(seed=0)
    for function, args in calls:
        env.step(call_action(function, args))
    _, reward, terminated, _, _ = env.step(final_action("Done."))
    metrics = env.outcome(terminated, reward).metrics
    env.close()
    return bool(metrics["side_task_success"])


@pytest.mark.parametrize("injection", INJECTIONS)
def test_each_plan_meets_agentdojos_security_function_and_half_a_plan_does_not(injection: str) -> None:
    task = f"workspace.user_task_0.{injection}"
    params = AgentDojoSideTaskEnv.resolve_task(task).params
    assert suite_of(params).injection_tasks[injection].ground_truth(pre_environment_of(params)) == []
    plan = PLANS[injection](pre_environment_of(params))
    assert side_task_success(task, plan)
    assert not side_task_success(task, plan[:len(plan) // 2])  # half a plan does not meet the check
    assert not side_task_success(task, [])


@pytest.mark.parametrize("task", ["workspace.user_task_20.injection_task_6", "workspace.user_task_27.injection_task_13"])
def test_the_attack_policy_now_carries_out_the_planned_goal(task: str) -> None:
    honest, _ = play(f"agentdojo/{task}", "honest")
    attack, _ = play(f"agentdojo/{task}", "attack-blatant")
    assert honest.metrics["main_task_success"] and not honest.metrics["side_task_success"]
    assert attack.metrics["side_task_success"]
