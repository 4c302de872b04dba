"""The committed index of AgentDojo's task names at every benchmark version the pinned package
ships (``benchmark.INDEX``, ``tasks.json`` beside this file), so that listing tasks
(``agentbed list``) needs no import of ``agentdojo``, which pulls in anthropic, openai and
google-genai: seconds of start-up. ``benchmark.task_ids`` reads it.

For each version and task suite it holds the user and injection task names in AgentDojo's numeric order.
It is generated from AgentDojo's own registry (:func:`live_index`) by ``scripts/agentdojo-index``;
``tests/agentdojo/test_index.py`` checks it equals the live enumeration of the installed package,
and ``agentbed run agentdojo`` checks the suites it runs against the real benchmark before
anything runs (:func:`check_index`).
"""

from __future__ import annotations

import json
import sys
from pathlib import Path
from typing import Any

from environments.agentdojo import benchmark


def _number(task_name: str) -> int:
    return int(task_name.rsplit("_", 1)[1])


def live_index() -> dict[str, Any]:
    """The index as AgentDojo's installed registry enumerates it (imports ``agentdojo``)."""
    versions: dict[str, Any] = {}
    for version in benchmark.VERSIONS:
        versions[version] = {name: {"user_tasks": benchmark.user_task_names(name, version),
                                    "injection_tasks": benchmark.injection_task_names(name, version)}
                             for name in benchmark.TASK_SUITES}
    return {"versions": versions}


def index_differences(suites: tuple[str, ...] = benchmark.TASK_SUITES, version: str = benchmark.BENCHMARK_VERSION
                      ) -> list[str]:
    """How the committed index differs from the installed benchmark at ``version`` on ``suites`` (empty: equal)."""
    live, committed = live_index()["versions"][version], benchmark.committed_index()["versions"].get(version, {})
    out = []
    for suite in suites:
        for kind in ("user_tasks", "injection_tasks"):
            want, have = live[suite][kind], committed.get(suite, {}).get(kind) or []
            if want != have:
                missing = sorted(set(want) - set(have), key=_number)
                extra = sorted(set(have) - set(want), key=_number)
                out.append(f"{version} {suite} {kind}: installed agentdojo has {len(want)}, the index {len(have)}"
                           f" (not indexed: {', '.join(missing) or 'none'}; not installed: {', '.join(extra) or 'none'}"
                           f"{'; order differs' if not missing and not extra else ''})")
    return out


def check_index(suites: tuple[str, ...] = benchmark.TASK_SUITES, version: str = benchmark.BENCHMARK_VERSION) -> None:
    """Raise ValueError when the committed index is not the installed benchmark's at ``version`` on ``suites``."""
    differences = index_differences(suites, version)
    if differences:
        raise ValueError(f"the committed AgentDojo task index ({benchmark.INDEX.name}) is not the installed "
                         f"benchmark's: {'; '.join(differences)}; regenerate it: {benchmark.REGENERATE}")


def write_index(path: Path = benchmark.INDEX) -> Path:
    """Write :func:`live_index` to ``path`` (what ``scripts/agentdojo-index`` runs)."""
    path.write_text(json.dumps(live_index(), indent=1) + "\n", encoding="utf-8")
    benchmark.committed_index.cache_clear()
    return path


if __name__ == "__main__":
    print(f"wrote {write_index()}", file=sys.stderr)
