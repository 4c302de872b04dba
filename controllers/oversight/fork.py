"""Reconstructing the state after a trajectory prefix, by snapshot or by verified replay.

Uses the engine's :mod:`agentbed.branch` when it is installed; otherwise this small adapter
with the same names (``Prefix``, ``PrefixMismatch``, ``materialize``) stands in. A replay
that does not reproduce a recorded observation raises :class:`PrefixMismatch`; the dataset
builder discards that branch and counts it.
"""

from __future__ import annotations

import random
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

from agentbed.control import StepView
from agentbed.env import ToolEnv

try:  # the engine's primitive, once it exists
    from agentbed.branch import PrefixMismatch  # type: ignore[attr-defined]
except ImportError:  # pragma: no cover - depends on the engine's progress

    class PrefixMismatch(RuntimeError):  # type: ignore[no-redef]
        """A replayed prefix diverged from the recording."""

        def __init__(self, step: int, field: str, expected: Any, got: Any) -> None:
            super().__init__(f"replay diverged at step {step} ({field})")
            self.step, self.field, self.expected, self.got = step, field, expected, got


@dataclass
class Prefix:
    """A recorded prefix: observations[0] from reset(), observations[i] after actions[i-1]."""

    task: str
    seed: int
    actions: list[str | bytes] = field(default_factory=list)
    observations: list[str] = field(default_factory=list)
    history: list[StepView] = field(default_factory=list)


def replay(make_env: Callable[[], ToolEnv], prefix: Prefix, at_step: int,
           global_seed: int | None = None) -> ToolEnv:
    """A fresh environment driven through ``prefix.actions[:at_step]``, every observation checked.

    ``global_seed`` seeds Python's ``random`` first, for components that draw from it.
    """
    if global_seed is not None:
        random.seed(global_seed)
    env = make_env()
    observation, _ = env.reset(seed=prefix.seed)
    if observation != prefix.observations[0]:
        env.close()
        raise PrefixMismatch(0, "observation", prefix.observations[0], observation)
    for i, action in enumerate(prefix.actions[:at_step]):
        observation, *_ = env.step(action)
        if observation != prefix.observations[i + 1]:
            env.close()
            raise PrefixMismatch(i + 1, "observation", prefix.observations[i + 1], observation)
    return env


class Checkpoint:
    """The state at one step of a live trajectory, reproducible once per branch.

    ``method`` is ``snapshot`` (copy the live environment's state and restore it per branch),
    ``replay`` (replay the prefix into a fresh environment per branch, verified) or ``auto``
    (snapshot where the environment supports it).
    """

    def __init__(self, live_env: ToolEnv, make_env: Callable[[], ToolEnv], prefix: Prefix, method: str = "auto",
                 global_seed: int | None = None) -> None:
        if method not in {"auto", "snapshot", "replay"}:
            raise ValueError(f"method must be auto, snapshot or replay, not {method!r}")
        self.method = "snapshot" if method == "auto" and live_env.can_snapshot else method
        if method == "auto" and not live_env.can_snapshot:
            self.method = "replay"
        self.make_env, self.prefix, self.global_seed = make_env, prefix, global_seed
        self.at_step = len(prefix.actions)
        self._snapshot = live_env.snapshot() if self.method == "snapshot" else None
        self._template = live_env

    def materialize(self) -> ToolEnv:
        """An environment in the checkpoint's state (raises PrefixMismatch on a bad replay)."""
        if self._snapshot is None:
            return replay(self.make_env, self.prefix, self.at_step, self.global_seed)
        env = self.make_env()
        env.reset(seed=self.prefix.seed)
        env.restore(self._snapshot)
        if env.last_observation != self.prefix.observations[-1]:
            raise PrefixMismatch(self.at_step, "observation", self.prefix.observations[-1], env.last_observation)
        return env
