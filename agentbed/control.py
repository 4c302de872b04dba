"""Controller hooks: an overseer sees each proposed action before it is executed."""

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


class Controller(Protocol):
    def before_action(self, ctx: StepContext, proposed: Action) -> Verdict: ...
