"""Random streams keyed by what they belong to.

A scripted agent that seeds ``random.Random(seed)`` with the trajectory seed alone draws the same
numbers in every task it is run on: its slips are then perfectly correlated across tasks (issue
54). :func:`keyed_stream` seeds a stream from a SHA-256 of a key (the task, the agent, its
settings and the seeds), so each task draws its own numbers, the same in every process.
"""

from __future__ import annotations

import hashlib
import json
import random
from typing import Any

from agentbed.errors import UsageError

# how a scripted base agent seeds its streams: "game" (keyed by its task, :func:`keyed_stream`) or
# "legacy" (the episode seed alone, every task the same numbers; kept so older datasets rebuild)
SEEDINGS = ("game", "legacy")


def keyed_stream(*key: Any) -> random.Random:
    """A random stream seeded by a SHA-256 of ``key`` (JSON): stable across processes and Python
    versions, unlike ``hash()``, which is salted per process."""
    digest = hashlib.sha256(json.dumps(key).encode("utf-8")).digest()
    return random.Random(int.from_bytes(digest[:8], "big"))


def task_key(task: Any) -> str:
    """The key of the task an agent is reset on: a TaskSpec's id, a task name, or "" for none."""
    return str(getattr(task, "id", task or ""))


def checked_seeding(base_seeding: str) -> str:
    """A target's ``base_seeding`` option, refused (one line, naming it) unless one of SEEDINGS."""
    if base_seeding not in SEEDINGS:
        raise UsageError(f"base_seeding: one of {', '.join(SEEDINGS)}, got {base_seeding!r}")
    return base_seeding
