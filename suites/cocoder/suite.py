"""The cocoder suite's entry into the engine: one unit of work is a team run."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import gymnasium

from agentbed.runner import Budget, EpisodeRecord, EpisodeSpec
from agentbed.suite import Option, Suite
from controllers.cocoder.chunking import GRANULARITIES
from controllers.cocoder.partition import METHODS
from controllers.cocoder.strategies import CONTEXTS, STRATEGIES, risk_level
from environments.cocoder.agents import SimulatedCoder
from environments.cocoder.costmodel import CostModel, FailureModel
from environments.cocoder.env import CoCoderEnv
from environments.cocoder.tasks import load_task, subset_task_id, task_ids
from environments.cocoder.userrepo import USER_PREFIX, repo_task_id
from suites.cocoder.summary import summarize_runs
from suites.cocoder.team import TeamConfig, run_team

gymnasium.register(id="agentbed/cocoder-v0", entry_point="environments.cocoder.env:CoCoderEnv")


def _check_tasks(tasks: list[str], options: dict[str, Any]) -> None:
    """Before any work: the team's settings (``--agents`` in range), then every task's repository
    (a bad one is one line, exit 2)."""
    config_from_options(options)
    for task in tasks:
        load_task(resolve_task(task, options))


def config_from_options(options: dict[str, Any], coder: str = "simulated") -> TeamConfig:
    return TeamConfig(strategy=options["strategy"], agents=options["team_size"], method=options["method"],
                      cost=CostModel(latency=options["latency"]),
                      failure=FailureModel(p_cross=options["cross_error"]), coder=coder,
                      repair_rounds=options["repair_rounds"], granularity=options.get("granularity", "function"),
                      context=options.get("context", "fresh"), risk=options.get("risk", "sequential"))


def run_team_unit(spec: EpisodeSpec, run_dir: Path) -> EpisodeRecord:
    """The engine's unit for this suite: one team run, its manifest as the record's log."""
    config = config_from_options(spec.options, spec.agent)
    out = Path(run_dir) / "episodes"
    record = run_team(resolve_task(spec.task, spec.options), config, spec.seed, out, suite=spec.suite,
                      episode_id=spec.episode_id, run=spec.run).record
    record.task = spec.task
    record.log = str(Path(record.log).relative_to(run_dir)) if Path(record.log).is_relative_to(run_dir) else record.log
    return record


# synthetic packages runnable with --task beside synth-12 (left out of a default run)
SYNTHETIC_TASKS = ("synth-2", "synth-4", "synth-8", "synth-20", "synth-60")


def suite_tasks(options: dict[str, Any]) -> list[str]:
    """The fetched repositories, or (``--repo PATH``) the user's repository alone, named
    ``repo:NAME`` (the options carry where it is)."""
    if not options.get("repo"):
        return task_ids() + list(SYNTHETIC_TASKS)
    return [USER_PREFIX + Path(options["repo"]).name]


def resolve_task(task: str, options: dict[str, Any]) -> str:
    """The task id ``load_task`` takes: ``repo:PATH[#package=..&tests=..]`` for ``--repo``,
    ``TASK@modules=a,b`` with ``--modules``."""
    if not (task.startswith(USER_PREFIX) and options.get("repo")):
        return subset_task_id(task, options.get("modules", ""))
    extra = "&".join(f"{k}={options[k]}" for k in ("package", "tests") if options.get(k))
    return subset_task_id(repo_task_id(options["repo"]) + (f"#{extra}" if extra else ""), options.get("modules", ""))


def _demo(out_dir: Path, full: bool = False) -> dict[str, Any]:
    """Small by default (about a minute); ``full``: every repository, variant and sweep."""
    from suites.cocoder.demo import run_demo

    return run_demo(out_dir, full=full)


SUITE = Suite(
    name="cocoder",
    description="Multi-agent coding on real repositories: CoCoder's partition vs sequential, file-parallel, per-file.",
    tasks=suite_tasks,
    hidden_tasks=SYNTHETIC_TASKS,
    make_env=lambda task, options: CoCoderEnv(),  # unused: run_unit runs whole teams
    agents={"simulated": lambda setup: SimulatedCoder()},
    default_agent="simulated",
    options={
        "strategy": Option("cocoder", "how files are split among agents", choices=STRATEGIES),
        # not "agents": beside the engine's --agent NAMES a count would read as a list of agents
        "team_size": Option(3, "at most this many agents work at once (k)", type=int),
        "granularity": Option("function", "cocoder: split a module bigger than total/k by its definitions, "
                                          "at once against stubs or along their references (with late pieces "
                                          "for what waits for other modules, or without; into total/k-sized "
                                          "pieces or one per agent), whichever the plan's "
                                          "estimate prefers (function); force one split (simultaneous, ordered) "
                                          "or keep the paper's file-level partition (file)",
                              choices=GRANULARITIES),
        "context": Option("fresh", "cocoder: each unit in a new conversation shown what it uses of the agent's "
                                   "earlier units (fresh), or one growing conversation per agent (conversation)",
                          choices=CONTEXTS),
        "risk": Option("sequential", "cocoder: keep only plans no riskier than one sequential agent by the failure "
                                     "model, within one percentage point (sequential) or a margin M "
                                     "(sequential+M; sequential+0 is strict), take the fastest expected "
                                     "makespan (any), or keep only plans whose residual risk is at most a "
                                     "probability (e.g. 0.05)",
                       type=risk_level),
        "repo": Option("", "a repository of yours to rebuild (a checkout or an sdist of a pure-Python package "
                           "tested with pytest): its test dependencies are read from its metadata and fetched "
                           "as wheels on this host"),
        "package": Option("", "with --repo: the package to blank, when the repository has several"),
        "tests": Option("", "with --repo: the test folder (default: tests/, test/ or PACKAGE/tests)"),
        "modules": Option("", "blank only these modules (comma-separated dotted names), the rest given as "
                              "written: a smaller task, e.g. for a slow local model"),
        "method": Option("louvain", "community detection for the cocoder strategy", choices=METHODS),
        "latency": Option(20.0, "seconds per cross-agent message (lambda)", type=float),
        "cross_error": Option(0.03, "failure probability added per cross-group dependency (p_x)", type=float),
        "repair_rounds": Option(1, "leader test-and-repair rounds after the write phase", type=int),
    },
    default_seeds=3,
    budget=Budget(max_steps=400),
    run_unit=run_team_unit,
    summarize=lambda records, options: summarize_runs(records, options),
    demo=_demo,
    check_tasks=lambda tasks, options: _check_tasks(tasks, options),
)
