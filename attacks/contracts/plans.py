"""A bounded, seeded search over a task's plans: the reference solution changed in every small way.

The reference calls are recorded from the oracle as a script (:class:`Call`s whose artifact
arguments are :class:`Pick`s: "the latest value of this field", or an earlier one), once as
played and once without its renewals (the calls that re-ran an earlier step). Each script is
then changed one way at a time (:func:`variants`):

* ``skip``: any one or two calls before the final one left out;
* ``move``: each chore or wait, and the chores as one block, moved to every gap;
* ``vary``: every instructed argument over boundary values (integers 0, 1, n-1, n+1, 2n, 3n,
  100; the other enum values; a flipped boolean; an empty string), in one call and in all calls
  of that tool; every wait 0, half or just short; a backoff schedule made constant or linear;
* ``duplicate``: any call made twice; ``reorder``: any two neighbouring calls swapped;
* ``mix``: a call that starts a flow made twice, and every later call's artifacts taken from
  either flow, in every combination.

:class:`ScriptAgent` plays a script call by call whatever the answers, and keeps what it saw as
:class:`~environments.contracts.audit.Event`s for the instruction audit.
"""

from __future__ import annotations

import itertools
import json
import random
from collections.abc import Iterator, Mapping, Sequence
from dataclasses import dataclass, field, replace
from typing import Any

from agentbed.agents.base import Action, Agent
from agentbed.env import TaskSpec
from agentbed.runner import Budget, EpisodeRecord, EpisodeSpec, run_episode
from agentbed.tools import Tool, make_action
from environments.contracts.agents import (
    CHORE_TOOLS,
    PlanAgent,
    artifact_value,
    find_field,
    full_plan,
    oracle,
    parse_time,
)
from environments.contracts.audit import Event
from environments.contracts.env import ContractEnv
from environments.contracts.family import FAMILIES, Join, Ref

MAX_PAIRS = 40  # skipped pairs sampled per script when there are more
INT_BOUNDS = (0, 1, 100)


@dataclass(frozen=True)
class Pick:
    """An argument taken from the ``n``-th value seen of the body field ``slot`` (-1: the latest)."""

    slot: str
    n: int = -1


@dataclass(frozen=True)
class Cat:
    """The latest values of ``slots`` concatenated (a URL handed out in fragments)."""

    slots: tuple[str, ...]


@dataclass(frozen=True)
class Call:
    tool: str
    args: Mapping[str, Any] = field(default_factory=dict)
    step: int | None = None  # the reference plan's step it plays (None: a chore or a wait)


Script = list[Call]


def produced(task: TaskSpec) -> dict[str, tuple[str, ...]]:
    """tool -> the body fields its answers hand out, from the task's reference plan."""
    out: dict[str, tuple[str, ...]] = {}
    for step in full_plan(task):
        out[step.tool] = tuple(dict.fromkeys(out.get(step.tool, ()) + step.produces))
    return out


class ScriptAgent(Agent):
    """Plays a script whatever the answers; keeps every call and answer it saw."""

    def __init__(self, name: str, script: Script) -> None:
        self.name = name
        self.script = script

    def reset(self, *, seed: int, task: Any = None) -> None:
        self.fields = produced(task)
        self.seen: dict[str, list[Any]] = {}
        self.events: list[Event] = []
        self.start: float | None = None
        self.i = 0
        self.sent: tuple[str, dict[str, Any]] | None = None

    def _absorb(self, obs: dict[str, Any]) -> None:
        known = self.events[-1].start if self.events else (self.start or 0.0)
        now = parse_time(obs["now"]) if "now" in obs else known
        if self.start is None:
            self.start = now
        if self.sent is None:
            return
        tool, args = self.sent
        # an answer without the envelope is the engine's refusal of a malformed call
        status, body = (obs.get("status", 200), obs.get("body")) if "body" in obs else (400, obs)
        # an answer's "now" is when the call began, except a job's, which reports its end
        began = now - float(body.get("duration_s", 0)) if tool == "run_job" and isinstance(body, dict) else now
        if self.events:
            last = self.events[-1]
            self.events[-1] = replace(last, end=began)
        self.events.append(Event(tool, args, began, began, status, body))
        if status < 400:
            for slot in self.fields.get(tool, ()):
                value = find_field(body, slot)
                if value not in (None, ""):
                    self.seen.setdefault(slot, []).append(artifact_value(value))

    def _value(self, arg: Any) -> Any:
        if isinstance(arg, Pick):
            seen = self.seen.get(arg.slot, [])
            return seen[arg.n] if -len(seen) <= arg.n < len(seen) else ""
        if isinstance(arg, Cat):
            return "".join(str(self._value(Pick(s))) for s in arg.slots)
        return arg

    def act(self, observation: str, tools: Sequence[Tool]) -> Action:
        try:
            obs = json.loads(observation)
        except ValueError:
            obs = {}
        self._absorb(obs if isinstance(obs, dict) else {})
        if self.i >= len(self.script):
            self.sent = None
            return Action(make_action("end_task", reason="script finished"))
        call = self.script[self.i]
        self.i += 1
        args = {k: self._value(v) for k, v in call.args.items()}
        self.sent = (call.tool, args)
        return Action(make_action(call.tool, **args))

    def close(self, last_observation: str | None, costs: Mapping[str, float]) -> list[Event]:
        """The events, with the answer to the call that ended the episode (the agent is not asked
        to act after it) and the last call's end from its declared cost."""
        if self.sent is not None and last_observation is not None:
            self._absorb(json.loads(last_observation))
            self.sent = None
        if self.events:
            last = self.events[-1]
            self.events[-1] = replace(last, end=last.start + costs.get(last.tool, 0.0))
        return self.events


def play(task: TaskSpec, agent: Agent, seed: int = 0) -> tuple[EpisodeRecord, list[Event]]:
    """One episode of ``task``; with a :class:`ScriptAgent`, also the calls it made."""
    spec = EpisodeSpec("contracts", task.id, agent.name, seed, {"feedback": "off"})
    env = ContractEnv(task.id)
    record = run_episode(env, agent, spec, budget=Budget(max_steps=80))
    if not isinstance(agent, ScriptAgent):
        return record, []
    return record, agent.close(env.last_observation, {t.name: t.cost for t in env.tools})


class _Recorder(Agent):
    """The oracle, with each call it makes written down as a script call."""

    def __init__(self) -> None:
        self.inner: PlanAgent = oracle()
        self.name = "oracle"

    def reset(self, *, seed: int, task: Any = None) -> None:
        self.inner.reset(seed=seed, task=task)
        self.script: Script = []

    def act(self, observation: str, tools: Sequence[Tool]) -> Action:
        action = self.inner.act(observation, tools)
        sent = json.loads(action.text)
        if sent["tool"] == "end_task":
            return action
        pending = self.inner.pending
        if pending is not None and self.inner.plan[pending].tool == sent["tool"]:
            step = self.inner.plan[pending]
            args = {k: Pick(v.slot) if isinstance(v, Ref) else Cat(v.slots) if isinstance(v, Join) else v
                    for k, v in step.args.items()}
            self.script.append(Call(step.tool, args, pending))
        else:
            self.script.append(Call(sent["tool"], sent["arguments"]))
        return action


def reference_scripts(task: TaskSpec, seed: int = 0) -> dict[str, Script]:
    """The oracle's calls on ``seed`` as played (``reference``) and without the calls that re-ran
    an earlier step (``no-renewal``)."""
    recorder = _Recorder()
    record, _ = play(task, recorder, seed)
    if not record.success:
        raise AssertionError(f"{task.id}: the oracle failed ({record.labels})")
    played = recorder.script
    kept: Script = []
    highest = -1
    for call in played:
        if call.step is not None:
            previous = next((c for c in reversed(kept) if c.tool != "wait"), None)
            polling = previous is not None and previous.step == call.step
            if call.step <= highest and not polling:
                continue  # a renewal: the oracle went back to re-run a step it had done
            highest = max(highest, call.step)
        kept.append(call)
    return {"reference": played, "no-renewal": kept}


# -- the changes --------------------------------------------------------------------------
def _schema(task: TaskSpec, tool: str) -> dict[str, Any]:
    family = FAMILIES[task.params["family"]]
    found = next((t for t in (*family.tools, *ContractEnv(task.id).tools) if t.name == tool), None)
    return (found.parameters.get("properties", {}) if found is not None else {})


def _bounds(value: Any, schema: Mapping[str, Any]) -> list[Any]:
    if isinstance(value, bool):
        return [not value]
    if isinstance(value, int):
        return sorted({*INT_BOUNDS, value - 1, value + 1, 2 * value, 3 * value} - {value})
    if isinstance(value, float):
        return sorted({0.0, value / 2, max(value - 0.5, 0.0)} - {value})
    if isinstance(value, str):
        return [v for v in schema.get("enum", []) if v != value] + ([""] if value else [])
    return []


def _literal_slots(call: Call) -> list[str]:
    return [k for k, v in call.args.items() if not isinstance(v, Pick | Cat)]


def variants(task: TaskSpec, base: Script, seed: int = 0) -> Iterator[tuple[str, Script]]:
    """Every change of ``base`` described above, each with a short description."""
    n = len(base)
    body, final = base[:-1], base[-1]
    rng = random.Random(f"{seed}:{task.id}")
    for i in range(n - 1):
        yield f"skip {i}:{base[i].tool}", body[:i] + body[i + 1:] + [final]
    pairs = list(itertools.combinations(range(n - 1), 2))
    for i, j in (pairs if len(pairs) <= MAX_PAIRS else rng.sample(pairs, MAX_PAIRS)):
        yield f"skip {i},{j}", [c for k, c in enumerate(body) if k not in (i, j)] + [final]
    movable = [i for i, c in enumerate(body) if c.tool in (*CHORE_TOOLS, "wait")]
    chores = [i for i in movable if body[i].tool in CHORE_TOOLS]
    for group in [[i] for i in movable] + ([chores] if len(chores) > 1 else []):
        rest = [c for k, c in enumerate(body) if k not in group]
        for gap in range(len(rest) + 1):
            yield f"move {group} to {gap}", rest[:gap] + [body[k] for k in group] + rest[gap:] + [final]
    for i, call in enumerate(base):
        schema = _schema(task, call.tool)
        for name in _literal_slots(call):
            for value in _bounds(call.args[name], schema.get(name, {})):
                changed = replace(call, args={**call.args, name: value})
                yield f"vary {i}:{call.tool}.{name}={value!r}", base[:i] + [changed] + base[i + 1:]
                if call.tool != "wait" and sum(c.tool == call.tool for c in base) > 1:
                    every = [replace(c, args={**c.args, name: value}) if c.tool == call.tool and name in c.args
                             else c for c in base]
                    yield f"vary every {call.tool}.{name}={value!r}", every
    waits = [i for i, c in enumerate(base) if c.tool == "wait"]
    if len(waits) > 1:
        first = float(base[waits[0]].args["seconds"])
        for name, seconds in (("constant", lambda k: first), ("linear", lambda k: first * (k + 1))):
            schedule = {i: seconds(k) for k, i in enumerate(waits)}
            yield f"waits {name}", [replace(c, args={"seconds": schedule[i]}) if i in schedule else c
                                    for i, c in enumerate(base)]
    for i in range(n - 1):
        yield f"duplicate {i}:{base[i].tool}", base[:i + 1] + [base[i]] + base[i + 1:]
    for i in range(n - 2):
        yield f"swap {i},{i + 1}", base[:i] + [base[i + 1], base[i]] + base[i + 2:]
    yield from _mixes(task, base)


def _mixes(task: TaskSpec, base: Script) -> Iterator[tuple[str, Script]]:
    """A flow-starting call made twice, later calls' artifacts from either flow."""
    fields = produced(task)
    for i, call in enumerate(base[:-1]):
        slots = set(fields.get(call.tool, ()))
        uses = [(j, name) for j in range(i + 1, len(base)) for name, v in base[j].args.items()
                if isinstance(v, Pick) and v.slot in slots and v.n == -1]
        if not slots or not uses or call.tool in CHORE_TOOLS:
            continue
        doubled = base[:i + 1] + [call] + base[i + 1:]
        uses = [(j + 1, name) for j, name in uses][:4]  # at most 16 combinations per flow
        for choice in itertools.product((-1, -2), repeat=len(uses)):
            if all(c == -1 for c in choice):
                continue
            script = list(doubled)
            for (j, name), n in zip(uses, choice, strict=True):
                script[j] = replace(script[j], args={**script[j].args, name: Pick(script[j].args[name].slot, n)})
            picks = ",".join(f"{script[j].tool}.{name}={'flow 1' if n == -2 else 'flow 2'}"
                             for (j, name), n in zip(uses, choice, strict=True))
            yield f"mix {i}:{call.tool} {picks}", script


MAX_PLANS = 200  # per task; above it a seeded sample (the references always kept)


def search_plans(task: TaskSpec, seed: int = 0, limit: int = MAX_PLANS) -> tuple[list[tuple[str, Script]], int]:
    """The task's plans to play: both reference scripts and their variants without repeats, at
    most ``limit`` (a sample seeded by ``seed`` and the task), and how many there were in all."""
    seen: set[str] = set()
    out: list[tuple[str, Script]] = []
    for name, base in reference_scripts(task).items():
        for desc, script in [("", base), *variants(task, base, seed)]:
            if repr(script) not in seen:
                seen.add(repr(script))
                out.append((f"{name} {desc}".strip(), script))
    if len(out) <= limit:
        return out, len(out)
    fixed = [p for p in out if p[0] in ("reference", "no-renewal")]
    rest = [p for p in out if p not in fixed]
    return fixed + random.Random(f"{seed}:{task.id}").sample(rest, limit - len(fixed)), len(out)
