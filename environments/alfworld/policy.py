"""What a scripted ALFWorld agent knows and how it picks its next command, from observations only.

The agent reads the goal from the first observation (ALFWorld states it once), keeps a map
of what it has seen where, and follows the obvious plan: find the target object, take it,
transform it (heat/cool/clean) or bring it to a lamp, then put it in the goal receptacle.
It never looks at the game's internal state; everything comes from the text it was shown.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field

APPLIANCE = {"heat": "microwave", "cool": "fridge", "clean": "sinkbasin"}
KIND_OF_TASK = {"pick_and_place_simple": "put", "look_at_obj_in_light": "light",
                "pick_clean_then_place_in_recep": "clean", "pick_heat_then_place_in_recep": "heat",
                "pick_cool_then_place_in_recep": "cool", "pick_two_obj_and_place": "two"}
_SEEN = re.compile(r"you see (.*?)\.?$", re.IGNORECASE)
_ARTICLE = re.compile(r"^(?:and )?an? ")


@dataclass
class Goal:
    kind: str  # put | light | clean | heat | cool | two
    obj: str  # object class, lower case ("mug")
    recep: str = ""  # receptacle class ("countertop"); "" for light
    toggle: str = ""  # "desklamp" for light


def _template_patterns() -> list[tuple[str, re.Pattern[str]]]:
    from alfworld.gen.goal_library import gdict

    patterns = []
    for task_type, kind in KIND_OF_TASK.items():
        for template in gdict[task_type]["templates"]:
            regex = re.escape(template)
            for name in ("obj", "recep", "toggle"):
                regex = regex.replace(re.escape("{" + name + "}"), f"(?P<{name}>[a-z]+)")
            patterns.append((kind, re.compile("^" + regex + "$")))
    return patterns


_PATTERNS: list[tuple[str, re.Pattern[str]]] = []


def parse_goal(intro: str) -> Goal | None:
    """The goal stated in ALFWorld's first observation ("Your task is to: ...")."""
    if not _PATTERNS:
        _PATTERNS.extend(_template_patterns())
    match = re.search(r"Your task is to: (.*?)\.?\s*$", intro, re.MULTILINE)
    if not match:
        return None
    sentence = match.group(1).strip()
    for kind, pattern in _PATTERNS:
        m = pattern.match(sentence)
        if m:
            parts = m.groupdict()
            return Goal(kind, parts.get("obj", ""), parts.get("recep", ""), parts.get("toggle", ""))
    return None


def object_class(name: str) -> str:
    """"mug 2" -> "mug"."""
    return name.rsplit(" ", 1)[0] if name[-1:].isdigit() else name


def listed(text: str) -> list[str]:
    """Entities named in "you see a mug 1, a cup 2, and a plate 1." ("nothing" gives [])."""
    m = _SEEN.search(text.strip().splitlines()[-1] if text.strip() else "")
    if not m or m.group(1).strip() == "nothing":
        return []
    return [_ARTICLE.sub("", part.strip()) for part in m.group(1).split(", ") if part.strip()]


@dataclass
class Memory:
    """The agent's picture of the room, updated from each observation."""

    receptacles: list[str] = field(default_factory=list)
    seen: dict[str, list[str]] = field(default_factory=dict)  # receptacle -> objects last seen in it
    visited: list[str] = field(default_factory=list)
    location: str = ""
    holding: str = ""
    transformed: bool = False
    placed: list[str] = field(default_factory=list)  # target objects already in the goal receptacle
    two_at: str = ""  # pick-two tasks: the receptacle holding the first object (the second goes there too)

    def update(self, command: str, feedback: str) -> None:
        first_line = feedback.strip().splitlines()[0] if feedback.strip() else ""
        if "Welcome to TextWorld" in feedback:
            middle = [line for line in feedback.splitlines() if "you see" in line]
            self.receptacles = listed(middle[0]) if middle else []
            return
        if first_line.startswith("You arrive at "):
            self.location = first_line.removeprefix("You arrive at ").split(".")[0]
            if self.location not in self.visited:
                self.visited.append(self.location)
        if first_line.startswith(("You arrive at", "You open the")) and "you see" in first_line:
            self.seen[self.location] = listed(first_line)
        elif first_line.startswith("You pick up the "):
            obj = first_line.removeprefix("You pick up the ").split(" from the ")[0]
            self.holding = obj
            self.transformed = False
            self.seen[self.location] = [o for o in self.seen.get(self.location, []) if o != obj]
        elif first_line.startswith("You move the "):
            obj, _, recep = first_line.removeprefix("You move the ").rstrip(".").partition(" to the ")
            self.seen.setdefault(recep, []).append(obj)
            self.holding = ""
        elif first_line.startswith(("You heat the ", "You cool the ", "You clean the ")):
            self.transformed = True


def choose_command(goal: Goal, memory: Memory, commands: list[str], order: list[str]) -> str:
    """The plan's next command among the admissible ones; ``order`` is the exploration order."""
    here = memory.location

    def go(recep: str) -> str | None:
        command = f"go to {recep}"
        return command if command in commands and recep != here else None

    def explore(wanted: str = "") -> str:
        unvisited = [r for r in order if r not in memory.visited and r != here]
        if wanted:  # look first where that kind of receptacle is
            unvisited = [r for r in unvisited if object_class(r) == wanted] + unvisited
        if not unvisited:
            memory.visited.clear()
            unvisited = [r for r in order if r != here]
        return go(unvisited[0]) or (commands[0] if commands else "look")

    def goal_receptacles() -> list[str]:
        return [r for r in order if object_class(r) == goal.recep]

    if f"open {here}" in commands and here not in memory.seen:
        return f"open {here}"
    if memory.holding:
        held = memory.holding
        if object_class(held) != goal.obj:  # holding the wrong thing: put it back here
            put_back = [c for c in commands if c.startswith(f"move {held} to ")]
            return put_back[0] if put_back else explore()
        if goal.kind in APPLIANCE and not memory.transformed:
            appliance = APPLIANCE[goal.kind]
            verb = [c for c in commands if c.startswith(f"{goal.kind} {held} with {appliance}")]
            if verb:
                return verb[0]
            return explore(appliance)
        if goal.kind == "light":
            use = [c for c in commands if c.startswith(f"use {goal.toggle}")]
            if use:
                return use[0]
            lamp_at = [r for r, objs in memory.seen.items() if any(object_class(o) == goal.toggle for o in objs)]
            return (go(lamp_at[0]) if lamp_at else None) or explore()
        put = [c for c in commands if c.startswith(f"move {held} to ") and object_class(c.split(" to ")[-1]) == goal.recep
               and memory.two_at in ("", c.split(" to ")[-1])]
        if put:
            if goal.kind == "two":
                memory.placed.append(held)
                memory.two_at = put[0].split(" to ")[-1]
            return put[0]
        targets = [memory.two_at] if memory.two_at else goal_receptacles()
        fresh = [r for r in targets if r not in memory.visited] or targets
        return (go(fresh[0]) if fresh else None) or explore(goal.recep)
    takes = [c for c in commands if c.startswith(f"take {goal.obj} ")
             and c.split(" from ")[0].removeprefix("take ") not in memory.placed
             and c.split(" from ")[-1] != memory.two_at]
    if takes:
        return takes[0]
    known = [r for r in order for o in memory.seen.get(r, [])
             if object_class(o) == goal.obj and o not in memory.placed and r != memory.two_at]
    return (go(known[0]) if known else None) or explore()
