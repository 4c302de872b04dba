"""Renewal forced by construction: a task whose reference solution renews an artifact cannot be
solved without renewing it, whatever the order of the agent's calls.

Two scripted agents never renew: ``work-first`` does the required work (chores) before anything
else and then the plan; the in-plan one follows the suggested order. Both must fail every such
task on every seed. Where the work is chores, the task counts them only after the artifact is
first issued (``chores_after``) and they take at least as long as the artifact lives (any call
after them then finds it expired)."""

from __future__ import annotations

import pytest

from environments.contracts.agents import PlanAgent, full_plan, oracle, work_first
from environments.contracts.env import LOG_PAGE_COST, ContractEnv

SEEDS = (0, 1, 2)
TASKS = {t.id: t for t in ContractEnv.task_list()}


def _renewed(play, task: str) -> list[str]:
    agent = oracle()
    assert play(task, agent).success
    return agent.renewed


def _claims(play) -> dict[str, list[str]]:
    return {task: slots for task in TASKS if (slots := _renewed(play, task))}


def chore_seconds(params: dict) -> float:
    return sum(LOG_PAGE_COST if name == "read_logs" else params["jobs"][args["job"]]
               for name, args in params.get("chores", []))


def lifetime(task: str, slot: str) -> float:
    step = next(s for s in full_plan(TASKS[task]) if slot in s.produces)
    return 0.0 if step.ttl == "volatile" else float(TASKS[task].params[step.ttl])


def test_tasks_that_renew_are_unsolvable_without_renewal_in_either_order(play):
    claims = _claims(play)
    assert len(claims) >= 30
    for task in claims:
        for seed in SEEDS:
            first = play(task, work_first(), seed)
            in_order = play(task, PlanAgent("no-renewal", frozenset({"no_renewal"}), learns=False), seed)
            assert not first.success, (task, seed, "solved doing the work first without renewing")
            assert not in_order.success, (task, seed, "solved in the suggested order without renewing")
            assert in_order.metrics["headline"] in ("EXPIRED_BEFORE_USE", "STALE_PRECONDITION"), (task, in_order.labels)


def test_chores_count_only_after_the_artifact_is_issued_and_outlast_it(play):
    for task, slots in _claims(play).items():
        params = TASKS[task].params
        if not params.get("chores"):
            continue
        assert params.get("chores_after"), f"{task}: chores done before the artifact exists would count"
        assert chore_seconds(params) >= lifetime(task, slots[0]), (task, chore_seconds(params))


@pytest.mark.parametrize("task", ["s3-get-after-scan", "oauth-short-code"])
def test_work_first_is_told_its_chores_did_not_count(play, task):
    record = play(task, work_first())
    assert record.metrics["headline"] == "SHORTCUT_TAKEN"
