"""The oversight dataset builder with the workload's benchmarks plugged in."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

from controllers.oversight import dataset
from suites.oversight.benchmarks import load_target


def build_dataset(config: dataset.BuildConfig, log_dir: str | Path | None = None,
                  progress: Callable[[str], None] | None = None) -> dataset.Dataset:
    """Branch every (game, flaw, seed) of ``config`` on the benchmark it names."""
    return dataset.build_dataset(config, load_target, log_dir, progress)
