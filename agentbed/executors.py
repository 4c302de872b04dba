"""Executors: run many episodes serially, in a process pool, or on Ray.

Workers write each episode's log themselves and return its record; the parent appends the
record to the run index as results arrive. Logs carry no wall-clock time, pid or host, so the
same specs give byte-identical logs whatever the executor.
"""

from __future__ import annotations

import multiprocessing
import os
from collections.abc import Callable, Iterable, Iterator, Sequence
from concurrent.futures import FIRST_COMPLETED, ProcessPoolExecutor, wait
from pathlib import Path
from typing import Any

from agentbed.runner import EpisodeRecord, EpisodeSpec
from agentbed.worker import chunks, run_chunk, run_spec

EXECUTORS = ("serial", "process", "ray")


def execute(specs: Sequence[EpisodeSpec], run_dir: str | Path, *, executor: str = "process", jobs: int | None = None,
            ray_address: str | None = None) -> Iterator[EpisodeRecord]:
    """Yield a record for every spec as it finishes (order depends on the executor)."""
    jobs = jobs or os.cpu_count() or 1
    run_dir = str(run_dir)
    if executor == "serial" or (executor == "process" and (jobs == 1 or len(specs) <= 1)):
        for spec in specs:
            yield run_spec(spec, run_dir)
    elif executor == "process":
        yield from _process_pool(specs, run_dir, jobs)
    elif executor == "ray":
        from agentbed.executors_ray import execute_ray  # lazy: Ray is an optional extra

        yield from execute_ray(specs, run_dir, jobs, ray_address)
    else:
        raise ValueError(f"unknown executor {executor!r}; choose one of {', '.join(EXECUTORS)}")


def _process_pool(specs: Sequence[EpisodeSpec], run_dir: str, jobs: int) -> Iterator[EpisodeRecord]:
    context = multiprocessing.get_context("fork" if "fork" in multiprocessing.get_all_start_methods() else "spawn")
    with ProcessPoolExecutor(max_workers=jobs, mp_context=context) as pool:
        pending = {pool.submit(run_chunk, chunk, run_dir) for chunk in chunks(specs, jobs)}
        while pending:
            done, pending = wait(pending, return_when=FIRST_COMPLETED)
            for future in done:
                yield from future.result()


def run_all(specs: Iterable[EpisodeSpec], run_dir: str | Path, on_record: Callable[[EpisodeRecord], None], **kw: Any) -> None:
    for record in execute(list(specs), run_dir, **kw):
        on_record(record)
