"""Controllers: an overseer sees each proposed action before it is executed.

A controller subclasses :class:`Controller` and overrides any of its three hooks:

- ``before_action(ctx, proposed) -> Verdict``: continue, replace the action, hand the episode to
  another agent, or stop it;
- ``begin(ctx, tools) -> Briefing | None``, called once before the first action of an episode
  (not of a branch, which continues one): the tools to offer (the world is told to accept only
  those, ``ToolEnv.restrict_tools``) and an instruction for the agent (its ``add_instruction``,
  when it has one: a chat model's system prompt);
- ``observe(ctx) -> Shown | None``, called before every action: what the agent is shown instead
  of ``ctx.observation`` (the world and the log keep the true observation).

The hooks are checked when the class is defined: a public method that is not a hook (a misspelt
``before_acton``) is a ``TypeError``, not a hook silently never called; helpers start with ``_``.
Their records go into the step's ``control`` member (``begin`` on the first step, ``shown`` on
each step whose observation was changed, the verdict with who decided it and why), so into the
hash chain. :class:`Chain` runs several controllers as one; :mod:`agentbed.oversee` is the
runner's step that applies them.
"""

from __future__ import annotations

import difflib
import inspect
from dataclasses import dataclass, field
from dataclasses import replace as _with
from typing import TYPE_CHECKING, Any, ClassVar, Literal

if TYPE_CHECKING:
    from collections.abc import Sequence

    from agentbed.agents.base import Action, Agent
    from agentbed.clock import VirtualClock
    from agentbed.tools import Tool


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

    ``reason`` says why; ``by`` names who decided (filled in with the deciding controller's
    ``name`` when left empty). ``record`` is what the controller wants kept of its decision
    (a score, how long a person took): it goes into the step's ``control`` member, so into the
    hash chain, even for a ``continue``, which is otherwise not recorded."""

    kind: Literal["continue", "replace", "handover", "stop"]
    action: Action | None = None
    agent: Agent | None = None
    reason: str = ""
    record: dict[str, Any] | None = None
    by: str = ""

    def to_dict(self) -> dict[str, Any]:
        out: dict[str, Any] = {"kind": self.kind}
        if self.by:
            out["by"] = self.by
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


HOOKS = ("begin", "observe", "before_action")


class Controller:
    """Base class of every overseer. Override any of :data:`HOOKS`; the defaults change nothing.

    ``name`` is who decided, as the log records it (default: the class name). A subclass's
    public methods must be hooks, with the hooks' parameters: anything else is refused when
    the class is defined (name helpers ``_like_this``)."""

    name: ClassVar[str] = ""

    def __init_subclass__(cls, **kwargs: Any) -> None:
        super().__init_subclass__(**kwargs)
        check_hooks(cls)
        if "name" not in cls.__dict__:
            cls.name = cls.__name__

    def begin(self, ctx: StepContext, tools: Sequence[Tool]) -> Briefing | None:
        return None

    def observe(self, ctx: StepContext) -> Shown | None:
        return None

    def before_action(self, ctx: StepContext, proposed: Action) -> Verdict:
        return CONTINUE


def check_hooks(cls: type) -> None:
    """Refuse a public method of a controller class that is not a hook, or a hook whose
    parameters differ from the base class's (it would be called with the wrong arguments)."""
    for attr, value in vars(cls).items():
        if attr.startswith("_") or not inspect.isfunction(value):
            continue  # helpers, properties, class and static methods
        if attr not in HOOKS:
            close = difflib.get_close_matches(attr, HOOKS, n=1, cutoff=0.6)
            hint = f"; did you mean {close[0]!r}?" if close else "; name a helper with a leading underscore"
            raise TypeError(f"{cls.__module__}.{cls.__qualname__}.{attr} is not a controller hook "
                            f"(hooks: {', '.join(HOOKS)}){hint}")
        want = len(inspect.signature(getattr(Controller, attr)).parameters)
        params = inspect.signature(value).parameters.values()
        if any(p.kind in (p.VAR_POSITIONAL, p.VAR_KEYWORD) for p in params):
            continue
        if sum(p.default is p.empty for p in params) > want or len(params) < want:
            raise TypeError(f"{cls.__module__}.{cls.__qualname__}.{attr} takes {len(params)} parameters; "
                            f"the hook is {attr}{inspect.signature(getattr(Controller, attr))}")


def name_of(controller: Any) -> str:
    """Who a controller is in the log: its ``name`` (a class without one: the class's name; a
    controller whose ``name`` is "" signs nothing, as the replay of recorded verdicts does)."""
    name = getattr(controller, "name", None)
    return type(controller).__name__ if name is None else str(name)


def begin_of(controller: Any, ctx: StepContext, tools: Sequence[Tool]) -> Briefing | None:
    hook = getattr(controller, "begin", None)
    return hook(ctx, tools) if hook is not None else None


def observe_of(controller: Any, ctx: StepContext) -> Shown | None:
    hook = getattr(controller, "observe", None)
    return hook(ctx) if hook is not None else None


def decide(controller: Any, ctx: StepContext, proposed: Action) -> Verdict:
    """``controller``'s verdict on ``proposed``, signed with its name unless it named someone."""
    hook = getattr(controller, "before_action", None)
    verdict = hook(ctx, proposed) if hook is not None else CONTINUE
    if verdict.by or (verdict.kind == "continue" and not verdict.record) or not name_of(controller):
        return verdict
    return _with(verdict, by=name_of(controller))


class Chain(Controller):
    """Several controllers as one, in order: briefings intersect their tools and join their
    instructions; each ``observe`` sees what the one before it showed; the first verdict that
    is not a plain ``continue`` wins (the first recorded continue is kept otherwise). It signs
    nothing itself: each verdict names the controller in it that decided."""

    name = ""

    def __init__(self, controllers: Sequence[Any]) -> None:
        self.controllers = [c for c in controllers if c is not None]

    def begin(self, ctx: StepContext, tools: Sequence[Tool]) -> Briefing | None:
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
            view = ctx if shown is None else _with(ctx, observation=shown.observation)
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
            verdict = decide(c, ctx, proposed)
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
