"""The vault slice of the demo: the built-in world (fetch a token, use it before it expires) with
its scripted agents over its default tasks and seeds, and a chat model (the local one) beside
them. The contracts workload's demo shows it: it is the same observation-contract question at its
smallest."""

from __future__ import annotations

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


def model_records(run_dir: Path, agent_factory: Any, label: str, max_steps: int) -> list[dict[str, Any]]:
    """A chat model on every default task, seed 0, ``max_steps`` each, logged like the others.
    ``agent_factory(seed)`` builds the agent (its server must already be up)."""
    records = []
    with steps("vault local model", len(default_tasks())) as done:
        for task in default_tasks():
            spec = EpisodeSpec("vault", task, label, 0)
            record = run_episode(VaultEnv(task), agent_factory(0), spec, budget=Budget(max_steps=max_steps),
                                 writer=TrajectoryWriter(spec.log_in(run_dir)))
            records.append(record.to_dict())
            done(task)
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
