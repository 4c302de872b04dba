"""Recompute the prefix features of a branched dataset without branching again.

Branching costs almost all of a build (every action x rollout replays the prefix and plays to
the end); the features need only the base trajectories up to their last checkpoint. This
replays each (game, flaw, seed) trajectory live, exactly as the builder did, recomputes the
features at the recorded checkpoints with the current feature code and checks that the
replay is the recorded one: the base agent's risk at each checkpoint must match the row's.
Outcomes (success, steps) are left as they were.
"""

from __future__ import annotations

import random
from collections.abc import Callable
from concurrent.futures import ProcessPoolExecutor
from typing import Any

from agentbed.control import StepView
from agentbed.errors import UsageError
from controllers.oversight.dataset import (
    Dataset,
    _git_commit,
    checkpoint_features,
    make_base_agent,
    stated_risk,
)
from controllers.oversight.features import FEATURE_NAMES
from suites.oversight.benchmarks import load_target
from suites.oversight.build import recorded_config

Trajectory = tuple[str, str, int]  # game, flaw, seed


def trajectory_features(benchmark: str, options: dict[str, Any], game: str, flaw: str, seed: int,
                        steps: set[int]) -> dict[int, tuple[float, dict[str, float]]]:
    """Per checkpoint step of one base trajectory: (risk at the checkpoint, prefix features)."""
    target = load_target(benchmark, **options)
    if target.uses_global_random:
        random.seed(seed)
    env = target.make_env(game)
    agent = make_base_agent(target, flaw, seed)
    observation, _ = env.reset(seed=seed)
    agent.reset(seed=seed, task=env.task)
    tools = env.tool_specs()
    first_observation = observation
    history: list[StepView] = []
    risks: list[float] = []
    out: dict[int, tuple[float, dict[str, float]]] = {}
    try:
        for t in range(max(steps) + 1 if steps else 0):
            proposed = agent.act(observation, tools)
            risks.append(stated_risk(proposed.risk, risks))
            if t in steps:
                out[t] = (risks[-1], checkpoint_features(target, first_observation, history, risks))
            observation, reward, terminated, truncated, info = env.step(proposed.text)
            history.append(StepView(observation, proposed.text, reward, info))
            if terminated or truncated:
                break
    finally:
        env.close()
    return out


def _unit(args: tuple[str, dict[str, Any], str, str, int, set[int]]) -> dict[int, tuple[float, dict[str, float]]]:
    return trajectory_features(*args)


def refeature(dataset: Dataset, workers: int = 1, progress: Callable[[str], None] | None = None) -> Dataset:
    """The same rows with features recomputed from the replayed base trajectories."""
    prov = dataset.provenance
    options = recorded_config(prov).target_options  # the base agents' seeding as it was built
    wanted: dict[Trajectory, set[int]] = {}
    for row in dataset.rows:
        wanted.setdefault((row["game"], row["flaw"], int(row["seed"])), set()).add(int(row["checkpoint"]))
    units = [(prov["benchmark"], options, g, f, s, steps) for (g, f, s), steps in wanted.items()]
    pool = ProcessPoolExecutor(workers) if workers > 1 else None
    results = pool.map(_unit, units) if pool is not None else map(_unit, units)
    found: dict[tuple[Trajectory, int], tuple[float, dict[str, float]]] = {}
    try:
        for i, (unit, per_step) in enumerate(zip(units, results, strict=True), start=1):
            for t, value in per_step.items():
                found[((unit[2], unit[3], unit[4]), t)] = value
            if progress is not None:
                progress(f"{i}/{len(units)} trajectories")
    finally:
        if pool is not None:
            pool.shutdown()
    rows = []
    for row in dataset.rows:
        key = ((row["game"], row["flaw"], int(row["seed"])), int(row["checkpoint"]))
        if key not in found or abs(found[key][0] - float(row["risk"])) > 1e-9:
            raise UsageError(f"trajectory {row['trajectory']} step {row['checkpoint']}: the replayed base "
                             "trajectory is not the recorded one (risk differs or the episode ended earlier)")
        rows.append({**row, "features": found[key][1]})
    names = list(next(iter(found.values()))[1]) if found else list(FEATURE_NAMES)
    extra = [n for n in names if n not in FEATURE_NAMES]
    provenance = {**prov, "feature_names": [*FEATURE_NAMES, *extra],
                  "refeatured": {"git_commit": _git_commit(), "from_git_commit": prov.get("git_commit", "")}}
    return Dataset(provenance, rows)
