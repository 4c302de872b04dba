"""Executors: run many episodes serially, in a process pool, or on Ray.

Serial and pool workers write each episode's log into the run directory themselves and return
its record; Ray workers, which may be on other machines, send the log's bytes back with the
record and the driver stores them (agentbed.executors_ray). The parent appends the record to
the run index as results arrive. Logs carry no wall-clock time, pid or host, so the
same specs give byte-identical logs whatever the executor.

Given a :class:`~agentbed.inflight.ModelRuntime`, the process executor runs model-bound
episodes (a ``model:`` agent) many at a time per worker (:mod:`agentbed.executors_inflight`),
and the other episodes as before.
"""

from __future__ import annotations

import multiprocessing
import os
from collections.abc import Callable, Iterable, Iterator, Mapping, Sequence
from concurrent.futures import FIRST_COMPLETED, ProcessPoolExecutor, wait
from pathlib import Path
from typing import Any

from agentbed.executors_inflight import StopCheck, run_in_flight
from agentbed.inflight import ModelRuntime, current_runtime, is_model_bound, set_runtime
from agentbed.runner import EpisodeRecord, EpisodeSpec
from agentbed.worker import chunks, run_chunk, run_spec

EXECUTORS = ("serial", "process", "ray")


def execute(specs: Sequence[EpisodeSpec], run_dir: str | Path, *, executor: str = "process", jobs: int | None = None,
            ray_address: str | None = None, runtime: ModelRuntime | None = None,
            stop: StopCheck | None = None, ray_resources: Mapping[str, float] | None = None,
            ) -> Iterator[EpisodeRecord]:
    """Yield a record for every spec as it finishes (order depends on the executor).

    ``runtime`` gives model-bound episodes their connection caps and cache (and, with the process
    executor, many in flight per worker); ``stop`` is asked before each model-bound episode is
    handed out (after each record elsewhere) and, once it names a reason, no more are run.
    """
    if executor not in EXECUTORS:
        raise ValueError(f"unknown executor {executor!r}; choose one of {', '.join(EXECUTORS)}")
    jobs = min(jobs or os.cpu_count() or 1, max(1, len(specs)))  # never more workers than episodes
    previous = set_runtime(runtime)
    try:
        if runtime is not None and executor == "process":
            rest = [s for s in specs if not is_model_bound(s.agent)]
            yield from _stoppable(_execute(rest, str(run_dir), executor, jobs, ray_address, ray_resources), stop)
            if stop is None or not stop():
                bound = [s for s in specs if is_model_bound(s.agent)]
                yield from run_in_flight(bound, run_dir, jobs=jobs, runtime=runtime, stop=stop)
        else:
            yield from _stoppable(_execute(specs, str(run_dir), executor, jobs, ray_address, ray_resources), stop)
    finally:
        set_runtime(previous)


def _stoppable(records: Iterator[EpisodeRecord], stop: StopCheck | None) -> Iterator[EpisodeRecord]:
    """Records until ``stop`` names a reason (asked after each); the executor is then shut down."""
    try:
        for record in records:
            yield record
            if stop is not None and stop():
                return
    finally:
        records.close()  # type: ignore[attr-defined] - a generator


def _execute(specs: Sequence[EpisodeSpec], run_dir: str, executor: str, jobs: int, ray_address: str | None,
             ray_resources: Mapping[str, float] | None) -> Iterator[EpisodeRecord]:
    if not specs:
        return
    if executor == "serial" or (executor == "process" and (jobs == 1 or len(specs) <= 1)):
        for spec in specs:
            yield run_spec(spec, run_dir)
    elif executor == "process":
        yield from _process_pool(specs, run_dir, jobs)
    elif executor == "ray":
        from agentbed.executors_ray import execute_ray  # lazy: Ray is an optional extra

        yield from execute_ray(specs, run_dir, jobs, ray_address, ray_resources, current_runtime())


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
