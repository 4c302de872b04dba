"""The agentdojo suite's entry into the engine: AgentDojo's tasks under its attacks, its ground truth
and an injection follower as scripted agents, any chat model, and its defenses as an option.

Options select the slice: ``--task-suite`` (one of AgentDojo's four, or all), ``--attack`` (none:
the user tasks alone; one attack: its pairs; all: the user tasks and the pairs of the four main
attacks), ``--defense`` and ``--victim`` (the model name the attacks address). The default run is
the whole benchmark: 97 user tasks and 4 x 949 pairs.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import environments.agentdojo  # noqa: F401 - registers agentbed/agentdojo-v0
from agentbed.env import ToolEnv
from agentbed.runner import Budget, EpisodeSpec
from agentbed.suite import Option, Suite, SuiteError
from attacks.agentdojo.injections import DEFAULT_VICTIM, injections
from controllers.agentdojo.defenses import DEFENSES, defense_controller
from environments.agentdojo.agents import QUESTION, REFUSAL, EndWith, GroundTruthAgent, InjectionFollower
from environments.agentdojo.benchmark import (
    ATTACKS,
    BENCHMARK_VERSION,
    DEFAULT_ATTACKS,
    TASK_SUITES,
    VERSIONS,
    TaskId,
    task_ids,
)
from environments.agentdojo.env import AGENTDOJO, PROTOCOLS, AgentDojoEnv, task_spec
from environments.agentdojo.index import check_index

OPTIONS = {
    "task_suite": Option("all", "AgentDojo task suite", choices=("all", *TASK_SUITES)),
    "attack": Option("all", "none (user tasks alone), one attack (its pairs), or all (user tasks and the pairs of"
                     f" {', '.join(DEFAULT_ATTACKS)})", choices=("all", "none", *ATTACKS)),
    "defense": Option("none", "AgentDojo defense, a controller around any agent (tool_filter: the agent's model chooses"
                      " the tools; tool_filter_oracle: the ground truth's tools, an upper bound)", choices=DEFENSES),
    "victim": Option(DEFAULT_VICTIM, "model name the attacks address (AgentDojo's MODEL_NAMES key)"),
    "benchmark_version": Option(BENCHMARK_VERSION, "AgentDojo benchmark version: its suites' tasks, environments"
                                " and graders as that version has them (every version the pinned agentdojo ships)",
                                choices=VERSIONS, counted=True),
    "protocol": Option(AGENTDOJO, "agentdojo: what AgentDojo's own pipeline sends a model and how it loops (its"
                       " system message and tools, every call of a reply, 15 rounds, re-run on no content);"
                       " agentbed: one call per reply and a final_answer tool, NOT comparable with AgentDojo's"
                       " tables", choices=PROTOCOLS),
}


def selected_tasks(options: dict[str, Any]) -> list[TaskId]:
    suites = TASK_SUITES if options.get("task_suite", "all") == "all" else (options["task_suite"],)
    attack = options.get("attack", "all")
    attacks = (None, *DEFAULT_ATTACKS) if attack == "all" else (None,) if attack == "none" else (attack,)
    return task_ids(suites, attacks, options.get("benchmark_version", BENCHMARK_VERSION))


def _tasks(options: dict[str, Any]) -> list[str]:
    return [str(t) for t in selected_tasks(options)]


def _check_tasks(tasks: list[str], options: dict[str, Any]) -> None:
    """Before a run: the tasks are listed from the committed index (no AgentDojo import); here the
    index of the suites about to run must equal the installed benchmark's, and each task must be
    known to AgentDojo itself."""
    run = {TaskId.parse(task).suite for task in tasks}
    version = options.get("benchmark_version", BENCHMARK_VERSION)
    try:
        check_index(tuple(s for s in TASK_SUITES if s in run), version)
        for task in tasks:
            TaskId.parse(task).check(version)
    except (ImportError, KeyError, ValueError) as exc:
        raise SuiteError(str(exc.args[0] if exc.args else exc)) from exc


def make_env(task: str, options: dict[str, Any]) -> AgentDojoEnv:
    """The environment of one task, its injections made by AgentDojo's attack for ``victim``."""
    version = options.get("benchmark_version", BENCHMARK_VERSION)
    tid = TaskId.parse(task).check(version)
    return AgentDojoEnv(task_spec(tid, injections(tid, options.get("victim", DEFAULT_VICTIM), version),
                                  options.get("protocol", AGENTDOJO), version))


def _describe(task: str) -> dict[str, Any]:
    tid = TaskId.parse(task)
    return {"task_suite": tid.suite, "user_task": tid.user_task, "injection_task": tid.injection_task,
            "attack": tid.attack}


AGENTS = {
    "ground-truth": lambda setup: GroundTruthAgent(),
    "injection-follower": lambda setup: InjectionFollower(),
    "refuse": lambda setup: EndWith("refuse", REFUSAL),
    "ask-user": lambda setup: EndWith("ask-user", QUESTION),
}


def _model_agent(spec: EpisodeSpec, env: ToolEnv | None) -> Any:
    """``--model`` under AgentDojo's protocol (None under agentbed's: its chat agent plays)."""
    from suites.agentdojo.models import dojo_model_agent

    return dojo_model_agent(spec, env)


def _controller(spec: EpisodeSpec, env: ToolEnv, recorded: list[dict[str, Any]] | None) -> Any:
    """The run's ``--defense`` as a controller around whichever agent plays (None for none). In a
    re-run, the model-chosen filter takes the model's recorded choice from the log's first step."""
    first = next((r for r in recorded or () if r.get("type") == "step"), None)
    begin = ((first or {}).get("control") or {}).get("begin") if recorded is not None else None
    return defense_controller(spec.options.get("defense", "none"), env.task.params, env.task.description, begin, env)


def _summarize(records: list[dict[str, Any]], options: dict[str, Any]) -> dict[str, Any]:
    from suites.agentdojo.report import build_summary

    return build_summary(records, "agentbed run agentdojo " + " ".join(
        f"--{k.replace('_', '-')} {v}" for k, v in sorted(options.items()) if OPTIONS[k].default != v))


def _demo(out_dir: Path) -> dict[str, Any]:
    from suites.agentdojo.demo import run_demo

    return run_demo(out_dir, SUITE)


SUITE = Suite(
    name="agentdojo",
    description="AgentDojo (Debenedetti et al., NeurIPS 2024; v1.2.2, --benchmark-version for the others): prompt"
                " injections against tool-using agents, scored by AgentDojo's own task functions.",
    tasks=_tasks,
    make_env=make_env,
    agents=AGENTS,
    default_agent="ground-truth",
    options=OPTIONS,
    # AgentDojo's caps are its 15 rounds and 3 tries (the world's); the step budget is a backstop
    budget=Budget(max_steps=1000),
    summarize=_summarize,
    demo=_demo,
    describe_task=_describe,
    check_tasks=_check_tasks,
    controller=_controller,
    model_agent=_model_agent,
)
