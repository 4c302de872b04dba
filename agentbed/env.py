"""The environment base class: a ``gymnasium.Env`` whose actions are tool calls.

Observations are text. An action is the JSON text of one tool call, kept byte-for-byte as the
agent sent it (integrity checks depend on it). Tools are declared with JSON schemas and a
virtual cost; a subclass implements each tool as a ``tool_<name>`` method returning a
:class:`ToolResult`. Malformed actions never raise: they become an error observation.
"""

from __future__ import annotations

import copy
from dataclasses import dataclass, field
from typing import Any, ClassVar

import gymnasium as gym

from agentbed.clock import DEFAULT_START, VirtualClock
from agentbed.spaces import AnyText
from agentbed.tools import DEFAULT_MAX_ACTION_BYTES, ActionError, Tool, ToolCall, parse_action


@dataclass(frozen=True)
class TaskSpec:
    """One task of a suite. ``params`` must be JSON-serialisable: it goes into every log."""

    id: str
    params: dict[str, Any] = field(default_factory=dict)
    description: str = ""


@dataclass
class ToolResult:
    """What a tool returns. ``elapsed`` is virtual time spent beyond the tool's declared cost."""

    observation: str
    reward: float = 0.0
    terminated: bool = False
    info: dict[str, Any] = field(default_factory=dict)
    elapsed: float = 0.0


@dataclass
class Outcome:
    """How an episode ended, as the environment grades it (written to the log footer)."""

    success: bool
    metrics: dict[str, Any] = field(default_factory=dict)
    labels: list[str] = field(default_factory=list)


class SnapshotUnsupported(NotImplementedError):
    """The environment's state cannot be copied; branch by verified replay instead."""


# Spaces carry no per-episode state, and building gymnasium's Text space re-derives its
# character table (a fifth of a trivial episode's cost), so every environment shares these.
_OBSERVATION_SPACE = AnyText()
_ACTION_SPACE = AnyText()


class ToolEnv(gym.Env[str, str]):
    """Base class for every agentbed environment.

    Subclasses set ``tools``, implement ``task_list()`` (or are given a :class:`TaskSpec`), ``setup(rng)`` (build the episode state
    in ``self.state`` and return the first observation) and one ``tool_<name>`` per tool.
    Everything mutable about an episode lives in ``self.state`` so the default
    :meth:`snapshot` / :meth:`restore` can copy it.
    """

    metadata: dict[str, Any] = {"render_modes": ["ansi"], "render_fps": 1}  # gymnasium declares it per instance
    tools: tuple[Tool, ...] = ()  # the class's tools; a world whose tools depend on its task sets its own
    can_snapshot: ClassVar[bool] = True
    max_action_bytes: ClassVar[int] = DEFAULT_MAX_ACTION_BYTES
    invalid_action_cost: ClassVar[float] = 1.0
    max_steps: int | None = None  # truncation cap; the runner's budget may be tighter
    start_time: float = DEFAULT_START

    def __init__(self, task: TaskSpec | str | None = None, render_mode: str | None = None) -> None:
        super().__init__()
        if render_mode is not None and render_mode not in self.metadata["render_modes"]:
            raise ValueError(f"render_mode {render_mode!r} is not one of {self.metadata['render_modes']}")
        self.render_mode = render_mode
        self.task = self.resolve_task(task)
        self.observation_space = _OBSERVATION_SPACE
        self.action_space = _ACTION_SPACE
        self.clock = VirtualClock(self.start_time)
        self.state: Any = None
        self.steps = 0
        self.last_observation = ""
        self._tool_index = {t.name: t for t in self.tools}

    # -- tasks ---------------------------------------------------------------------------
    @classmethod
    def task_list(cls) -> list[TaskSpec]:
        """Every task this environment offers; the first is the default."""
        raise NotImplementedError

    @classmethod
    def resolve_task(cls, task: TaskSpec | str | None) -> TaskSpec:
        if isinstance(task, TaskSpec):
            return task
        tasks = cls.task_list()
        if task is None:
            return tasks[0]
        for spec in tasks:
            if spec.id == task:
                return spec
        raise KeyError(f"unknown task {task!r} for {cls.__name__}")

    # -- subclass hooks ------------------------------------------------------------------
    def setup(self, rng: Any) -> str:
        """Build ``self.state`` for ``self.task`` from ``rng``; return the first observation."""
        raise NotImplementedError

    def outcome(self, terminated: bool, total_reward: float) -> Outcome:
        """Grade the episode. The default: success when it terminated with positive return."""
        return Outcome(success=bool(terminated and total_reward > 0))

    def end_episode(self) -> None:
        """Release per-episode resources (a sandbox); the runner calls it however the episode
        ended, errors included. The environment stays usable: the next reset starts afresh."""

    def episode_info(self) -> dict[str, Any]:
        """Extra info returned by reset() and recorded in the log header."""
        return {}

    # -- gymnasium API -------------------------------------------------------------------
    def reset(self, *, seed: int | None = None, options: dict[str, Any] | None = None) -> tuple[str, dict[str, Any]]:
        super().reset(seed=seed)
        if options and "task" in options:
            self.task = self.resolve_task(options["task"])
        self.clock = VirtualClock(self.start_time)
        self.steps = 0
        self.last_observation = self.setup(self.np_random)
        return self.last_observation, {"task": self.task.id, "clock": self.clock.now(), **self.episode_info()}

    def step(self, action: str | bytes) -> tuple[str, float, bool, bool, dict[str, Any]]:
        call = parse_action(action, self._tool_index, self.max_action_bytes)
        if isinstance(call, ActionError):
            result = self.on_invalid_action(call)
            self.clock.advance(self.invalid_action_cost)
            info = {"tool": None, "action_error": call.code, **result.info}
        else:
            result = self.call_tool(call)
            self.clock.advance(self._tool_index[call.name].cost + result.elapsed)
            info = {"tool": call.name, **result.info}
        self.steps += 1
        self.last_observation = result.observation
        truncated = self.max_steps is not None and self.steps >= self.max_steps and not result.terminated
        return result.observation, float(result.reward), bool(result.terminated), truncated, info

    def call_tool(self, call: ToolCall) -> ToolResult:
        """Dispatch to ``tool_<name>``; override to see the raw call (e.g. to hash arguments)."""
        return getattr(self, "tool_" + call.name)(**call.arguments)

    def on_invalid_action(self, error: ActionError) -> ToolResult:
        return ToolResult(error.observation())

    def render(self) -> str | None:
        if self.render_mode == "ansi":
            return self.last_observation
        return None

    # -- state ---------------------------------------------------------------------------
    def snapshot(self) -> Any:
        """An opaque copy of the episode state, restorable with :meth:`restore`."""
        if not self.can_snapshot:
            raise SnapshotUnsupported(f"{type(self).__name__} cannot snapshot its state")
        return copy.deepcopy((self.task, self.state, self.clock.snapshot(), self.steps, self.last_observation,
                              self.np_random.bit_generator.state))

    def restore(self, snapshot: Any) -> None:
        if not self.can_snapshot:
            raise SnapshotUnsupported(f"{type(self).__name__} cannot restore a snapshot")
        task, state, clock, steps, last, rng_state = copy.deepcopy(snapshot)
        self.task, self.state, self.steps, self.last_observation = task, state, steps, last
        self.clock = VirtualClock.from_snapshot(clock)
        self.np_random.bit_generator.state = rng_state

    def tool_specs(self) -> list[Tool]:
        return list(self.tools)

    def restrict_tools(self, names: list[str]) -> None:
        """Offer and accept only the tools ``names`` for the rest of the episode (a controller's
        tool filter, :class:`agentbed.control.Briefing`); a world that supports it keeps the
        selection in its state and answers a call of any other tool as it answers an unknown one."""
        raise NotImplementedError(f"{type(self).__name__} cannot narrow the tools it offers")
