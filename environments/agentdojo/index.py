"""The committed index of AgentDojo's task names at the pinned benchmark version, so that listing
tasks (``agentbed list``) needs no import of ``agentdojo`` (which pulls in anthropic, openai and
google-genai: seconds of start-up).

The index is ``tasks-<version>.json`` beside this file: for each task suite, its user and
injection task names in AgentDojo's numeric order. It is generated from AgentDojo's own registry
(:func:`live_index`) by ``scripts/agentdojo-index``; ``tests/agentdojo/test_index.py`` checks it
equals the live enumeration of the installed package, and ``agentbed run agentdojo`` checks the
suites it runs against the real benchmark before anything runs (:func:`check_index`).
"""

from __future__ import annotations

import json
import sys
from functools import cache
from pathlib import Path
from typing import Any

from environments.agentdojo.benchmark import BENCHMARK_VERSION, TASK_SUITES

INDEX = Path(__file__).with_name(f"tasks-{BENCHMARK_VERSION}.json")
REGENERATE = "bash scripts/agentdojo-index"


def _number(task_name: str) -> int:
    return int(task_name.rsplit("_", 1)[1])


def live_index() -> dict[str, Any]:
    """The index as AgentDojo's installed registry enumerates it (imports ``agentdojo``)."""
    from environments.agentdojo.benchmark import task_suite

    suites = {}
    for name in TASK_SUITES:
        suite = task_suite(name)
        suites[name] = {"user_tasks": sorted(suite.user_tasks, key=_number),
                        "injection_tasks": sorted(suite.injection_tasks, key=_number)}
    return {"benchmark_version": BENCHMARK_VERSION, "suites": suites}


@cache
def committed_index() -> dict[str, Any]:
    """The committed index (a JSON file read; no ``agentdojo`` import)."""
    index = json.loads(INDEX.read_text(encoding="utf-8"))
    if index.get("benchmark_version") != BENCHMARK_VERSION:
        raise ValueError(f"{INDEX}: index of {index.get('benchmark_version')!r}, not {BENCHMARK_VERSION}; "
                         f"regenerate it: {REGENERATE}")
    return index


def indexed_user_tasks(suite: str) -> list[str]:
    return list(_suite_entry(suite)["user_tasks"])


def indexed_injection_tasks(suite: str) -> list[str]:
    return list(_suite_entry(suite)["injection_tasks"])


def _suite_entry(suite: str) -> dict[str, list[str]]:
    suites = committed_index()["suites"]
    if suite not in suites:
        raise KeyError(f"AgentDojo {BENCHMARK_VERSION} has no task suite {suite!r} (suites: {', '.join(suites)})")
    return suites[suite]


def index_differences(suites: tuple[str, ...] = TASK_SUITES) -> list[str]:
    """How the committed index differs from the installed benchmark on ``suites`` (empty: equal)."""
    live, committed = live_index()["suites"], committed_index()["suites"]
    out = []
    for suite in suites:
        for kind in ("user_tasks", "injection_tasks"):
            want, have = live[suite][kind], committed.get(suite, {}).get(kind)
            if want != have:
                missing = sorted(set(want) - set(have or ()), key=_number)
                extra = sorted(set(have or ()) - set(want), key=_number)
                out.append(f"{suite} {kind}: installed agentdojo has {len(want)}, the index {len(have or ())}"
                           f" (not indexed: {', '.join(missing) or 'none'}; not installed: {', '.join(extra) or 'none'}"
                           f"{'; order differs' if not missing and not extra else ''})")
    return out


def check_index(suites: tuple[str, ...] = TASK_SUITES) -> None:
    """Raise ValueError when the committed index is not the installed benchmark's on ``suites``."""
    differences = index_differences(suites)
    if differences:
        raise ValueError(f"the committed AgentDojo task index ({INDEX.name}) is not the installed benchmark's: "
                         f"{'; '.join(differences)}; regenerate it: {REGENERATE}")


def write_index(path: Path = INDEX) -> Path:
    """Write :func:`live_index` to ``path`` (what ``scripts/agentdojo-index`` runs)."""
    path.write_text(json.dumps(live_index(), indent=1) + "\n", encoding="utf-8")
    committed_index.cache_clear()
    return path


if __name__ == "__main__":
    print(f"wrote {write_index()}", file=sys.stderr)
