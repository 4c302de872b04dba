"""Task-progress features of an ALFWorld prefix, read from the goal sentence and the game's text.

The generic features (controllers/oversight/features.py) see repetition and risk, not how far
the agent got. Whether continuing, reflecting or deferring pays off depends on exactly that:
an agent holding the heated mug next to the goal cabinet will finish on its own, one that
picked up the wrong object has probably forgotten its goal (its risk score cannot show it),
one going back and forth between two places is looping. Everything here is parsed from the
first observation (the goal) and the feedback of the executed steps, never from the game's
state or a branch's outcome, so the values are the same for every action at a checkpoint.
"""

from __future__ import annotations

from collections.abc import Sequence

from agentbed.control import StepView

KINDS = ("put", "light", "clean", "heat", "cool", "two")
TRANSFORM_VERB = {"heat": "You heat the ", "cool": "You cool the ", "clean": "You clean the "}
PROGRESS_FEATURE_NAMES = (
    *(f"goal_{k}" for k in KINDS), "goal_parsed", "target_seen", "holding_target", "holding_other",
    "target_transformed", "targets_placed", "subgoals_done", "subgoals_frac", "subgoals_lost",
    "steps_since_progress", "wrong_taken", "wrong_placed", "at_goal_receptacle", "visited_frac",
    "revisit_frac", "two_cycle", "nothing_streak",
)
RECENT_MOVES = 6


def _feedback(observation: str) -> str:
    """The game's first line of feedback (without the admissible-command listing)."""
    from environments.alfworld.env import parse_observation

    text, _ = parse_observation(observation)
    stripped = text.strip()
    return stripped.splitlines()[0] if stripped else ""


def _subgoals_needed(kind: str) -> int:
    """take, (transform | light), place; pick-two: take, place, take, place."""
    return {"put": 2, "light": 2, "two": 4}.get(kind, 3)


def progress_features(first_observation: str, history: Sequence[StepView]) -> dict[str, float]:
    """Progress toward the goal stated in ``first_observation`` after the steps in ``history``."""
    from environments.alfworld.policy import listed, object_class, parse_goal

    goal = parse_goal(first_observation)
    kind, obj, recep = (goal.kind, goal.obj, goal.recep) if goal else ("", "", "")
    welcome = [line for line in first_observation.splitlines() if "you see" in line]
    receptacles = listed(welcome[0]) if welcome else []
    seen, holding, transformed = False, "", False
    transformed_objects: set[str] = set()  # the game keeps an object hot/cool/clean after it is put down
    placed = wrong_taken = wrong_placed = 0
    best = done = 0
    per_object = 2 if kind in ("two", "") else _subgoals_needed(kind)  # a placed object completes its subgoals
    last_progress = 0
    location, visits, revisits, arrivals = "", set(), 0, []
    nothing_streak = 0
    for t, step in enumerate(history, start=1):
        line = _feedback(step.observation)
        nothing_streak = nothing_streak + 1 if line.startswith("Nothing happens") else 0
        if line.startswith("You arrive at "):
            location = line.removeprefix("You arrive at ").split(".")[0]
            revisits += location in visits
            visits.add(location)
            arrivals.append(location)
        if obj and ("you see" in line) and any(object_class(o) == obj for o in listed(line)):
            seen = True
        if line.startswith("You pick up the "):
            holding = line.removeprefix("You pick up the ").split(" from the ")[0]
            if obj and object_class(holding) != obj:
                wrong_taken += 1
        elif line.startswith("You move the "):
            moved, _, where = line.removeprefix("You move the ").rstrip(".").partition(" to the ")
            if object_class(moved) == obj:
                if object_class(where) == recep and (moved in transformed_objects or kind not in TRANSFORM_VERB):
                    placed += 1
                else:
                    wrong_placed += 1
            holding = ""
        elif kind in TRANSFORM_VERB and line.startswith(TRANSFORM_VERB[kind]) and holding:
            transformed_objects.add(holding)
        held_target = bool(holding) and object_class(holding) == obj
        transformed = held_target and holding in transformed_objects
        done = placed * per_object + held_target + transformed
        if done > best:
            best, last_progress = done, t
    t = len(history)
    held_target = bool(holding) and object_class(holding) == obj
    moves = arrivals[-RECENT_MOVES:]
    needed = _subgoals_needed(kind) if kind else 1
    features = {f"goal_{k}": float(kind == k) for k in KINDS}
    features.update({
        "goal_parsed": float(goal is not None),
        "target_seen": float(seen or held_target or placed > 0),
        "holding_target": float(held_target),
        "holding_other": float(bool(holding) and not held_target),
        "target_transformed": float(transformed),
        "targets_placed": float(placed),
        "subgoals_done": float(done),
        "subgoals_frac": min(done / needed, 1.0),
        "subgoals_lost": float(best - done),
        "steps_since_progress": float(t - last_progress),
        "wrong_taken": float(wrong_taken),
        "wrong_placed": float(wrong_placed),
        "at_goal_receptacle": float(bool(recep) and object_class(location) == recep),
        "visited_frac": len(visits) / len(receptacles) if receptacles else 0.0,
        "revisit_frac": revisits / len(arrivals) if arrivals else 0.0,
        # back and forth between two places: the looping flaw, visible in the last few moves
        "two_cycle": float(len(moves) >= 4 and len(set(moves)) <= 2),
        "nothing_streak": float(nothing_streak),
    })
    return features
