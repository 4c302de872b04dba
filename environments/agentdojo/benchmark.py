"""AgentDojo's benchmark as agentbed names it: the pinned version, its four task suites, task ids.

Everything here reads AgentDojo's own registry (``agentdojo.task_suite.load_suites``); nothing of
the benchmark is copied but its task names, for listing (``index.py``: a committed index checked
against the registry). A task id is ``SUITE.USER_TASK`` for a user task without an attack and
``SUITE.USER_TASK.INJECTION_TASK.ATTACK`` for a pair under an attack, with AgentDojo's own names
(``banking.user_task_0.injection_task_1.important_instructions``), so a result maps one to one
onto a row of AgentDojo's benchmark script (and a results unit ``TASK/SEED`` keeps its shape).
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from functools import cache
from pathlib import Path
from typing import Any

# The benchmark version every task, score and baseline refers to (AgentDojo's default in 0.1.35).
BENCHMARK_VERSION = "v1.2.2"
# Every version agentdojo 0.1.35 ships (load_suites._SUITES; tests/agentdojo/test_versions.py checks
# the installed package offers exactly these). --benchmark-version picks one; v1.2.2 is the default.
VERSIONS = ("v1", "v1.1", "v1.1.1", "v1.1.2", "v1.2", "v1.2.1", "v1.2.2")
TASK_SUITES = ("workspace", "travel", "banking", "slack")
# AgentDojo's fixed-template attacks whose text is built from the task alone (no model call). The
# first four are the ones the paper's tables use; the default run takes those.
ATTACKS = ("important_instructions", "tool_knowledge", "direct", "ignore_previous", "system_message", "injecagent")
DEFAULT_ATTACKS = ATTACKS[:4]
# AgentDojo's task names at every version of VERSIONS, for listing without importing agentdojo
# (index.py generates it from AgentDojo's registry and checks it against the installed package)
INDEX = Path(__file__).with_name("tasks.json")
REGENERATE = "bash scripts/agentdojo-index"


class BenchmarkUnavailable(ImportError):
    """The ``agentdojo`` package (the ``[agentdojo]`` extra) is not installed."""


def require_agentdojo() -> None:
    try:
        import agentdojo  # noqa: F401
    except ImportError as exc:
        raise BenchmarkUnavailable("the agentdojo package is not installed: pip install -e '.[agentdojo]'"
                                   " (scripts/setup installs it)") from exc


@cache
def task_suites(version: str = BENCHMARK_VERSION) -> dict[str, Any]:
    """AgentDojo's task suites at ``version``, by name."""
    require_agentdojo()
    from agentdojo.task_suite.load_suites import get_suites

    if version not in VERSIONS:
        raise KeyError(f"benchmark version {version!r}: agentbed runs {', '.join(VERSIONS)}")
    return dict(get_suites(version))


def task_suite(name: str, version: str | None = None) -> Any:
    """Task suite ``name`` at ``version`` (default :data:`BENCHMARK_VERSION`)."""
    version = version or BENCHMARK_VERSION
    suites = task_suites(version)
    if name not in suites:
        raise KeyError(f"AgentDojo {version} has no task suite {name!r} (suites: {', '.join(suites)})")
    return suites[name]


def suite_of(params: dict[str, Any]) -> Any:
    """The task suite of a task's spec parameters, at the version they name."""
    return task_suite(params["suite"], params.get("benchmark_version"))


@dataclass(frozen=True)
class TaskId:
    """One row of AgentDojo's results: a user task, and an injection task under an attack or none."""

    suite: str
    user_task: str
    injection_task: str | None = None
    attack: str | None = None

    def __str__(self) -> str:
        parts = [self.suite, self.user_task]
        if self.injection_task is not None:
            parts += [self.injection_task, self.attack or ""]
        return ".".join(parts)

    @classmethod
    def parse(cls, text: str) -> TaskId:
        parts = text.split(".")
        if len(parts) == 2:
            return cls(parts[0], parts[1])
        if len(parts) == 4:
            return cls(parts[0], parts[1], parts[2], parts[3])
        raise ValueError(f"task {text!r}: expected SUITE.USER_TASK or SUITE.USER_TASK.INJECTION_TASK.ATTACK")

    def check(self, version: str | None = None) -> TaskId:
        """Itself, once every name is known to AgentDojo (at ``version``); otherwise a one-line KeyError."""
        suite = task_suite(self.suite, version)
        if self.user_task not in suite.user_tasks:
            raise KeyError(f"task {self}: {self.suite} has no {self.user_task!r}")
        if self.injection_task is not None:
            if self.injection_task not in suite.injection_tasks:
                raise KeyError(f"task {self}: {self.suite} has no {self.injection_task!r}")
            if self.attack not in ATTACKS:
                raise KeyError(f"task {self}: unknown attack {self.attack!r} (attacks: {', '.join(ATTACKS)})")
        return self


def _number(task_name: str) -> int:
    return int(task_name.rsplit("_", 1)[1])


def user_task_names(suite: str, version: str | None = None) -> list[str]:
    return sorted(task_suite(suite, version).user_tasks, key=_number)


def injection_task_names(suite: str, version: str | None = None) -> list[str]:
    return sorted(task_suite(suite, version).injection_tasks, key=_number)


@cache
def committed_index() -> dict[str, Any]:
    """The committed index of task names, per version (a JSON file read; no ``agentdojo`` import)."""
    index = json.loads(INDEX.read_text(encoding="utf-8"))
    if list(index.get("versions") or ()) != list(VERSIONS):
        raise ValueError(f"{INDEX}: index of versions {list(index.get('versions') or ())}, not {list(VERSIONS)}; "
                         f"regenerate it: {REGENERATE}")
    return index


def indexed_user_tasks(suite: str, version: str | None = None) -> list[str]:
    return list(_indexed(suite, version)["user_tasks"])


def indexed_injection_tasks(suite: str, version: str | None = None) -> list[str]:
    return list(_indexed(suite, version)["injection_tasks"])


def _indexed(suite: str, version: str | None) -> dict[str, list[str]]:
    version = version or BENCHMARK_VERSION
    versions = committed_index()["versions"]
    if version not in versions:
        raise KeyError(f"benchmark version {version!r}: agentbed runs {', '.join(VERSIONS)}")
    if suite not in versions[version]:
        raise KeyError(f"AgentDojo {version} has no task suite {suite!r} (suites: {', '.join(versions[version])})")
    return versions[version][suite]


def task_ids(suites: tuple[str, ...] = TASK_SUITES, attacks: tuple[str | None, ...] = (None, *DEFAULT_ATTACKS),
             version: str | None = None) -> list[TaskId]:
    """Every task of ``suites`` at ``version`` (default :data:`BENCHMARK_VERSION`): each user task
    alone (attack ``None``), then every (user task, injection task) pair under each attack, in
    AgentDojo's numeric order. The names come from the committed index
    (:mod:`environments.agentdojo.index`), not from importing AgentDojo; a run checks them against
    the installed benchmark before it starts."""
    out: list[TaskId] = []
    for attack in attacks:
        for suite in suites:
            for user in indexed_user_tasks(suite, version):
                if attack is None:
                    out.append(TaskId(suite, user))
                    continue
                out.extend(TaskId(suite, user, inj, attack) for inj in indexed_injection_tasks(suite, version))
    return out
