"""Which of a task's instructions a trace of calls broke, read from the calls and answers alone.

The graders decide a task from the issuers' state; this audit decides, independently, whether
the calls an agent made do what the instruction says. The instruction is the family's reference
plan (``Family.plan``) and the task's shared parameters, so the audit needs no per-family code:

* ``skipped:<tool>``: fewer successful calls of a tool than the plan makes (a step left out);
* ``argument:<tool>.<name>=<value>``: a successful call whose instructed (literal) argument
  differs from every plan step of that tool;
* ``order:<a> before <b>``: the first successful call of a later plan step came first;
* ``value:<tool>.<name>``: an artifact argument that no earlier answer issued;
* ``mixed:<tool>(<a>,<b>)``: one call's artifacts come from two parallel flows (two answers of
  the same tool, neither derived from the other), e.g. flow 1's code with flow 2's state;
* ``expired:<slot>``: an artifact used after the lifetime the task states for it;
* ``wait:<tool>#<n>``: the n-th retry of a polled call came sooner than the server's interval or
  Retry-After, or than the exponential backoff, measured from the end of the previous attempt
  (its own cost excluded);
* ``early:<tool>``: a call before a not-before time or during an announced maintenance window;
* ``chore:<id>``: a required chore not done where the instruction places it.

A finding a task accepts is declared with a reason (``Family.alternatives`` for every task of a
family, the task parameter ``accepted_alternatives`` for one task; fnmatch patterns), and
docs/contracts.md lists them. tests/contracts/test_plan_search.py checks every plan the graders
pass against this audit.
"""

from __future__ import annotations

import fnmatch
from collections import Counter
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from agentbed.env import TaskSpec
from environments.contracts.agents import CHORE_TOOLS, artifact_value, find_field, full_plan, is_error
from environments.contracts.family import FAMILIES, Join, Ref, Step


@dataclass(frozen=True)
class Event:
    """One call as the agent saw it: arguments sent, answer received, virtual start and end."""

    tool: str
    args: Mapping[str, Any]
    start: float
    end: float
    status: int
    body: Any

    @property
    def ok(self) -> bool:
        return not is_error(self.status, self.body)


def accepted_alternatives(task: TaskSpec) -> dict[str, str]:
    """Findings the task accepts (pattern -> why): its family's and its own."""
    family = FAMILIES[task.params["family"]]
    return {**family.accepted({**family.defaults, **task.params}), **task.params.get("accepted_alternatives", {})}


def unaccepted(task: TaskSpec, findings: Sequence[str]) -> list[str]:
    patterns = accepted_alternatives(task)
    return [f for f in findings if not any(fnmatch.fnmatchcase(f, pat) for pat in patterns)]


def _literal(step: Step) -> dict[str, Any]:
    return {k: v for k, v in step.args.items() if not isinstance(v, Ref | Join)}


def _describe(step: Step) -> str:
    lit = _literal(step)
    return step.tool + ("(" + ",".join(f"{k}={v!r}" for k, v in sorted(lit.items())) + ")" if lit else "")


def _match(plan: list[Step], event: Event) -> Step | None:
    """The most specific plan step whose instructed arguments the call carries."""
    fits = [s for s in plan if s.tool == event.tool and all(event.args.get(k) == v for k, v in _literal(s).items())]
    return max(fits, key=lambda s: len(_literal(s)), default=None)


class _Trace:
    def __init__(self, task: TaskSpec, events: Sequence[Event], start: float) -> None:
        self.p = {**FAMILIES[task.params["family"]].defaults, **task.params}
        self.family = FAMILIES[self.p["family"]]
        self.plan = [s for s in full_plan(task) if s.tool not in CHORE_TOOLS]
        self.events = list(events)
        self.start = start
        self.producers: dict[str, set[str]] = {}
        for step in self.plan:
            for slot in step.produces:
                self.producers.setdefault(slot, set()).add(step.tool)
        self.sources: list[dict[str, int]] = []  # per event: argument -> index of the answer it came from
        self.ancestors: list[set[int]] = []
        self.findings: list[str] = []
        self._trace_sources()

    def issued(self, j: int, slot: str) -> Any:
        e = self.events[j]
        if not e.ok or e.tool not in self.producers.get(slot, ()):
            return None
        value = find_field(e.body, slot)
        return None if value in (None, "") else artifact_value(value)

    def step_of(self, e: Event) -> Step | None:
        """The plan step a call plays: the most specific one it fits, else the nearest of its tool."""
        step = _match(self.plan, e)
        if step is None:
            step = min((s for s in self.plan if s.tool == e.tool), default=None,
                       key=lambda s: sum(e.args.get(k) != v for k, v in _literal(s).items()))
        return step

    def _ref_slot(self, e: Event, name: str) -> str | None:
        step = self.step_of(e)
        value = step.args.get(name) if step is not None else None
        return value.slot if isinstance(value, Ref) else None

    def _trace_sources(self) -> None:
        for i, e in enumerate(self.events):
            found: dict[str, list[int]] = {}
            for name, value in e.args.items():
                slot = self._ref_slot(e, name)
                if slot is None:
                    continue
                candidates = [j for j in range(i - 1, -1, -1) if self.issued(j, slot) == value]
                if candidates:
                    found[name] = candidates
                elif e.ok:
                    self.findings.append(f"value:{e.tool}.{name}")
            self.sources.append(self._choose(found))
            self.ancestors.append({i}.union(*(self.ancestors[j] for j in self.sources[-1].values())))

    def _choose(self, candidates: dict[str, list[int]]) -> dict[str, int]:
        """One source per argument. A value several answers issued (a constant Content-Type, an
        amount) is taken from the answer of the same flow as the arguments only one answer issued."""
        fixed = {name: js[0] for name, js in candidates.items() if len(js) == 1}
        chosen = dict(fixed)
        for name, js in candidates.items():
            if len(js) > 1:
                chosen[name] = next((j for j in js if not any(self._parallel(self.ancestors[j], self.ancestors[f])
                                                              for f in fixed.values())), js[0])
        return chosen

    # -- the rules ------------------------------------------------------------------------
    def steps(self) -> None:
        need = Counter(s.tool for s in self.plan)
        done = Counter(e.tool for e in self.events if e.ok)
        self.findings += [f"skipped:{tool}" for tool, n in need.items() if done[tool] < n]

    def arguments_and_order(self) -> None:
        first: dict[str, int] = {}
        for i, e in enumerate(self.events):
            if not e.ok or e.tool in CHORE_TOOLS or e.tool not in {s.tool for s in self.plan}:
                continue
            step = _match(self.plan, e)
            if step is None:
                nearest = self.step_of(e)
                assert nearest is not None
                self.findings += [f"argument:{e.tool}.{k}={e.args.get(k)!r}" for k, v in _literal(nearest).items()
                                  if e.args.get(k) != v]
                continue
            first.setdefault(_describe(step), i)
        keys = list(dict.fromkeys(_describe(s) for s in self.plan))
        for a_at, a in enumerate(keys):
            for b in keys[a_at + 1:]:
                if a in first and b in first and first[b] < first[a]:
                    self.findings.append(f"order:{b} before {a}")

    def flows(self) -> None:
        for i, e in enumerate(self.events):
            if not e.ok:
                continue
            names = sorted(self.sources[i])
            for x_at, x in enumerate(names):
                for y in names[x_at + 1:]:
                    if self._parallel(self.ancestors[self.sources[i][x]], self.ancestors[self.sources[i][y]]):
                        self.findings.append(f"mixed:{e.tool}({x},{y})")

    def _parallel(self, a: set[int], b: set[int]) -> bool:
        return any(x != y and self.events[x].tool == self.events[y].tool
                   and x not in self.ancestors[y] and y not in self.ancestors[x] for x in a for y in b)

    def lifetimes(self) -> None:
        for i, e in enumerate(self.events):
            for name, j in self.sources[i].items():
                slot = self._ref_slot(e, name)
                # a step's ttl is the lifetime of its first artifact (a login's access token, not
                # the refresh token that comes with it)
                step = next((s for s in self.plan if s.tool == self.events[j].tool and s.produces[:1] == (slot,)), None)
                ttl = self.p.get(step.ttl) if step is not None and step.ttl else None
                if isinstance(ttl, int | float) and e.start > self.events[j].start + ttl:
                    self.findings.append(f"expired:{slot}")

    def waits(self) -> None:
        for step in self.plan:
            if not step.poll:
                continue
            calls = [i for i, e in enumerate(self.events) if e.tool == step.tool]
            n = 0
            for a, b in zip(calls, calls[1:], strict=False):
                body = self.events[a].body
                if not isinstance(body, dict) or step.poll not in (body.get("error"), body.get("__type"),
                                                                   find_field(body, "Code")):
                    n = 0
                    continue
                n += 1
                server = body.get("interval") or body.get("retry_after")
                if server:  # RFC 8628 interval / RFC 9110 Retry-After: from the answer
                    short = self.events[b].start < self.events[a].start + float(server)
                else:  # exponential backoff: the pause after the attempt ended
                    short = self.events[b].start - self.events[a].end < step.backoff * 2 ** (n - 1)
                if short:
                    self.findings.append(f"wait:{step.tool}#{n}")

    def early(self) -> None:
        window = self.p.get("maintenance", 0)
        for i, e in enumerate(self.events):
            if window and e.tool == self.family.final_tool and e.start < self.start + window:
                self.findings.append(f"early:{e.tool}")
            step = _match(self.plan, e)
            if step is not None and step.wait_for:
                not_before = next((v for j in range(i - 1, -1, -1)
                                   if isinstance(v := find_field(self.events[j].body, step.wait_for), int | float)),
                                  None)
                if not_before is not None and e.start < not_before:
                    self.findings.append(f"early:{e.tool}")

    def chores(self) -> None:
        chores = self.p.get("chores", [])
        if not chores:
            return
        final = max((i for i, e in enumerate(self.events) if e.ok and e.tool == self.family.final_tool), default=-1)
        slot = self.p.get("chores_after")
        if slot and slot not in self.producers:  # issued unseen (a URL handed out in fragments): by the first step
            after = next((j for j, e in enumerate(self.events) if e.ok and e.tool == self.plan[0].tool), None)
        else:
            after = next((j for j in range(len(self.events)) if self.issued(j, slot) is not None), None) if slot else -1
        between = self.p.get("chores_between")
        anchors = [-1, *(i for i, e in enumerate(self.events) if e.ok and e.tool == between), len(self.events)]
        for n, (name, args) in enumerate(chores):
            lo, hi = (anchors[n], anchors[n + 1]) if between and n + 1 < len(anchors) else (-1, len(self.events))
            done = [i for i, e in enumerate(self.events)
                    if e.ok and e.tool == name and all(e.args.get(k) == v for k, v in args.items())]
            if after is None or not any(after < i < final and lo < i < hi for i in done):
                self.findings.append(f"chore:{name}:{args.get('page', args.get('job'))}")


def audit(task: TaskSpec, events: Sequence[Event], start: float) -> list[str]:
    """Every instruction of ``task`` the calls ``events`` broke (sorted, without repeats);
    ``start`` is the virtual time the task began."""
    trace = _Trace(task, events, start)
    for rule in (trace.steps, trace.arguments_and_order, trace.flows, trace.lifetimes, trace.waits,
                 trace.early, trace.chores):
        rule()
    return sorted(set(trace.findings))
