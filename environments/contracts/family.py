"""What a contract family is: issuer + verifier + error bodies + the tools an agent uses, and the
reference plan scripted agents follow. A task is data over a family (see tasks.py).

A family is a stateless object; everything about an episode lives in ``env.state`` so the
environment can be snapshotted by a deep copy. Handlers are methods named ``tool_<name>`` that
take the environment first. A consumer handler asks the real verifier for a :class:`Verdict`
and hands it to ``env.present(...)``, which grades the byte-strict axis from the raw call.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any, ClassVar, Generic, TypeVar

from agentbed.env import ToolEnv
from agentbed.tools import Tool

# The env a family's hooks receive: each family names it (``Family["ContractEnv"]``, imported under
# TYPE_CHECKING there), since env.py imports this module and no module may import it back.
EnvT = TypeVar("EnvT", bound=ToolEnv)


@dataclass(frozen=True)
class Verdict:
    """What the real issuer/verifier says about one presented artifact.

    ``integrity_ok`` is the issuer-faithful axis (signature, format, lookup); ``validity`` is
    None or a validity label (expired, replayed, stale, ...). ``status`` and ``body`` are the
    real API's answer, returned to the agent verbatim.
    """

    integrity_ok: bool
    validity: str | None
    status: int
    body: Any

    @property
    def accepted(self) -> bool:
        return self.integrity_ok and self.validity is None


def accept(body: Any, status: int = 200) -> Verdict:
    return Verdict(True, None, status, body)


def reject_integrity(status: int, body: Any) -> Verdict:
    return Verdict(False, None, status, body)


def reject_validity(label: str, status: int, body: Any) -> Verdict:
    return Verdict(True, label, status, body)


@dataclass(frozen=True)
class Ref:
    """An argument taken from an earlier observation: the body field ``slot``."""

    slot: str


@dataclass(frozen=True)
class Join:
    """An argument assembled from earlier observations: the body fields ``slots`` concatenated
    in order (a URL handed out in fragments)."""

    slots: tuple[str, ...]


def ref_slots(value: Any) -> tuple[str, ...]:
    """The observation fields a plan argument is taken from."""
    if isinstance(value, Ref):
        return (value.slot,)
    return value.slots if isinstance(value, Join) else ()


@dataclass(frozen=True)
class Step:
    """One call of a family's reference plan.

    ``produces``: body fields the agent remembers. ``ttl``: the task parameter holding the
    lifetime of what this step produces ("volatile": stale after any chore), so the oracle
    renews it in time; ``renew``: index of the step that renews it (default: this one).
    ``poll``: repeat while the body's ``error`` equals this, waiting the body's ``interval``.
    ``wait_for``: a body field holding a not-before time (epoch seconds) to wait for first.
    ``backoff``: when polling without a server-given interval, wait ``backoff * 2**(n-1)`` s
    before the n-th retry (exponential backoff).
    """

    tool: str
    args: Mapping[str, Any] = field(default_factory=dict)
    produces: tuple[str, ...] = ()
    ttl: str | None = None
    renew: int | None = None
    poll: str | None = None
    wait_for: str | None = None
    backoff: float = 0.0


class Family(Generic[EnvT]):
    """Base class of a contract family. Subclasses set the class attributes and handlers."""

    name: ClassVar[str]
    title: ClassVar[str]
    catalogue: ClassVar[tuple[int, ...]]  # rows of the spec's catalogue this family implements
    tools: ClassVar[tuple[Tool, ...]]
    defaults: ClassVar[dict[str, Any]] = {}
    # the validity and goal labels the family's verifier assigns, each with the task parameter
    # that enables it ("name": truthy, "name>n": above n) or None on every task (catalog.py lists
    # them per task; tests/contracts/test_list_json.py checks them against what agents produce)
    labels: ClassVar[dict[str, str | None]] = {}
    final_tool: ClassVar[str]  # the call whose success is the task's goal
    # audit findings (environments/contracts/audit.py) every task of the family accepts: fnmatch
    # pattern -> why the plan that produces it still does what the instruction asks
    alternatives: ClassVar[dict[str, str]] = {}

    def setup(self, env: EnvT, rng: Any) -> dict[str, Any]:
        """Per-episode family state (keys, secrets, resources); JSON-like values only."""
        return {}

    def instruction(self, p: Mapping[str, Any]) -> str:
        raise NotImplementedError

    def plan(self, p: Mapping[str, Any]) -> list[Step]:
        raise NotImplementedError

    def accepted(self, p: Mapping[str, Any]) -> dict[str, str]:
        """The audit findings every task of the family accepts (``alternatives``; families whose
        accepted values depend on the task parameters override this)."""
        return dict(self.alternatives)

    def missing_steps(self, env: EnvT) -> list[str]:
        """Steps the instruction requires before the final call that were not done (the final
        call is then refused as SHORTCUT_TAKEN); families with required steps override it."""
        return []

    def on_job(self, env: EnvT, job: str) -> None:
        """A distractor job ran; families whose resources change in the background react here."""

    def handle(self, env: EnvT, name: str, arguments: dict[str, Any]) -> Any:
        return getattr(self, "tool_" + name)(env, **arguments)


FAMILIES: dict[str, Family[Any]] = {}


def register(cls: type[Family[Any]]) -> type[Family[Any]]:
    FAMILIES[cls.name] = cls()
    return cls
