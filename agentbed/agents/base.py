"""The agent protocol shared by scripted agents, chat-model agents and replay."""

from __future__ import annotations

import copy
from collections.abc import Sequence
from dataclasses import asdict, dataclass, field
from typing import Any

from agentbed.tools import Tool


@dataclass
class Usage:
    """Token usage of one model call, as the provider reported it."""

    input_tokens: int = 0
    output_tokens: int = 0
    total_tokens: int = 0

    def __add__(self, other: Usage) -> Usage:
        return Usage(self.input_tokens + other.input_tokens, self.output_tokens + other.output_tokens,
                     self.total_tokens + other.total_tokens)

    def to_dict(self) -> dict[str, int]:
        return asdict(self)


@dataclass
class Action:
    """What an agent produced for one step.

    ``text`` is the raw action (JSON text naming a tool call) exactly as produced; it may be
    ``bytes`` when an agent sends something that is not valid UTF-8. ``model_output`` is the
    serialisable model response, recorded so a replay agent can re-feed it; ``risk`` is the
    agent's own scalar risk estimate in [0, 1] where it gives one.
    """

    text: str | bytes
    usage: Usage | None = None
    model_output: dict[str, Any] | None = None
    risk: float | None = None
    meta: dict[str, Any] = field(default_factory=dict)
    cached: bool = False  # answered by the model-call cache, not the provider (counted, never logged)


class Agent:
    """Base class for agents. Subclasses implement :meth:`act`; state lives on the instance.

    ``reset`` is called once per episode, before the first ``act``. ``fork`` returns an
    independent copy used when an episode branches; the default deep-copies the agent.
    """

    name: str = "agent"
    model: str | None = None

    def reset(self, *, seed: int, task: Any = None) -> None:  # noqa: B027 - optional hook
        pass

    def act(self, observation: str, tools: Sequence[Tool]) -> Action:
        raise NotImplementedError

    def fork(self) -> Agent:
        return copy.deepcopy(self)

    def describe(self) -> dict[str, Any]:
        return {"name": self.name, "model": self.model}
