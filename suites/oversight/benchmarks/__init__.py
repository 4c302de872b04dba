"""The benchmarks the oversight workload branches, each a :class:`BranchTarget`.

A target is benchmark-agnostic (controllers/oversight/target.py): an environment factory per game,
base agents (each emitting ``Action.risk``), the interventions and the step cap. New benchmarks
register a loader in ``TARGETS``.
"""

from __future__ import annotations

import importlib
from typing import Any

from agentbed.errors import UsageError
from controllers.oversight.target import BranchTarget, reseed_agent

__all__ = ["TARGETS", "BranchTarget", "load_target", "reseed_agent"]

TARGETS: dict[str, str] = {
    "vault": "suites.oversight.benchmarks.vault:target",
    "scienceworld": "suites.oversight.benchmarks.scienceworld:target",
    "alfworld": "suites.oversight.benchmarks.alfworld:target",
    "graphrag": "suites.oversight.benchmarks.graphrag:target",
}


def load_target(name: str, **options: Any) -> BranchTarget:
    """The target called ``name``; ``options`` go to its loader (e.g. ``games=20``).

    ``suite:NAME`` branches any installed suite with its own agents (see ``suite_adapter``)."""
    if name.startswith("suite:"):
        from suites.oversight.benchmarks.suite_adapter import suite_target

        return suite_target(name.removeprefix("suite:"), **options)
    if name not in TARGETS:
        raise UsageError(f"unknown benchmark {name!r}; benchmarks: {', '.join(sorted(TARGETS))}")
    module, attr = TARGETS[name].split(":")
    return getattr(importlib.import_module(module), attr)(**options)
