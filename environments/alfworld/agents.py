"""ALFWorld agents: scripted base agents with tunable flaws, their reflect variants, the expert.

Public factories (the oversight workload uses only these):

* ``make_base_agent(flaw, seed, **params)``: a scripted agent (see :mod:`.policy`) whose
  failures have real causes: ``noise`` (a random admissible command instead of the plan's),
  ``loop`` (per-step chance of falling into a back-and-forth between two receptacles, left
  only with probability ``escape`` per step) and ``forget`` (per-step chance of replacing the
  goal's object or receptacle with a wrong one it has seen) and ``detour`` (a noisy planner:
  per-step chance of following a wrong sub-goal, searching receptacles of a kind that is not
  where the plan leads, for a random 3 to ``detour_len`` steps, then resuming the plan; nothing
  in the oversight features names this mechanism). Whether a failure is recoverable
  depends on when it happens: the 50-step cap leaves a late-stuck agent no time.
* ``make_reflect(agent, cut_flaw_rates=False)``: the same agent in the same state after
  self-repair, by its mechanisms alone: it re-reads the goal from its first observation, clears
  its loop and forgets which places it has visited. ``cut_flaw_rates`` also lowers every flaw
  rate to ``reflect_factor`` of its value: an assumed effect, not a mechanism, offered as the
  separately named intervention "reflect-cut" (issue 54: most of reflect's measured advantage
  was this cut).
* ``make_expert(env, noise=0.0)``: ALFWorld's handcoded expert, which has watched the whole
  episode inside the environment; usable as a handover agent at any step. With ``noise`` it
  slips: at each step, with that probability, it sends a random admissible command instead of
  its plan's (an imperfect overseer; it sees the slip and re-plans from the new state).
* ``make_planner(env, seed)``: a stronger agent handed the episode with partial observability:
  the flawless plan-follower, briefed with the task sentence and the current observation only
  (what it holds it reads off the admissible "move" commands); it has not seen what the base
  agent saw, so it re-explores the room.

Every scripted action carries ``Action.risk``: the agent's stated probability of failing, a
verbal-confidence analogue computed from what the agent can see (steps used, progress,
repeated and ineffective commands) and, like stated confidence, overconfident (scaled down
by ``overconfidence``) and blind to its own forgetting.

A scripted agent's random streams (its flaws, its stated-risk noise) are seeded when it is reset
on a game: by default (``seeding="game"``) from a SHA-256 of the game's id, the agent's name, its
flaw, its seed and the episode seed, so every game draws its own, independent numbers.
``seeding="legacy"`` leaves the game out, as every agent did before issue 54's fix: all games
then draw the same numbers at the same step. It is kept only so that datasets built that way
rebuild byte for byte (their provenance records no ``base_seeding``).
"""

from __future__ import annotations

import math
import random
import re
from collections.abc import Sequence
from dataclasses import dataclass, fields, replace
from typing import Any

from agentbed.agents.base import Action, Agent
from agentbed.streams import SEEDINGS, keyed_stream, task_key
from agentbed.tools import Tool, make_action
from environments.alfworld.env import NOTHING_HAPPENS, AlfworldEnv, parse_observation
from environments.alfworld.games import MAX_EPISODE_STEPS
from environments.alfworld.policy import Goal, Memory, choose_command, object_class, parse_goal


@dataclass(frozen=True)
class Flaws:
    noise: float = 0.0
    loop: float = 0.0
    escape: float = 0.0
    forget: float = 0.0
    detour: float = 0.0
    detour_len: int = 8
    overconfidence: float = 0.6
    reflect_factor: float = 0.25

    def reflected(self) -> Flaws:
        f = self.reflect_factor
        return replace(self, noise=self.noise * f, loop=self.loop * f, forget=self.forget * f,
                       detour=self.detour * f)


FLAWS: dict[str, Flaws] = {
    "none": Flaws(),
    "noisy": Flaws(noise=0.5),
    "looping": Flaws(noise=0.05, loop=0.08, escape=0.05),
    "forgetful": Flaws(noise=0.05, forget=0.06),
    "mixed": Flaws(noise=0.15, loop=0.04, escape=0.05, forget=0.03),
    # Set once, before any feature change, and never tuned on evaluation games (issue 19).
    "detour": Flaws(noise=0.1, detour=0.18, detour_len=20),
}


# How a scripted agent seeds its streams (see the module docstring): "game" (the default), or
# "legacy" (without the game; only to rebuild datasets built before the fix).
game_stream = keyed_stream  # a stream seeded by a SHA-256 of its key (agentbed.streams)


class ScriptedAlfworldAgent(Agent):
    """A plan-following ALFWorld agent with tunable flaws (see the module docstring)."""

    def __init__(self, flaw: str, seed: int, flaws: Flaws, seeding: str = "game") -> None:
        if seeding not in SEEDINGS:
            raise ValueError(f"seeding must be one of {', '.join(SEEDINGS)}, got {seeding!r}")
        self.flaw, self.seed, self.flaws, self.seeding = flaw, seed, flaws, seeding
        self.name = flaw if flaw.startswith("reflect-") else f"scripted-{flaw}"
        self._resume_on_reset = False
        self.reset(seed=seed)

    def describe(self) -> dict[str, Any]:
        return {"name": self.name, "model": None, "flaws": {f.name: getattr(self.flaws, f.name) for f in fields(Flaws)}}

    def reset(self, *, seed: int, task: Any = None) -> None:
        if self._resume_on_reset:  # a reflect agent handed over mid-episode keeps its state
            self._resume_on_reset = False
            return
        if self.seeding == "legacy":  # the same streams in every game (issue 54)
            self.rng = random.Random(f"alfworld-agent:{self.flaw}:{self.seed}:{seed}")
            self.risk_rng = random.Random(f"alfworld-risk:{self.flaw}:{self.seed}:{seed}")
        else:  # the game's own streams (before the first reset on a game, the game is "")
            game = task_key(task)
            self.rng = game_stream("alfworld-agent", game, self.name, self.flaw, self.seed, seed)
            self.risk_rng = game_stream("alfworld-risk", game, self.name, self.flaw, self.seed, seed)
        self.intro = ""
        self.goal: Goal | None = None
        self.memory = Memory()
        self.order: list[str] = []
        self.loop: list[str] = []
        self.detour_kind = ""  # the receptacle kind a wrong sub-goal sends the agent to search
        self.detour_left = 0
        self.forgot = False
        self.steps = 0
        self.recent: list[str] = []
        self.ineffective = 0
        self.last_command = ""

    def reseed(self, rollout: int) -> None:
        """Draw a different (still deterministic) future: rollout ``k`` of a branch."""
        self.rng = random.Random(f"{self.rng.random()}:{rollout}")

    # -- acting --------------------------------------------------------------------------
    def act(self, observation: str, tools: Sequence[Tool]) -> Action:
        self._resume_on_reset = False  # only a reset before the first action after repair is skipped
        text, commands = parse_observation(observation)
        if not self.intro and "Your task is to:" in text:
            self.intro = text
            self.goal = parse_goal(text)
            self.memory.update("", text)
            self.order = list(self.memory.receptacles)
            self.rng.shuffle(self.order)
        else:
            self.memory.update(self.last_command, text)
        self.ineffective = self.ineffective + 1 if text.startswith(NOTHING_HAPPENS) else 0
        self._maybe_slip(commands)
        command = self._next_command(commands)
        self.steps += 1
        self.recent = (self.recent + [command])[-6:]
        self.last_command = command
        return Action(make_action("act", command=command), risk=self._stated_risk(),
                      meta={"stage": self._stage()})

    def _maybe_slip(self, commands: list[str]) -> None:
        f = self.flaws
        if self.loop and self.rng.random() < f.escape:
            self.loop = []
        if not self.loop and f.loop and self.rng.random() < f.loop:
            places = [c.removeprefix("go to ") for c in commands if c.startswith("go to ")]
            if len(places) >= 2:
                self.loop = self.rng.sample(places, 2)
        if self.goal and not self.forgot and f.forget and self.rng.random() < f.forget:
            self._forget_goal()
        if not self.detour_left and f.detour and self.rng.random() < f.detour:
            kinds = sorted({object_class(r) for r in self.memory.receptacles}
                           - {self.goal.recep if self.goal else "", object_class(self.memory.location)})
            if kinds:
                self.detour_kind = self.rng.choice(kinds)
                self.detour_left = self.rng.randint(3, max(3, f.detour_len))

    def _forget_goal(self) -> None:
        goal = self.goal
        if goal is None:  # act() calls this only once a goal is known
            return
        seen = sorted({object_class(o) for objs in self.memory.seen.values() for o in objs} - {goal.obj})
        places = sorted({object_class(r) for r in self.memory.receptacles} - {goal.recep})
        if goal.recep and places and (not seen or self.rng.random() < 0.5):
            self.goal = replace(goal, recep=self.rng.choice(places))
        elif seen:
            self.goal = replace(goal, obj=self.rng.choice(seen))
        else:
            return
        self.forgot = True

    def _next_command(self, commands: list[str]) -> str:
        if not commands:
            return "look"
        if self.loop:
            target = self.loop[0] if self.memory.location != self.loop[0] else self.loop[1]
            return f"go to {target}"
        if self.detour_left:
            self.detour_left -= 1
            return self._detour_command(commands)
        if self.flaws.noise and self.rng.random() < self.flaws.noise:
            return self.rng.choice(commands)
        if self.goal is None:
            return self.rng.choice(commands)
        return choose_command(self.goal, self.memory, commands, self.order)

    def _detour_command(self, commands: list[str]) -> str:
        """The wrong sub-goal's next step: open what is here, else go to the next receptacle of
        the detour's kind (round-robin), else look around."""
        here = self.memory.location
        if object_class(here) == self.detour_kind and f"open {here}" in commands:
            return f"open {here}"
        places = [r for r in self.order if object_class(r) == self.detour_kind and r != here]
        moves = [f"go to {r}" for r in places if f"go to {r}" in commands]
        if moves:
            return moves[self.steps % len(moves)]
        return "look" if "look" in commands else commands[0]

    # -- stated risk ---------------------------------------------------------------------
    def _stage(self) -> float:
        m, g = self.memory, self.goal
        if g is None:
            return 0.0
        if m.holding and object_class(m.holding) == g.obj:
            return 0.66 if (g.kind in ("heat", "cool", "clean") and m.transformed) else 0.4
        return 0.5 * min(len(m.placed), 1) if g.kind == "two" else 0.0

    def _stated_risk(self) -> float:
        repeats = len(self.recent) - len(set(self.recent))
        belief = (-1.2 + 3.0 * self.steps / MAX_EPISODE_STEPS - 2.0 * self._stage() + 0.6 * repeats
                  + 0.5 * min(self.ineffective, 3))
        p_fail = 1.0 / (1.0 + math.exp(-belief))
        stated = (1.0 - self.flaws.overconfidence) * p_fail + self.risk_rng.gauss(0.0, 0.03)
        return round(min(1.0, max(0.0, stated)), 4)

    # -- self-repair ---------------------------------------------------------------------
    def reflect(self, cut_flaw_rates: bool = False) -> None:
        """Re-read the goal, drop the loop, re-explore; with ``cut_flaw_rates`` also lower every
        flaw rate (an assumption about self-repair, labelled as such by its callers)."""
        self.goal = parse_goal(self.intro) if self.intro else self.goal
        self.forgot = False
        self.loop = []
        self.detour_left = 0
        self.memory.visited.clear()
        self.recent = []
        if cut_flaw_rates:
            self.flaws = self.flaws.reflected()
        if not self.flaw.startswith("reflect-"):
            self.flaw = f"reflect-{self.flaw}"
            self.name = self.flaw


class ExpertAgent(Agent):
    """ALFWorld's handcoded expert, reading its recommendation from the environment it watches;
    with ``noise`` it sends a random admissible command instead, at that rate per step."""

    name = "expert"

    def __init__(self, env: AlfworldEnv, noise: float = 0.0, rng: random.Random | None = None) -> None:
        self.env, self.noise = env, noise
        self.rng = rng or random.Random(0)

    def act(self, observation: str, tools: Sequence[Tool]) -> Action:
        command = self.env.expert_command()
        slipped = False
        if self.noise and self.rng.random() < self.noise:
            _, commands = parse_observation(observation)
            if commands:
                command, slipped = self.rng.choice(commands), True
        return Action(make_action("act", command=command or "look"), risk=None,
                      meta={"expert_error": self.env.expert_error(), "slipped": slipped})

    def reseed(self, rollout: int) -> None:
        self.rng = random.Random(f"alfworld-expert-noise:{self.rng.random()}:{rollout}")

    def fork(self) -> ExpertAgent:  # the expert's memory lives in the environment, not here
        return ExpertAgent(self.env, self.noise, random.Random(self.rng.random()))


_CARRYING = re.compile(r"You are carrying: (.+?)\.?$", re.MULTILINE)
_ARTICLE = re.compile(r"^(?:an?|the|some) ")


class HandoverPlanner(ScriptedAlfworldAgent):
    """The flawless plan-follower taking over mid-episode from a brief (the task sentence) and
    the observation in front of it: the base agent's map of the room is not handed over."""

    def __init__(self, goal_sentence: str, seed: int) -> None:
        # its seed is already the branch's own (drawn from the branch seed, which hashes in the
        # game), and a handover agent is never reset on the game, so it keeps the seed-only streams
        super().__init__("planner", seed, FLAWS["none"], seeding="legacy")
        self.name = "planner"
        self.briefing = goal_sentence

    def act(self, observation: str, tools: Sequence[Tool]) -> Action:
        text, commands = parse_observation(observation)
        if self.goal is None:  # the first step after the handover
            self.intro = f"Your task is to: {self.briefing}"
            self.goal = parse_goal(self.intro)
            self.memory.receptacles = [c.removeprefix("go to ") for c in commands if c.startswith("go to ")]
            self.order = list(self.memory.receptacles)
            self.rng.shuffle(self.order)
            held = [c.removeprefix("move ").split(" to ")[0] for c in commands if c.startswith("move ")]
            self.memory.holding = held[0] if held else ""
            self.last_command = ""
            if not held and "inventory" in commands:  # nothing to put down here: ask what it carries
                self.steps += 1
                self.last_command = "inventory"
                return Action(make_action("act", command="inventory"), risk=self._stated_risk(),
                              meta={"stage": 0.0})
        elif self.last_command == "inventory":
            carried = _CARRYING.search(text)
            self.memory.holding = _ARTICLE.sub("", carried.group(1).strip()) if carried else ""
        return super().act(observation, tools)


def make_base_agent(flaw: str, seed: int, *, seeding: str = "game", **params: Any) -> ScriptedAlfworldAgent:
    """A scripted base agent: ``flaw`` is one of FLAWS; ``params`` override its :class:`Flaws`;
    ``seeding`` is one of SEEDINGS (see the module docstring)."""
    if flaw not in FLAWS:
        raise ValueError(f"unknown flaw {flaw!r}; flaws: {', '.join(FLAWS)}")
    known = {f.name for f in fields(Flaws)}
    unknown = sorted(set(params) - known)
    if unknown:
        raise ValueError(f"unknown flaw parameter {unknown[0]!r}; parameters: {', '.join(sorted(known))}")
    return ScriptedAlfworldAgent(flaw, seed, replace(FLAWS[flaw], **params), seeding)


def make_reflect(agent: Agent, cut_flaw_rates: bool = False) -> Agent:
    """The reflect (self-repair) variant of an agent, continuing from its current state: a
    scripted agent re-reads its goal, clears its loop and re-explores (with ``cut_flaw_rates``
    it also lowers its flaw rates); an agent with its own ``reflected()`` (a chat model) is
    asked to reflect."""
    own = getattr(agent, "reflected", None)
    if callable(own):
        return own()
    if not isinstance(agent, ScriptedAlfworldAgent):
        raise TypeError(f"reflect needs a scripted ALFWorld agent, got {type(agent).__name__}")
    repaired = agent.fork()
    assert isinstance(repaired, ScriptedAlfworldAgent)
    repaired.reflect(cut_flaw_rates)
    repaired._resume_on_reset = True  # the runner resets a handover agent; keep the state it has
    return repaired


def _alfworld(env: Any, who: str) -> AlfworldEnv:
    inner = getattr(env, "unwrapped", env)
    if not isinstance(inner, AlfworldEnv):
        raise TypeError(f"the {who} needs an AlfworldEnv, got {type(inner).__name__}")
    return inner


def make_expert(env: Any, noise: float = 0.0, seed: int = 0) -> Agent:
    """The "defer to expert" intervention for ``env`` (an AlfworldEnv, possibly wrapped); with
    ``noise`` it slips at that rate per step (its slips drawn from a stream seeded by ``seed``)."""
    if not 0.0 <= noise <= 1.0:
        raise ValueError(f"expert noise must be in [0, 1], got {noise}")
    return ExpertAgent(_alfworld(env, "expert"), noise, random.Random(f"alfworld-expert-noise:{seed}"))


def make_planner(env: Any, seed: int = 0) -> Agent:
    """The "hand over to a stronger agent" intervention: a flawless planner briefed with the task
    sentence of ``env``'s episode, without the base agent's memory (partial observability)."""
    return HandoverPlanner(_alfworld(env, "planner").goal(), seed)
