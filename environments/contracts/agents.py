"""Scripted agents that follow a family's reference plan, with or without bad habits.

``oracle``: takes every artifact from the latest observation that carried it, renews an artifact
(re-runs the step that issued it) when its lifetime will not cover the next call, waits for
polling intervals and not-before times, and uses a link's href. ``naive`` has three habits:
``stale`` (caches the first value it saw and never renews), ``visible_text`` (copies what it is
shown: a link's visible text) and ``hasty`` (never waits). In feedback mode a habit is dropped
when the environment names the failure it causes, so the gain from feedback is measurable.
"""

from __future__ import annotations

import datetime as dt
import html
import json
import re
from collections.abc import Callable, Sequence
from dataclasses import replace
from typing import Any

from agentbed.agents.base import Action, Agent
from agentbed.env import TaskSpec
from agentbed.tools import Tool, make_action
from environments.contracts.family import FAMILIES, Join, Ref, Step, ref_slots

CHORE_TOOLS = ("read_logs", "run_job")
RENEW_MARGIN = 10.0  # seconds of lifetime the oracle wants left when it uses an artifact
MAX_RENEWALS = 6
MAX_POLLS = 20
NAIVE_HABITS = frozenset({"stale", "visible_text", "hasty"})
# Which habit a failure label teaches the agent to drop (feedback mode).
LESSONS = {"EXPIRED_BEFORE_USE": "stale", "REVOKED_TOKEN": "stale", "STALE_PRECONDITION": "stale",
           "REPLAYED": "stale", "PARAMETER_MISMATCH": "stale", "VISIBLE_TEXT_MISMATCH": "visible_text",
           "SLOW_DOWN": "hasty", "NOT_YET_VALID": "hasty", "RATE_LIMITED": "hasty",
           "BACKOFF_VIOLATION": "hasty", "SCHEDULED_UNAVAILABLE": "hasty"}
_ANCHOR = re.compile(r'<a href="([^"]*)">(.*?)</a>', re.S)


def full_plan(task: TaskSpec, chores_first: bool = False) -> list[Step]:
    """The family's plan with the task's chores inserted at ``chores_at`` (or first of all);
    renew indices shifted."""
    p = task.params
    steps = FAMILIES[p["family"]].plan(p)
    chores = [Step(name, args) for name, args in p.get("chores", [])]
    if p.get("chores_between") and not chores_first:  # chore n right before the n-th call of that tool
        calls = [i for i, s in enumerate(steps) if s.tool == p["chores_between"]]
        for n, i in reversed(list(enumerate(calls[:len(chores)]))):
            steps = insert_steps(steps, i, [chores[n]])
        return steps
    return insert_steps(steps, 0 if chores_first else p.get("chores_at", 0), chores)


def insert_steps(steps: list[Step], at: int, new: list[Step]) -> list[Step]:
    """``new`` inserted before index ``at``, the renew indices of later steps shifted."""
    def shift(j: int | None) -> int | None:
        return j if j is None or j < at else j + len(new)

    moved = [replace(s, renew=shift(s.renew)) for s in steps]
    return moved[:at] + new + moved[at:]


def remove_steps(steps: list[Step], drop: set[int]) -> list[Step]:
    """The plan without the steps at ``drop``; renew indices remapped (a renew pointing at a
    dropped step points at the next kept one)."""
    kept = [i for i in range(len(steps)) if i not in drop]
    index = {old: new for new, old in enumerate(kept)}

    def remap(j: int | None) -> int | None:
        return None if j is None else next((index[k] for k in kept if k >= j), None)

    return [replace(steps[i], renew=remap(steps[i].renew)) for i in kept]


def parse_time(iso: str) -> float:
    return dt.datetime.strptime(iso, "%Y-%m-%dT%H:%M:%SZ").replace(tzinfo=dt.UTC).timestamp()


def find_field(body: Any, name: str) -> Any:
    """A field of a response body, looked up at the top level and one level down."""
    if not isinstance(body, dict):
        return None
    if name in body:
        return body[name]
    for value in body.values():
        if isinstance(value, dict) and name in value:
            return value[name]
    return None


def artifact_value(value: Any, visible_text: bool = False) -> Any:
    """What an agent uses of an observed field: a link's href (or, copying what is shown, its
    visible text), any other value as it is."""
    if isinstance(value, str):
        anchor = _ANCHOR.fullmatch(value)
        if anchor:
            return anchor.group(2) if visible_text else html.unescape(anchor.group(1))
    return value


def is_error(status: int, body: Any) -> bool:
    if status >= 400:
        return True
    return isinstance(body, dict) and ("error" in body or body.get("success") is False)


class PlanAgent(Agent):
    """Executes the reference plan of the task's family, shaped by ``habits``."""

    def __init__(self, name: str, habits: frozenset[str] = frozenset(), learns: bool = True,
                 work_first: bool = False, edit: Callable[[list[Step]], list[Step]] | None = None) -> None:
        self.name = name
        self.initial_habits = frozenset(habits)
        self.learns = learns
        self.work_first = work_first
        self.edit = edit  # a change to the reference plan (scripted rule violations)

    def reset(self, *, seed: int, task: Any = None) -> None:
        self.task: TaskSpec = task
        self.habits = set(self.initial_habits)
        self.lessons: list[str] = []
        self.start: float | None = None  # virtual time the task began, as this agent saw it
        self._start()

    def _start(self) -> None:
        self.plan = full_plan(self.task, chores_first=self.work_first)
        if self.edit is not None:
            self.plan = self.edit(self.plan)
        self.i = 0
        self.memory: dict[str, list[tuple[Any, float, int]]] = {}
        self.chores_done: set[int] = set()
        self.chore_times: list[float] = []
        self.pending: int | None = None  # plan index of the step whose answer comes next
        self.renewals = 0
        self.renewed: list[str] = []  # the slots renewed, in order
        self.polls = 0
        self.now = 0.0

    # -- observation handling ------------------------------------------------------------
    def _absorb(self, obs: dict[str, Any]) -> None:
        if "now" in obs:
            self.now = parse_time(obs["now"])
        if "instruction" in obs or self.start is None:
            # the task's first observation: when the task (and its schedule) began; an agent handed
            # the episode midway never saw it and counts from the handover (it may wait longer)
            self.start = self.now
        if "restart" in obs:
            label = obs.get("feedback", {}).get("label", "")
            if self.learns and label in LESSONS:
                self.habits.discard(LESSONS[label])
            self.lessons.append(label)
            self._start()
            self.now = parse_time(obs["restart"]["now"])

    def _record(self, step: Step, index: int, body: Any) -> None:
        for slot in step.produces:
            value = find_field(body, slot)
            if value is not None and value != "":
                self.memory.setdefault(slot, []).append((value, self.now, index))

    # -- decisions -----------------------------------------------------------------------
    def _value(self, slot: str) -> Any:
        seen = self.memory.get(slot)
        if not seen:
            return ""
        value = seen[0][0] if "stale" in self.habits else seen[-1][0]
        return artifact_value(value, visible_text="visible_text" in self.habits)

    def _expiring(self, slot: str) -> int | None:
        """The plan index to resume from when ``slot`` must be renewed first, else None."""
        if self.habits & {"stale", "no_renewal"} or not self.memory.get(slot) or self.renewals >= MAX_RENEWALS:
            return None
        _, at, index = self.memory[slot][-1]
        producer = self.plan[index]
        if producer.ttl is None:
            return None
        if producer.ttl == "volatile":
            stale = any(t >= at for t in self.chore_times)
        else:
            ttl = self.task.params.get(producer.ttl)
            stale = ttl is not None and at + float(ttl) <= self.now + RENEW_MARGIN
        return (producer.renew if producer.renew is not None else index) if stale else None

    def _args(self, step: Step) -> dict[str, Any]:
        return {k: self._argument(v) for k, v in step.args.items()}

    def _argument(self, value: Any) -> Any:
        if isinstance(value, Ref):
            return self._value(value.slot)
        if isinstance(value, Join):
            return "".join(str(self._value(slot)) for slot in value.slots)
        return value

    def act(self, observation: str, tools: Sequence[Tool]) -> Action:
        try:
            obs = json.loads(observation)
        except ValueError:
            return Action(make_action("end_task", reason="unreadable observation"))
        self._absorb(obs)
        if self.pending is not None and "restart" not in obs:
            step = self.plan[self.pending]
            status, body = obs.get("status", 200), obs.get("body")
            polled = isinstance(body, dict) and step.poll in (body.get("error"), body.get("__type"),
                                                              find_field(body, "Code"))
            if step.poll and polled and self.polls < MAX_POLLS:
                self.pending = None
                self.polls += 1
                pause = body.get("interval") or body.get("retry_after") or step.backoff * 2 ** (self.polls - 1)
                if pause and "hasty" not in self.habits:
                    return Action(make_action("wait", seconds=float(pause)))
                return self._next()
            if is_error(status, body):
                return Action(make_action("end_task", reason=f"{step.tool} failed with status {status}"))
            self._record(step, self.pending, body)
            self.i = self.pending + 1
            self.pending = None
        return self._next()

    def _next(self) -> Action:
        while self.i < len(self.plan):
            step = self.plan[self.i]
            if step.tool in CHORE_TOOLS:
                if self.i in self.chores_done:
                    self.i += 1
                    continue
                self.chores_done.add(self.i)
                self.chore_times.append(self.now)
                self.i += 1
                return Action(make_action(step.tool, **step.args))
            window = self.task.params.get("maintenance", 0)
            final = step.tool == FAMILIES[self.task.params["family"]].final_tool
            if final and window and "hasty" not in self.habits and self.now < self.start + window:
                return Action(make_action("wait", seconds=float(self.start + window - self.now)))
            slots = [slot for v in step.args.values() for slot in ref_slots(v)]
            expiring = next(((slot, r) for slot in slots if (r := self._expiring(slot)) is not None), None)
            if expiring is not None:
                self.renewals += 1
                self.renewed.append(expiring[0])
                self.i = expiring[1]
                continue
            if step.wait_for and "hasty" not in self.habits:
                not_before = self._value(step.wait_for)
                if isinstance(not_before, int | float) and self.now < not_before:
                    return Action(make_action("wait", seconds=float(not_before - self.now + 1)))
            self.pending = self.i
            return Action(make_action(step.tool, **self._args(step)))
        return Action(make_action("end_task", reason="plan finished"))


def oracle() -> PlanAgent:
    return PlanAgent("oracle")


def naive() -> PlanAgent:
    return PlanAgent("naive", NAIVE_HABITS)


def work_first() -> PlanAgent:
    """Does the task's required work (chores) before anything else, then the plan, and never
    renews an artifact: it passes a task that claims to test renewal only if the task can be
    solved without renewing (tests/contracts/test_renewal.py checks none can)."""
    return PlanAgent("work-first", frozenset({"no_renewal"}), learns=False, work_first=True)
