"""Branching: rebuild an episode's state at step t and run candidate continuations from it.

A :class:`ForkPoint` reconstructs the environment after the first ``at_step`` actions of a
prefix, either by snapshot/restore (the prefix is replayed once, then copied per branch) or
by replaying the prefix for every branch. Every replayed observation is compared with the
recorded one, so a replay that does not reproduce the prefix raises :class:`PrefixMismatch`
instead of silently branching from a different state. Each continuation is an ordinary
episode through :func:`agentbed.runner.run_episode`, logged with a link to its parent.
"""

from __future__ import annotations

import random
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from agentbed.agents.base import Agent
from agentbed.control import Controller, StepView
from agentbed.env import SnapshotUnsupported, ToolEnv
from agentbed.log import TrajectoryWriter, decode_action, read_log
from agentbed.runner import Budget, EpisodeRecord, EpisodeSpec, run_episode


class PrefixMismatch(RuntimeError):
    """A replay of the prefix diverged from the recording."""

    def __init__(self, step: int, field: str, expected: Any, got: Any) -> None:
        super().__init__(f"replay diverged at step {step} ({field}): expected {_short(expected)}, got {_short(got)}")
        self.step, self.field, self.expected, self.got = step, field, expected, got


def _short(value: Any, limit: int = 120) -> str:
    text = repr(value)
    return text if len(text) <= limit else text[:limit] + "..."


@dataclass
class Prefix:
    """A recorded trajectory prefix: ``observations[0]`` comes from reset(), ``observations[i]``
    follows ``actions[i-1]``."""

    task: str
    seed: int
    actions: list[str | bytes]
    observations: list[str]
    episode_id: str = ""
    digest: str = ""
    rewards: list[float] | None = None
    infos: list[dict[str, Any]] | None = None

    @classmethod
    def from_log(cls, path: str | Path) -> Prefix:
        records = read_log(path)
        header = records[0]
        steps = [r for r in records if r.get("type") == "step"]
        return cls(task=header["task"], seed=header["seed"],
                   actions=[decode_action(r["action"]) for r in steps],
                   observations=[header["observation"]] + [r["observation"] for r in steps],
                   episode_id=header["episode_id"], digest=records[-1].get("hash", ""),
                   rewards=[r["reward"] for r in steps], infos=[r["info"] for r in steps])

    def __len__(self) -> int:
        return len(self.actions)


class ForkPoint:
    """The state after ``at_step`` actions of ``prefix``, from which branches are run.

    ``method``: ``"snapshot"`` replays once and restores a snapshot per branch; ``"replay"``
    replays the prefix for every branch; ``"auto"`` snapshots when the environment can.
    ``seed_global_random`` seeds Python's ``random`` before each replay, for components that
    draw from it (ALFWorld's handcoded expert).
    """

    def __init__(self, make_env: Callable[[], ToolEnv], prefix: Prefix, at_step: int, method: str = "auto",
                 seed_global_random: bool = True) -> None:
        if not 0 <= at_step <= len(prefix):
            raise ValueError(f"at_step {at_step} is outside the prefix (0..{len(prefix)})")
        if method not in {"auto", "snapshot", "replay"}:
            raise ValueError(f"method must be auto, snapshot or replay, not {method!r}")
        self.make_env, self.prefix, self.at_step = make_env, prefix, at_step
        self.method, self.seed_global_random = method, seed_global_random
        self._snapshot: Any = None
        self.replays = 0  # prefix replays performed (the cost the snapshot method saves)

    def _replay(self) -> ToolEnv:
        env = self.make_env()
        try:
            if self.seed_global_random:
                random.seed(self.prefix.seed)
            observation, _ = env.reset(seed=self.prefix.seed)
            _check(0, "observation", self.prefix.observations[0], observation)
            for i in range(self.at_step):
                observation, *_ = env.step(self.prefix.actions[i])
                _check(i + 1, "observation", self.prefix.observations[i + 1], observation)
        except BaseException:
            env.close()  # a discarded replay must not leak its environment (a JVM, a sandbox)
            raise
        self.replays += 1
        return env

    def materialize(self) -> ToolEnv:
        """A fresh environment in the state after ``at_step`` actions."""
        if self._snapshot is not None:
            env = self.make_env()
            env.reset(seed=self.prefix.seed)
            env.restore(self._snapshot)
            return env
        env = self._replay()
        # the first replay decides "auto": no extra environment is built just to ask
        if self.method == "snapshot" or (self.method == "auto" and env.can_snapshot):
            self._snapshot = env.snapshot()
        return env

    def replay_agent(self, agent: Agent, task: Any = None) -> Agent:
        """Drive ``agent`` along the prefix, checking it reproduces the recorded actions."""
        env = self.make_env()
        agent.reset(seed=self.prefix.seed, task=task if task is not None else env.task)
        tools = env.tool_specs()
        for i in range(self.at_step):
            action = agent.act(self.prefix.observations[i], tools)
            _check(i + 1, "action", self.prefix.actions[i], action.text)
        return agent

    def history(self) -> list[StepView]:
        rewards = self.prefix.rewards or [0.0] * len(self.prefix)
        infos = self.prefix.infos or [{}] * len(self.prefix)
        return [StepView(self.prefix.observations[i + 1], self.prefix.actions[i], rewards[i], infos[i])
                for i in range(self.at_step)]

    def run(self, agent: Agent, spec: EpisodeSpec, *, budget: Budget = Budget(),
            writer: TrajectoryWriter | None = None, controller: Controller | None = None,
            env: ToolEnv | None = None, fresh_agent: bool = False) -> EpisodeRecord:
        """Continue from the fork point with ``agent`` (already in its state at ``at_step``,
        or reset first when ``fresh_agent``)."""
        env = env if env is not None else self.materialize()
        if fresh_agent:
            agent.reset(seed=spec.seed, task=env.task)
        parent = {"episode_id": self.prefix.episode_id, "digest": self.prefix.digest, "at_step": self.at_step}
        start = (self.prefix.observations[self.at_step], self.history())
        return run_episode(env, agent, spec, budget=budget, controller=controller, writer=writer, parent=parent,
                           start=start)


def _check(step: int, field: str, expected: Any, got: Any) -> None:
    if expected != got:
        raise PrefixMismatch(step, field, expected, got)


def branch_from_log(log_path: str | Path, make_env: Callable[[], ToolEnv], at_step: int,
                    candidates: dict[str, Callable[[ToolEnv], Agent]], *, rollouts: int = 1,
                    out_dir: str | Path | None = None, budget: Budget = Budget(), method: str = "auto",
                    suite: str = "", base_agent: Agent | None = None, controllers: tuple[str, ...] = (),
                    oversee: Callable[[EpisodeSpec, ToolEnv], Controller | None] | None = None,
                    ) -> list[EpisodeRecord]:
    """Run every candidate ``rollouts`` times from step ``at_step`` of a recorded episode.

    A candidate factory receives the environment at the fork point. When ``base_agent`` is
    given, a candidate named ``continue`` is the base agent replayed along the prefix and
    forked, so it continues with the memory it had. ``oversee(spec, env)`` builds each branch's
    controllers (``--controller``'s, whose references ``controllers`` records in its header).
    """
    prefix = Prefix.from_log(log_path)
    point = ForkPoint(make_env, prefix, at_step, method)
    primed = None
    if base_agent is not None and hasattr(base_agent, "load_log_prefix"):
        base_agent.load_log_prefix(log_path, at_step)  # a model agent is primed from its recorded replies
        primed = base_agent
    elif base_agent is not None:
        primed = point.replay_agent(base_agent, None)
    records = []
    for name, factory in candidates.items():
        for r in range(rollouts):
            env = point.materialize()
            if name == "continue" and primed is not None:
                agent, fresh = primed.fork(), False
            else:
                agent, fresh = factory(env), True
            spec = EpisodeSpec(suite or "branch", prefix.task, f"{name}@{at_step}", prefix.seed + r,
                               {"parent": prefix.episode_id, "rollout": r}, controllers=controllers)
            writer = TrajectoryWriter(Path(out_dir) / f"{spec.episode_id}.jsonl") if out_dir else None
            records.append(point.run(agent, spec, budget=budget, writer=writer, env=env, fresh_agent=fresh,
                                     controller=oversee(spec, env) if oversee is not None else None))
    return records


__all__ = ["ForkPoint", "Prefix", "PrefixMismatch", "SnapshotUnsupported", "branch_from_log"]
