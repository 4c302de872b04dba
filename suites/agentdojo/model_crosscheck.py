"""A model under both runners, through the OpenAI-compatible path: AgentDojo's own benchmark script
(``agentdojo.scripts.benchmark.benchmark_suite``, the function its ``click`` command calls, with
the pipeline it builds for an OpenAI model) and ``agentbed run agentdojo --model openai:MODEL``
(AgentDojo's protocol, :mod:`environments.agentdojo.protocol`), task by task.

Each side reads its server from ``OPENAI_BASE_URL``, as AgentDojo's script does. A slice is a
rectangle: per task suite and attack, some user tasks x some injection tasks, run in AgentDojo's
order, so the requests each side sends can be compared one for one. AgentDojo's script also runs
every injection task as a user task first (its "injection tasks as user tasks" line); those
conversations are its own and are left out of the comparison (:func:`comparable_requests`).
"""

from __future__ import annotations

import contextlib
import io
import json
import os
import re
import warnings
from collections.abc import Iterator, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from environments.agentdojo.benchmark import BENCHMARK_VERSION, TaskId, task_suite
from suites.agentdojo.crosscheck import Scores, quiet_logger

# a wall-clock stamp in AgentDojo's runner is a virtual-clock stamp in agentbed's (docs/agentdojo.md)
STAMP = re.compile(r"\d{4}-\d{2}-\d{2}[ T]\d{2}:\d{2}(?::\d{2}(?:\.\d+)?)?")


@dataclass(frozen=True)
class Slice:
    suite: str
    attack: str | None
    user_tasks: tuple[str, ...]
    injection_tasks: tuple[str, ...] = ()

    def tasks(self) -> list[TaskId]:
        """In the order AgentDojo's script runs them."""
        if self.attack is None:
            return [TaskId(self.suite, u) for u in self.user_tasks]
        return [TaskId(self.suite, u, i, self.attack) for u in self.user_tasks for i in self.injection_tasks]


@contextlib.contextmanager
def openai_endpoint(base_url: str, api_key: str = "crosscheck") -> Iterator[None]:
    """``OPENAI_BASE_URL`` and ``OPENAI_API_KEY`` for the duration (how both runners find the server)."""
    saved = {k: os.environ.get(k) for k in ("OPENAI_BASE_URL", "OPENAI_API_KEY")}
    os.environ["OPENAI_BASE_URL"], os.environ["OPENAI_API_KEY"] = base_url, api_key
    try:
        yield
    finally:
        for key, value in saved.items():
            if value is None:
                os.environ.pop(key, None)
            else:
                os.environ[key] = value


def theirs(slices: Sequence[Slice], model: str, base_url: str, logdir: str | Path, defense: str | None = None
           ) -> dict[TaskId, Scores]:
    """AgentDojo's benchmark script, one call of its ``benchmark_suite`` per slice (with ``defense``:
    the pipeline its ``--defense`` builds), into a new ``logdir``. As the script does without
    ``--force-rerun``, a task whose log is already in ``logdir`` is read back, not run again: in a
    new directory, only the injection tasks that it runs as user tasks before every attack of a
    suite (a second attack's runs of them would repeat the first's; neither is compared)."""
    from agentdojo.models import ModelsEnum
    from agentdojo.scripts.benchmark import benchmark_suite

    if Path(logdir).exists() and any(Path(logdir).iterdir()):
        raise ValueError(f"{logdir}: not empty (AgentDojo's script would read its old logs back)")
    out: dict[TaskId, Scores] = {}
    with openai_endpoint(base_url), warnings.catch_warnings(), quiet_logger(logdir), \
            contextlib.redirect_stdout(io.StringIO()):
        warnings.simplefilter("ignore")
        for s in slices:
            results = benchmark_suite(task_suite(s.suite), ModelsEnum(model), Path(logdir), False, BENCHMARK_VERSION,
                                      user_tasks=s.user_tasks, injection_tasks=s.injection_tasks, attack=s.attack,
                                      defense=defense)
            for (user, injection), utility in results["utility_results"].items():
                if s.attack is None:
                    out[TaskId(s.suite, user)] = Scores(bool(utility), None)
                else:
                    out[TaskId(s.suite, user, injection, s.attack)] = Scores(
                        bool(utility), bool(results["security_results"][(user, injection)]))
    return out


def ours(slices: Sequence[Slice], model: str, base_url: str, run_dir: str | Path | None = None,
         options: dict[str, Any] | None = None) -> dict[TaskId, Scores]:
    """agentbed's episodes of ``--model openai:MODEL`` on the same tasks, in the same order."""
    from agentbed.log import TrajectoryWriter
    from agentbed.runner import EpisodeSpec, run_episode
    from suites.agentdojo.suite import SUITE

    opts = SUITE.resolve_options(options or {})
    out: dict[TaskId, Scores] = {}
    with openai_endpoint(base_url):
        for s in slices:
            for tid in s.tasks():
                spec = EpisodeSpec("agentdojo", str(tid), f"model:openai:{model}", 0, opts)
                env = SUITE.make_env(str(tid), opts)
                writer = TrajectoryWriter(spec.log_in(run_dir)) if run_dir is not None else None
                record = run_episode(env, SUITE.make_agent(spec, env), spec, budget=SUITE.budget, writer=writer,
                                     controller=SUITE.episode_controller(spec, env))
                if record.status != "ok":
                    raise RuntimeError(f"{tid}: episode ended with status {record.status}: {record.error[-400:]}")
                out[tid] = Scores(record.metrics["utility"], record.metrics["attack_success"])
    return out


def user_text(body: dict[str, Any]) -> str:
    """The first user message of a request (the task's prompt)."""
    for message in body["messages"]:
        if message["role"] == "user":
            content = message["content"]
            return content if isinstance(content, str) else "".join(p.get("text", "") for p in content)
    return ""


def comparable_requests(requests: list[dict[str, Any]], slices: Sequence[Slice]) -> list[str]:
    """The requests of the slices' tasks (not AgentDojo's runs of injection tasks as user tasks),
    as canonical JSON with wall- or virtual-clock stamps masked."""
    goals = {task_suite(s.suite).injection_tasks[i].GOAL for s in slices for i in task_suite(s.suite).injection_tasks}
    return [STAMP.sub("<stamp>", json.dumps(body, sort_keys=True)) for body in requests
            if user_text(body) not in goals]
