"""Scripted rule violations: the reference agent changed so that it breaks one clause of a task's
instruction (environments/contracts/clauses.py names them; the grammar is in its docstring).

Each part of a violation is a habit of the plan agent or a change to its plan; ``corrupt`` and
``drift`` wrap the resulting agent in a corrupting pipeline. The agents otherwise follow the
reference solution, so a failure is due to the one broken rule.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import replace

from agentbed.agents.base import Agent
from agentbed.env import TaskSpec
from attacks.contracts.agents import CorruptingAgent, ParameterDriftAgent
from attacks.contracts.corruptions import CORRUPTIONS
from environments.contracts.agents import CHORE_TOOLS, PlanAgent, full_plan, insert_steps, remove_steps
from environments.contracts.family import FAMILIES, Step, ref_slots

HABITS = {"stale": "stale", "hasty": "hasty"}
Edit = Callable[[list[Step]], list[Step]]


def _skip(tool: str) -> Edit:
    return lambda steps: remove_steps(steps, {i for i, s in enumerate(steps) if s.tool == tool})


def _skip_first(tool: str) -> Edit:
    return lambda steps: remove_steps(steps, {next(i for i, s in enumerate(steps) if s.tool == tool)})


def _bump(tool: str, argument: str, delta: str = "1") -> Edit:
    """An integer argument changed by ``delta`` (default +1) on every call of ``tool`` but the
    first (a page size re-derived mid-listing)."""
    def edit(steps: list[Step]) -> list[Step]:
        at = [i for i, s in enumerate(steps) if s.tool == tool][1:]
        return [replace(s, args={**s.args, argument: s.args[argument] + int(delta)}) if i in at else s
                for i, s in enumerate(steps)]
    return edit


def _skip_chores(steps: list[Step]) -> list[Step]:
    return remove_steps(steps, {i for i, s in enumerate(steps) if s.tool in CHORE_TOOLS})


def _repeat(tool: str) -> Edit:
    """The first call of ``tool`` made twice in a row (a single-use artifact resent)."""
    def edit(steps: list[Step]) -> list[Step]:
        i = next(i for i, s in enumerate(steps) if s.tool == tool)
        return insert_steps(steps, i + 1, [replace(steps[i], renew=None)])
    return edit


def _reverse(tools: str) -> Edit:
    """The calls of ``tools`` (comma-separated) keep their places but take their arguments in
    reverse order (resources or services handled in the opposite order)."""
    names = tools.split(",")

    def edit(steps: list[Step]) -> list[Step]:
        out = list(steps)
        for name in names:
            at = [i for i, s in enumerate(steps) if s.tool == name]
            for i, j in zip(at, reversed(at), strict=True):
                out[i] = replace(steps[i], args=steps[j].args)
        return out
    return edit


def _outwait(task: TaskSpec, slot: str, param: str | None) -> Edit:
    """A wait longer than the slot's lifetime (or the task parameter ``param``, or ``param``
    seconds) before its last use."""
    def edit(steps: list[Step]) -> list[Step]:
        producer = next(s for s in steps if slot in s.produces)
        params = {**FAMILIES[task.params["family"]].defaults, **task.params}
        key = param or producer.ttl
        assert key is not None, f"slot {slot!r}: its producer has no ttl and no param was given"
        seconds = float(params[key] if key in params else key) + 1.0
        last = max(i for i, s in enumerate(steps) if any(slot in ref_slots(v) for v in s.args.values()))
        return insert_steps(steps, last, [Step("wait", {"seconds": seconds})])
    return edit


def violating_agent(task: TaskSpec, violation: str) -> Agent:
    """The reference agent for ``task`` breaking the rule ``violation`` describes."""
    habits: set[str] = set()
    edits: list[Edit] = []
    wrap: Callable[[Agent], Agent] = lambda agent: agent  # noqa: E731
    work_first = False
    for part in violation.split("+"):
        kind, _, rest = part.partition(":")
        if kind in HABITS:
            habits.add(HABITS[kind])
            if kind == "stale":
                habits.add("no_renewal")
        elif kind == "skip-chores":
            edits.append(_skip_chores)
        elif kind == "chores-first":
            work_first = True
        elif kind == "skip":
            edits.append(_skip(rest))
        elif kind == "skip-first":
            edits.append(_skip_first(rest))
        elif kind == "bump":
            edits.append(_bump(*rest.split(":")))
        elif kind == "repeat":
            edits.append(_repeat(rest))
        elif kind == "reverse":
            edits.append(_reverse(rest))
        elif kind == "outwait":
            slot, _, param = rest.partition(":")
            habits.add("no_renewal")
            edits.append(_outwait(task, slot, param or None))
        elif kind == "corrupt":
            pipeline, _, argument = rest.partition(":")
            wrap = _corrupting(pipeline, argument)
        elif kind == "drift":
            wrap = ParameterDriftAgent
        else:
            raise ValueError(f"unknown violation {part!r} (see environments/contracts/clauses.py)")

    def edit(steps: list[Step]) -> list[Step]:
        for change in edits:
            steps = change(steps)
        return steps

    agent = PlanAgent(f"violate-{violation}", frozenset(habits), learns=False, work_first=work_first, edit=edit)
    full_plan(task)  # fail here, not mid-episode, on a task whose family has no plan
    return wrap(agent)


def _corrupting(pipeline: str, argument: str) -> Callable[[Agent], Agent]:
    corruption = CORRUPTIONS[pipeline]
    return lambda agent: CorruptingAgent(agent, corruption, only=argument or None)
