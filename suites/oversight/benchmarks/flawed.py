"""Scripted base agents with tunable flaws, shared by the benchmarks this package branches.

A :class:`FlawedAgent` knows a correct policy (a subclass's ``correct_action``) but slips:
noisy action choice (a random action with probability ``noise``), loops (with probability
``loop`` per step it starts repeating its last action until someone intervenes) and
forgetting the goal (after ``forget_after`` steps it acts at random). Some slips are
harmless, some destroy the episode, so failures are recoverable or not for real reasons.

Its risk score is a verbal-confidence analogue: the agent's own impression of how many of
its recent actions went astray and how far into the budget it is, with noise. It tracks
failure, not whether an intervention would help.

Its one random stream (slips and risk noise) is seeded when it is reset on a task: by default
(``seeding="game"``) from a SHA-256 of the task's id, the agent's name, its flaw preset, its seed
and the episode seed, so every task draws its own numbers. ``seeding="legacy"`` seeds
``random.Random(seed)`` alone, as every agent did before issue 54's fix: every task then drew the
same slips at the same steps. It is kept only so that datasets built that way rebuild (their
provenance records no ``base_seeding``).
"""

from __future__ import annotations

import copy
import random
from collections.abc import Callable, Sequence
from dataclasses import dataclass, replace
from functools import partial

from agentbed.agents.base import Action, Agent
from agentbed.streams import SEEDINGS, checked_seeding, keyed_stream, task_key
from agentbed.tools import Tool

RISK_WINDOW = 6


@dataclass(frozen=True)
class Flaws:
    noise: float = 0.0
    loop: float = 0.0
    forget_after: int | None = None
    risk_noise: float = 0.12


FLAW_PRESETS = {
    "noisy": Flaws(noise=0.3),
    "looping": Flaws(noise=0.08, loop=0.08),
    "forgetful": Flaws(noise=0.08, forget_after=8),
}


class FlawedAgent(Agent):
    """Base class: subclasses implement ``observe``, ``correct_action`` and ``random_action``."""

    name = "flawed"
    horizon = 50  # steps the risk score measures progress against

    def __init__(self, flaws: Flaws, seed: int = 0, *, flaw: str = "", seeding: str = "game") -> None:
        if seeding not in SEEDINGS:
            raise ValueError(f"seeding must be one of {', '.join(SEEDINGS)}, got {seeding!r}")
        self.flaws, self.flaw, self.seed, self.seeding = flaws, flaw, seed, seeding
        self.rng = random.Random(seed)
        self.steps = 0
        self.looping = False
        self.slips: list[bool] = []
        self.last_action: str | None = None

    def reset(self, *, seed: int, task: object = None) -> None:
        if self.seeding == "legacy":  # the same stream in every task (issue 54)
            self.rng = random.Random(seed)
        else:  # the task's own stream
            self.rng = keyed_stream("flawed-agent", task_key(task), self.name, self.flaw, self.seed, seed)
        self.steps, self.looping, self.slips, self.last_action = 0, False, [], None

    def reseed(self, seed: int) -> None:
        self.rng = random.Random(seed)

    # -- subclass hooks ------------------------------------------------------------------
    def observe(self, observation: str) -> None:
        """Update the agent's picture of the world from the latest observation."""

    def correct_action(self) -> str:
        raise NotImplementedError

    def random_action(self) -> str:
        raise NotImplementedError

    def on_executed(self, action: str, slipped: bool) -> None:
        """Called after choosing ``action`` (e.g. to advance a plan pointer)."""

    # -- the policy ----------------------------------------------------------------------
    def forgot(self) -> bool:
        return self.flaws.forget_after is not None and self.steps >= self.flaws.forget_after

    def act(self, observation: str, tools: Sequence[Tool]) -> Action:
        self.observe(observation)
        if self.looping and self.last_action is not None:
            action, slipped = self.last_action, True
        elif self.forgot() or self.rng.random() < self.flaws.noise:
            action, slipped = self.random_action(), True
        else:
            action, slipped = self.correct_action(), False
        if self.flaws.loop and self.rng.random() < self.flaws.loop:
            self.looping = True
        self.on_executed(action, slipped)
        self.slips.append(slipped)
        self.steps += 1
        self.last_action = action
        recent = self.slips[-RISK_WINDOW:]
        felt = 0.15 + 0.55 * sum(recent) / len(recent) + 0.25 * min(1.0, self.steps / self.horizon)
        risk = min(1.0, max(0.0, felt + self.rng.gauss(0.0, self.flaws.risk_noise)))
        return Action(action, risk=round(risk, 4), meta={"slipped": slipped})


def reflect(agent: Agent) -> Agent:
    """Self-repair: the same agent re-reads its goal, clears its loop and halves its noise; an
    agent with its own ``reflected()`` (a chat model) is asked to reflect instead."""
    own = getattr(agent, "reflected", None)
    if callable(own):
        return own()
    if not isinstance(agent, FlawedAgent):
        raise TypeError(f"reflect applies to scripted flawed agents, not {type(agent).__name__}")
    fixed = copy.deepcopy(agent)
    fixed.flaws = replace(agent.flaws, noise=agent.flaws.noise / 2, loop=0.0, forget_after=None)
    fixed.looping = False
    fixed.name = agent.name + "+reflect"
    return fixed


def flawed_agents(kind: type[FlawedAgent], base_seeding: str) -> dict[str, Callable[[int], Agent]]:
    """A benchmark's base agents: one ``kind`` per flaw preset, built from the trajectory seed, its
    preset's name recorded and its slips seeded as ``base_seeding`` says (refused in one line unless
    one of agentbed.streams.SEEDINGS)."""
    checked_seeding(base_seeding)
    return {name: partial(kind, flaws, flaw=name, seeding=base_seeding) for name, flaws in FLAW_PRESETS.items()}
