"""Controller hooks: an overseer sees each proposed action before it is executed.

Besides :meth:`Controller.before_action` (required), a controller may have two optional hooks,
for defenses that sit between the world and the agent rather than after the agent:

- ``begin(ctx, tools) -> Briefing | None``, called once before the first action of an episode
  (not of a branch, which continues one): the tools to offer (the world is told to accept only
  those, ``ToolEnv.restrict_tools``) and an instruction for the agent (its ``add_instruction``, when it has one: a chat model's system
  prompt);
- ``observe(ctx) -> Shown | None``, called before every action: what the agent is shown instead
  of ``ctx.observation`` (the world and the log keep the true observation).

Their records go into the step's ``control`` member (``begin`` on the first step, ``shown`` on
each step whose observation was changed), so into the hash chain. :class:`Chain` runs several
controllers as one.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, Literal, Protocol

if TYPE_CHECKING:
    from agentbed.agents.base import Action, Agent
    from agentbed.clock import VirtualClock


@dataclass(frozen=True)
class StepView:
    """One executed step as a controller sees it."""

    observation: str
    action: str | bytes
    reward: float
    info: dict[str, Any]


@dataclass
class StepContext:
    """What a controller knows before the action at ``step`` is executed: the prefix only."""

    step: int
    observation: str
    history: list[StepView]
    clock: VirtualClock
    task: str
    agent: Agent
    risk_scores: list[float] = field(default_factory=list)


@dataclass(frozen=True)
class Verdict:
    """continue / replace the action / hand the episode to another agent / stop it.

    ``record`` is what the controller wants kept of its decision (who decided, how long it
    took): it goes into the step's ``control`` member, so into the hash chain, even for a
    ``continue``, which is otherwise not recorded."""

    kind: Literal["continue", "replace", "handover", "stop"]
    action: Action | None = None
    agent: Agent | None = None
    reason: str = ""
    record: dict[str, Any] | None = None

    def to_dict(self) -> dict[str, Any]:
        out: dict[str, Any] = {"kind": self.kind}
        if self.reason:
            out["reason"] = self.reason
        if self.agent is not None:
            out["agent"] = self.agent.name
        if self.record:
            out["decision"] = self.record
        return out


CONTINUE = Verdict("continue")


def replace(action: Action, reason: str = "") -> Verdict:
    return Verdict("replace", action=action, reason=reason)


def handover(agent: Agent, reason: str = "") -> Verdict:
    return Verdict("handover", agent=agent, reason=reason)


def stop(reason: str = "") -> Verdict:
    return Verdict("stop", reason=reason)


@dataclass(frozen=True)
class Briefing:
    """A controller's set-up of an episode: ``tools`` to offer (None: all), an ``instruction``
    for the agent ("" : none), and what it wants recorded of the decision."""

    tools: tuple[str, ...] | None = None
    instruction: str = ""
    record: dict[str, Any] = field(default_factory=dict)


@dataclass(frozen=True)
class Shown:
    """What a controller shows the agent at one step instead of the true observation."""

    observation: str
    record: dict[str, Any] = field(default_factory=dict)


class Controller(Protocol):
    def before_action(self, ctx: StepContext, proposed: Action) -> Verdict: ...


def begin_of(controller: Any, ctx: StepContext, tools: list[Any]) -> Briefing | None:
    hook = getattr(controller, "begin", None)
    return hook(ctx, tools) if hook is not None else None


def observe_of(controller: Any, ctx: StepContext) -> Shown | None:
    hook = getattr(controller, "observe", None)
    return hook(ctx) if hook is not None else None


class Chain:
    """Several controllers as one: briefings intersect their tools and join their instructions;
    each ``observe`` sees what the one before it showed; the first verdict that is not a plain
    ``continue`` wins (records of continues are kept, by position)."""

    def __init__(self, controllers: list[Any]) -> None:
        self.controllers = [c for c in controllers if c is not None]

    def begin(self, ctx: StepContext, tools: list[Any]) -> Briefing | None:
        briefings = [b for c in self.controllers if (b := begin_of(c, ctx, tools)) is not None]
        if not briefings:
            return None
        chosen = [set(b.tools) for b in briefings if b.tools is not None]
        offered = tuple(t.name for t in tools if all(t.name in c for c in chosen)) if chosen else None
        records = [b.record for b in briefings]
        return Briefing(offered, "".join(b.instruction for b in briefings),
                        records[0] if len(records) == 1 else {"chain": records})

    def observe(self, ctx: StepContext) -> Shown | None:
        shown, records = None, []
        for c in self.controllers:
            view = ctx if shown is None else StepContext(ctx.step, shown.observation, ctx.history, ctx.clock,
                                                          ctx.task, ctx.agent, ctx.risk_scores)
            now = observe_of(c, view)
            if now is not None:
                shown = now
                records.append(now.record)
        if shown is None:
            return None
        return Shown(shown.observation, records[0] if len(records) == 1 else {"chain": records})

    def before_action(self, ctx: StepContext, proposed: Action) -> Verdict:
        kept = None
        for c in self.controllers:
            verdict = c.before_action(ctx, proposed)
            if verdict.kind != "continue":
                return verdict
            if verdict.record and kept is None:
                kept = verdict
        return kept or CONTINUE


def chain(*controllers: Any) -> Any:
    """The controllers given (None ones left out) as one controller; None when there is none."""
    present = [c for c in controllers if c is not None]
    if not present:
        return None
    return present[0] if len(present) == 1 else Chain(present)
