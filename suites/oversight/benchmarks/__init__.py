"""The benchmarks the oversight workload branches, each a :class:`BranchTarget`.

A target is benchmark-agnostic (controllers/oversight/target.py): an environment factory per game,
base agents (each emitting ``Action.risk``), the interventions and the step cap. New benchmarks
register a loader in ``TARGETS``.
"""

from __future__ import annotations

import dataclasses
import importlib
from collections.abc import Callable
from typing import Any

from agentbed.errors import UsageError
from controllers.oversight.target import BranchTarget, reseed_agent

__all__ = ["TARGETS", "BranchTarget", "load_target", "reseed_agent"]

TARGETS: dict[str, str] = {
    "vault": "suites.oversight.benchmarks.vault:target",
    "scienceworld": "suites.oversight.benchmarks.scienceworld:target",
    "alfworld": "suites.oversight.benchmarks.alfworld:target",
    "graphrag": "suites.oversight.benchmarks.graphrag:target",
    "agentdojo": "suites.oversight.benchmarks.agentdojo:target",
}


# What a loader needs to reach a split's units (suites/oversight/seeds.py) beyond its defaults.
_REACH: dict[str, Callable[[tuple[int, ...]], dict[str, Any]]] = {
    "scienceworld": lambda units: {"variations": units},
    "graphrag": lambda units: {"worlds": max(units) - 999},  # worlds 1000.. (suites/graphrag/scenarios)
}


def load_target(name: str, **options: Any) -> BranchTarget:
    """The target called ``name``; ``options`` go to its loader (e.g. ``games=20``).

    ``split="development"`` or ``"held-out"`` keeps only the games of that side of the benchmark's
    registered split (suites/oversight/seeds.py), so one build command makes a development or a
    held-out dataset. ``suite:NAME`` branches any installed suite with its own agents (see
    ``suite_adapter``)."""
    split = options.pop("split", None)
    if split is not None:
        return _split_target(name, split, options)
    if name.startswith("suite:"):
        from suites.oversight.benchmarks.suite_adapter import suite_target

        return suite_target(name.removeprefix("suite:"), **options)
    if name not in TARGETS:
        raise UsageError(f"unknown benchmark {name!r}; benchmarks: {', '.join(sorted(TARGETS))}")
    module, attr = TARGETS[name].split(":")
    return getattr(importlib.import_module(module), attr)(**options)


def _split_target(name: str, side: str, options: dict[str, Any]) -> BranchTarget:
    from suites.oversight.seeds import split_of

    split = split_of(name)
    if split is None or side not in ("development", "held-out"):
        raise UsageError(f"--split {side}: {name} has no registered split in suites/oversight/seeds.py"
                         if split is None else f"--split: development or held-out, got {side!r}")
    units = split.development if side == "development" else split.heldout
    if not units:
        raise UsageError(f"--split {side}: {name} registers no {side} {split.what}s (suites/oversight/seeds.py)")
    reach = _REACH.get(name)
    target = load_target(name, **{**(reach(units) if reach else {}), **options})
    return dataclasses.replace(target, games=[g for g in target.games if split.unit(g) in units])
