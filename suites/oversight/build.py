"""The oversight dataset builder with the workload's benchmarks plugged in."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import Any

from controllers.oversight import dataset
from suites.oversight.benchmarks import load_target

# the benchmarks (beside alfworld, whose target has its own options) whose scripted base agents take
# ``base_seeding`` (suites/oversight/benchmarks/flawed.py)
SEEDED_BASE_AGENTS = ("scienceworld", "vault")


def build_dataset(config: dataset.BuildConfig, log_dir: str | Path | None = None,
                  progress: Callable[[str], None] | None = None) -> dataset.Dataset:
    """Branch every (game, flaw, seed) of ``config`` on the benchmark it names."""
    return dataset.build_dataset(config, load_target, log_dir, progress)


def recorded_config(provenance: dict[str, Any], **changes: Any) -> dataset.BuildConfig:
    """The build configuration a dataset recorded, read as it was built: a dataset from before
    issue 54 recorded no seeding scheme (it used LEGACY_SEEDING) and, on ALFWorld, no reflect mode
    (its "reflect" cut the flaw rates), so those are filled in and it rebuilds to the same bytes.
    Likewise an ALFWorld, ScienceWorld or vault dataset that records no ``base_seeding`` (in its
    options or the target's notes) was built before its base agents' streams were seeded by the
    game: "legacy"; and a GraphRAG dataset that records no ``dress`` was built under the titled
    dress (see ``dress``)."""
    fields = dict(provenance["config"])
    if "seeding" not in fields:
        fields["seeding"] = dataset.LEGACY_SEEDING
        if fields.get("benchmark") == "alfworld":
            fields["target_options"] = {"reflect": "mechanism+cut", **fields.get("target_options", {})}
    if fields.get("benchmark") in ("alfworld", *SEEDED_BASE_AGENTS):
        fields["target_options"] = {"base_seeding": base_seeding(provenance), **fields.get("target_options", {})}
    if fields.get("benchmark") == "graphrag":
        fields["target_options"] = {"dress": dress(provenance), **fields.get("target_options", {})}
    return dataset.BuildConfig(**{**fields, **changes})


def base_seeding(provenance: dict[str, Any]) -> str:
    """How an ALFWorld, ScienceWorld or vault dataset's base agents seeded their streams (see
    ``recorded_config``)."""
    return recorded_option(provenance, "base_seeding", "legacy")


def dress(provenance: dict[str, Any]) -> str:
    """The camouflage of a GraphRAG dataset's attack documents (its options, else the target's
    notes); one that names none was built before the dress was recorded, under "titled"."""
    from suites.oversight.benchmarks.graphrag import RECORDED_DRESS

    return recorded_option(provenance, "dress", RECORDED_DRESS)


def recorded_option(provenance: dict[str, Any], name: str, default: str) -> str:
    """A target option as a dataset recorded it: in its build options, else in the target's notes,
    else ``default`` (what every dataset built before the option was recorded used)."""
    options = provenance["config"].get("target_options") or {}
    notes = provenance.get("target_notes") or {}
    return str(options.get(name) or notes.get(name) or default)
