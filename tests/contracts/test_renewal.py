"""Renewal forced by construction: a task whose reference solution renews an artifact claims so in
``agentbed list contracts --json``, and is unsolvable without renewing in any order of the agent's
calls, or its task row names the orders that solve it without renewal (``renewal_free_orders``).

Orders: the reference plan's calls in their (data-dependent) order, with the time-consuming work
placed at every position: the chores as one block (each chore on its own where the task fixes
their places with ``chores_between``, keeping their order) and, for a maintenance window, a wait
of the whole window. A never-renewing agent plays each order; the passing ones must be exactly
the declared renewal-free orders."""

from __future__ import annotations

import itertools
from dataclasses import replace

import pytest

from agentbed.runner import Budget, EpisodeSpec, run_episode
from environments.contracts.agents import CHORE_TOOLS, PlanAgent, full_plan, oracle, work_first
from environments.contracts.catalog import describe
from environments.contracts.env import LOG_PAGE_COST, ContractEnv
from environments.contracts.family import Step

SEEDS = (0, 1, 2)
TASKS = {t.id: t for t in ContractEnv.task_list()}


@pytest.fixture(scope="module")
def claims() -> dict[str, list[str]]:
    """The tasks whose reference solution renews, with the slots the oracle renewed."""
    out = {}
    for task in TASKS:
        agent = oracle()
        spec = EpisodeSpec("contracts", task, agent.name, 0, {"feedback": "off"})
        assert run_episode(ContractEnv(task), agent, spec, budget=Budget(max_steps=80)).success, task
        if agent.renewed:
            out[task] = agent.renewed
    return out


def chore_seconds(params: dict) -> float:
    return sum(LOG_PAGE_COST if name == "read_logs" else params["jobs"][args["job"]]
               for name, args in params.get("chores", []))


def lifetime(task: str, slot: str) -> float:
    step = next(s for s in full_plan(TASKS[task]) if slot in s.produces)
    return 0.0 if step.ttl == "volatile" else float(TASKS[task].params[step.ttl])


def signature(steps: list[Step]) -> str:
    return " -> ".join(f"{s.tool}:{s.args.get('job', s.args.get('page', ''))}" if s.tool in CHORE_TOOLS
                       else f"wait:{s.args['seconds']:g}" if s.tool == "wait" else s.tool for s in steps)


def orders(task: str) -> list[list[Step]]:
    """Every placement of the task's time-consuming work among the reference plan's calls."""
    p = TASKS[task].params
    steps = [s for s in full_plan(TASKS[task]) if s.tool not in CHORE_TOOLS]
    chores = [Step(name, args) for name, args in p.get("chores", [])]
    units = [[c] for c in chores] if p.get("chores_between") else ([chores] if chores else [])
    if p.get("maintenance"):
        units.append([Step("wait", {"seconds": float(p["maintenance"])})])
    out = []
    for gaps in itertools.combinations_with_replacement(range(len(steps)), len(units)):
        plan = list(steps[:-1])  # the final call stays last
        for unit, gap in sorted(zip(units, gaps, strict=True), key=lambda ug: -ug[1]):
            plan[gap:gap] = unit
        # never renewing, so the reference plan's renew indices do not apply
        out.append([replace(s, renew=None) for s in plan] + [steps[-1]])
    return out


def test_every_task_that_renews_in_the_reference_solution_says_so(claims):
    listed = {task for task in TASKS if describe(task)["renews_in_reference"]}
    assert listed == set(claims), (sorted(listed - set(claims)), sorted(set(claims) - listed))
    forced = {task for task in TASKS if describe(task)["renewal_forced"]}
    assert forced == {t for t in claims if not TASKS[t].params.get("renewal_free_orders")}


def test_renewal_is_forced_in_every_order_unless_the_solving_orders_are_declared(play, claims):
    for task in claims:
        solving = set()
        for plan in orders(task):
            agent = PlanAgent("no-renewal", frozenset({"no_renewal"}), learns=False, edit=lambda _, plan=plan: plan)
            record = play(task, agent)
            if record.success:
                solving.add(signature(plan))
            else:
                assert record.metrics["headline"] in ("EXPIRED_BEFORE_USE", "STALE_PRECONDITION", "SHORTCUT_TAKEN",
                                                      "SCHEDULED_UNAVAILABLE", "REVOKED_TOKEN"), (task, record.labels)
        assert solving == set(TASKS[task].params.get("renewal_free_orders", ())), (task, sorted(solving))


def test_never_renewing_agents_fail_every_forced_task_on_every_seed(play, claims):
    for task in claims:
        if TASKS[task].params.get("renewal_free_orders"):
            continue
        for seed in SEEDS:
            first = play(task, work_first(), seed)
            in_order = play(task, PlanAgent("no-renewal", frozenset({"no_renewal"}), learns=False), seed)
            assert not first.success, (task, seed, "solved doing the work first without renewing")
            assert not in_order.success, (task, seed, "solved in the suggested order without renewing")
            assert in_order.metrics["headline"] in ("EXPIRED_BEFORE_USE", "STALE_PRECONDITION"), (task, in_order.labels)


def test_chores_count_only_after_the_artifact_is_issued_and_outlast_it(claims):
    for task, slots in claims.items():
        params = TASKS[task].params
        if not params.get("chores") or params.get("chores_between"):
            continue
        assert params.get("chores_after"), f"{task}: chores done before the artifact exists would count"
        assert chore_seconds(params) >= lifetime(task, slots[0]), (task, chore_seconds(params))


@pytest.mark.parametrize("task", ["s3-get-after-scan", "oauth-short-code", "event-store-three-conflicts"])
def test_work_first_is_told_its_chores_did_not_count(play, task):
    record = play(task, work_first())
    assert record.metrics["headline"] == "SHORTCUT_TAKEN"
