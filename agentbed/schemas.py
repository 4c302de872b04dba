"""The JSON Schemas of the engine's files, and the shape a run's seeds are held in.

run.json (:data:`RUN_META_SCHEMA`, its plan also the manifest's), an index line
(:data:`INDEX_RECORD_SCHEMA`), results.json (:data:`RESULTS_SCHEMA`) and a log record (the
trajectory schema, ``agentbed/schema/trajectory.schema.json``, per record type:
:func:`record_schema`); :mod:`agentbed.validate` reads the files and checks them against these.
A plan's seeds one step apart (every ``--seeds N --seed-start S``) are held as the ``range`` they
are (:func:`fold_seeds`), never as a list of 100,000 integers.
"""

from __future__ import annotations

import itertools
import json
from collections.abc import Iterable
from functools import cache
from pathlib import Path
from typing import Any

_STR = {"type": "string"}
_NAME = {"type": "string", "minLength": 1}

RUN_ID_SCHEMA: dict[str, Any] = {"type": "string", "pattern": "^[0-9a-f]{32}$"}
SEED_SCHEMA: dict[str, Any] = {"type": "integer", "minimum": 0, "maximum": 2**32 - 1}  # what numpy seeds take
RUN_META_SCHEMA: dict[str, Any] = {
    "type": "object",
    "required": ["suite", "tasks", "agents", "seeds", "options"],
    "properties": {
        "suite": _NAME,
        "tasks": {"type": "array", "items": _NAME, "minItems": 1, "uniqueItems": True},
        "agents": {"type": "array", "items": _NAME, "minItems": 1, "uniqueItems": True},
        "seeds": {"type": "array", "items": SEED_SCHEMA, "minItems": 1, "uniqueItems": True},
        "options": {"type": "object"},
        "degrade": {"type": "number", "minimum": 0, "maximum": 1},
        "run_id": RUN_ID_SCHEMA,
        "executor": _STR,
        "command": _STR,
        "cache": {"type": "boolean"},
        "jobs": {"type": "integer", "minimum": 1, "maximum": 256},  # how to run (cli_run), not what
        "max_connections": {"type": "integer", "minimum": 1},
    },
}


def fold_seeds(items: Iterable[Any]) -> range | list[Any]:
    """``items`` (a plan's seeds) as the ``range`` they are when they are integers at one step
    apart (not 1.0, not True), taken one at a time and held as three numbers; from the first item
    that breaks the step on, as a list of them all (an empty ``items`` is an empty list).
    :func:`agentbed.jsonstream.read_folded` folds run.json's seeds as it reads them;
    :func:`agentbed.jsonstream.iter_streamed` writes a range as the list of its integers, byte for byte."""
    flow = iter(items)
    start, step, count = 0, 1, 0
    for item in flow:
        if type(item) is int:
            if count == 0:
                start, count = item, 1
                continue
            if count == 1 and item != start:
                step, count = item - start, 2
                continue
            if count > 1 and item == start + step * count:
                count += 1
                continue
        kept = list(range(start, start + step * count, step))
        kept.append(item)
        kept.extend(flow)
        return kept
    return range(start, start + step * count, step) if count else []



def seeds_text(seeds: Iterable[Any], shown: int = 10) -> str:
    """A plan's seeds as a user reads them: "seed 3", "seeds 0-7", "seeds 0, 2, 9" (the first
    ``shown``, then how many in all), never a Python ``range(0, 8)``."""
    folded = fold_seeds(seeds)
    if isinstance(folded, range) and folded.step == 1 and len(folded) > 1:
        return f"seeds {folded.start}-{folded[-1]}"
    items = [str(s) for s in itertools.islice(folded, shown)]
    more = f", ... ({len(folded)} in all)" if len(folded) > shown else ""
    return ("seed " if len(folded) == 1 else "seeds ") + (", ".join(items) or "none") + more

INDEX_RECORD_SCHEMA: dict[str, Any] = {
    "type": "object",
    "required": ["episode_id", "suite", "task", "agent", "seed", "status", "success"],
    "properties": {
        "episode_id": _NAME, "suite": _STR, "task": _STR, "agent": _STR, "seed": {"type": "integer"},
        "status": _STR, "success": {"type": "boolean"}, "total_reward": {"type": "number"},
        "steps": {"type": "integer"}, "virtual_seconds": {"type": "number"}, "tokens": {"type": "integer"},
        "metrics": {"type": "object"}, "labels": {"type": "array", "items": _STR}, "options": {"type": "object"},
        "log": _STR, "digest": _STR, "wall_seconds": {"type": "number"}, "error": {"type": ["string", "null"]},
    },
}

RESULTS_SCHEMA: dict[str, Any] = {
    "type": "object",
    "required": ["format", "metrics"],
    "properties": {
        "format": {"const": "agentbed.results/1"},
        "episodes": {"type": "integer"},
        "seeds": {"type": "array"},
        "metrics": {"type": "array", "items": {
            "type": "object",
            "required": ["suite", "agent", "metric", "values"],
            "properties": {
                "suite": _STR, "agent": _STR, "metric": _STR, "higher_is_better": {"type": "boolean"},
                "tolerance": {"type": "number", "minimum": 0},
                "range": {"type": "array", "items": {"type": ["number", "null"]}, "minItems": 2, "maxItems": 2},
                "values": {"type": "object", "additionalProperties": {"type": "number"}},
            },
        }},
    },
}


@cache
def trajectory_schema() -> dict[str, Any]:
    path = Path(__file__).resolve().parent / "schema" / "trajectory.schema.json"
    return json.loads(path.read_text(encoding="utf-8"))


@cache
def record_schema(kind: str) -> dict[str, Any]:
    """The trajectory schema for one record type: its if/then branch for that type picked
    ahead of time (what the full schema says, checked several times faster)."""
    full = trajectory_schema()
    branches = [b["then"] for b in full.get("allOf", [])
                if b.get("if", {}).get("properties", {}).get("type", {}).get("const") == kind]
    return {**{k: v for k, v in full.items() if k != "allOf"}, "allOf": branches}
