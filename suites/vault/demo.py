"""The vault slice of the demo: the built-in world (fetch a token, use it before it expires) with
its scripted agents over its default tasks and seeds, and a chat model (the local one) beside
them. The contracts workload's demo shows it: it is the same observation-contract question at its
smallest."""

from __future__ import annotations

from collections.abc import Callable, Sequence
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass
from functools import partial
from pathlib import Path
from typing import Any

from agentbed.executors import execute
from agentbed.log import TrajectoryWriter
from agentbed.progress import steps
from agentbed.runner import Budget, EpisodeSpec, run_episode
from agentbed.stats import bootstrap_ci
from agentbed.summary import fmt, table
from environments.vault.env import VaultEnv
from suites.vault.suite import SUITE

SCRIPTED_AGENTS = ("oracle", "naive", "random")
SEEDS = 3
COMMAND = f"agentbed run vault --agent {','.join(SCRIPTED_AGENTS)} --seeds {SEEDS}"


def default_tasks() -> list[str]:
    return [t for t in SUITE.tasks({}) if t not in SUITE.hidden_tasks]


def scripted_records(run_dir: Path) -> list[dict[str, Any]]:
    """Every scripted vault agent on every default task and seed, through the process executor."""
    specs = [EpisodeSpec("vault", t, a, s) for a in SCRIPTED_AGENTS for t in default_tasks() for s in range(SEEDS)]
    with steps("vault episodes", 1) as done:
        records = [r.to_dict() for r in execute(specs, run_dir, executor="process", jobs=2)]
        done(f"{len(specs)} episodes")
    return sorted(records, key=lambda r: (r["agent"], r["task"], r["seed"]))


def model_jobs(run_dir: Path, label: str, max_steps: int) -> list[ModelEpisode]:
    """A model agent on every default task, seed 0, ``max_steps`` each, logged in ``run_dir``."""
    return [ModelEpisode(EpisodeSpec("vault", task, label, 0), partial(VaultEnv, task), max_steps, run_dir)
            for task in default_tasks()]


@dataclass(frozen=True)
class ModelEpisode:
    """One episode of a model agent: its spec, a world factory, its step budget and where it is logged."""

    spec: EpisodeSpec
    world: Callable[[], Any]
    max_steps: int
    log_dir: Path


def run_model_episodes(jobs: Sequence[ModelEpisode], agent_factory: Any, label: str,
                       in_flight: int = 2) -> list[dict[str, Any]]:
    """``jobs`` with ``in_flight`` episodes at a time against one model server (its slots decode
    them together); records in the order of ``jobs``, whatever order they finish in."""
    def play(job: ModelEpisode) -> dict[str, Any]:
        return run_episode(job.world(), agent_factory(job.spec.seed), job.spec, budget=Budget(max_steps=job.max_steps),
                           writer=TrajectoryWriter(job.spec.log_in(job.log_dir))).to_dict()

    with steps(label, len(jobs)) as done, ThreadPoolExecutor(max(1, in_flight)) as pool:
        records = []
        for record in pool.map(play, jobs):
            records.append(record)
            done(record["task"])
    return records


def pass_table(records: list[dict[str, Any]], note: str) -> tuple[dict[str, Any], list[tuple[str, Any]]]:
    """Pass rate per agent (bootstrap over tasks), and the intervals for a figure."""
    agents = sorted({r["agent"] for r in records}, key=lambda a: (a not in SCRIPTED_AGENTS, a))
    rows, intervals = [], []
    for agent in agents:
        recs = [r for r in records if r["agent"] == agent]
        passes = bootstrap_ci([float(bool(r["success"])) for r in recs], groups=[r["task"] for r in recs])
        intervals.append((agent, passes))
        rows.append([agent, len(recs), len({r["seed"] for r in recs}), fmt(passes),
                     sum(1 for r in recs if r["status"] == "error")])
    return table("Vault (built-in world): pass rate per agent", ["agent", "episodes", "seeds", "pass rate", "errors"],
                 rows, note=note), intervals
