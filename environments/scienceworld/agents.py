"""Scripted ScienceWorld agents: the simulator's gold path, and a random walker.

Both read the world only through observations; the gold agent gets its plan from the
simulator's own gold-path generator for the task variation.
"""

from __future__ import annotations

import random
import re
from collections.abc import Sequence

from agentbed.agents.base import Action, Agent
from agentbed.env import TaskSpec
from agentbed.streams import keyed_stream, task_key
from agentbed.tools import Tool, make_action
from environments.scienceworld.env import gold_path

_DOOR = re.compile(r"door to (?:the )?([a-z ]+?)(?: \(|$)", re.MULTILINE)
_THING = re.compile(r"^\t+(?:an? |the )?(?:substance called )?([a-z][a-z0-9 ]+?)(?: \(|$)", re.MULTILINE)


def visible_rooms(observation: str) -> list[str]:
    return sorted(set(_DOOR.findall(observation)))


def visible_things(observation: str) -> list[str]:
    return sorted({t.strip() for t in _THING.findall(observation) if t.strip() not in {"agent", "door"}})


def command(text: str) -> str:
    return make_action("act", command=text)


class GoldAgent(Agent):
    """Plays the gold path of its task variation."""

    name = "gold"

    def reset(self, *, seed: int, task: object = None) -> None:
        params = task.params if isinstance(task, TaskSpec) else {}
        self.plan = list(gold_path(params["task"], int(params["variation"]))) if params else []
        self.pointer = 0

    def act(self, observation: str, tools: Sequence[Tool]) -> Action:
        text = self.plan[self.pointer] if self.pointer < len(self.plan) else "look around"
        self.pointer += 1
        return Action(command(text), risk=0.1)


class RandomWalker(Agent):
    """Random commands built from what the last observation shows; its stream is seeded by the task
    and the seed (a SHA-256 of both), so tasks run at one seed do not share their draws (issue 54)."""

    name = "random"

    def reset(self, *, seed: int, task: object = None) -> None:
        self.rng = keyed_stream("scienceworld-random-walker", task_key(task), seed)
        self.rooms: list[str] = []
        self.things: list[str] = []

    def act(self, observation: str, tools: Sequence[Tool]) -> Action:
        self.rooms = visible_rooms(observation) or self.rooms
        self.things = visible_things(observation) or self.things
        return Action(command(random_command(self.rng, self.rooms, self.things)), risk=0.9)


def random_command(rng: random.Random, rooms: Sequence[str], things: Sequence[str], focus: float = 0.1) -> str:
    """A plausible but aimless command; ``focus`` is the chance of a (usually fatal) 'focus on'."""
    options = ["look around", "inventory", "wait1"]
    options += [f"go to {r}" for r in rooms] + [f"open door to {r}" for r in rooms]
    options += [f"pick up {t}" for t in things]
    if things and rng.random() < focus:
        return f"focus on {rng.choice(list(things))}"
    return rng.choice(options)
