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
import signal
from collections import deque
from collections.abc import Callable, Generator, Iterable, Iterator, Mapping, Sequence
from dataclasses import replace
from multiprocessing.connection import Connection
from multiprocessing.connection import wait as wait_any
from multiprocessing.context import ForkContext, SpawnContext
from pathlib import Path
from typing import Any, cast

from agentbed.errors import WorkerDied, failure_text
from agentbed.executors_inflight import StopCheck, run_in_flight
from agentbed.inflight import ModelRuntime, current_runtime, is_model_bound, runtime_set
from agentbed.planned import Planned
from agentbed.provenance import header_provenance
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
    specs = with_provenance(specs)
    jobs = min(jobs or os.cpu_count() or 1, max(1, len(specs)))  # never more workers than episodes
    with runtime_set(runtime):  # this run's context: a run in another thread keeps its own
        if runtime is not None and executor == "process":
            rest = [s for s in specs if not is_model_bound(s.agent)]
            yield from _stoppable(_execute(rest, str(run_dir), executor, jobs, ray_address, ray_resources), stop)
            if stop is None or not stop():
                bound = [s for s in specs if is_model_bound(s.agent)]
                yield from run_in_flight(bound, run_dir, jobs=jobs, runtime=runtime, stop=stop)
        else:
            yield from _stoppable(_execute(specs, str(run_dir), executor, jobs, ray_address, ray_resources), stop)


def with_provenance(specs: Sequence[EpisodeSpec]) -> Sequence[EpisodeSpec]:
    """The specs carrying this process's provenance for their headers, so an episode run on another
    node (a Ray worker's installed copy knows no commit) names the code that planned it."""
    if isinstance(specs, Planned):  # one suite, one template: still made one at a time
        return specs if specs.template.provenance else \
            specs.with_fields(provenance=header_provenance(specs.template.suite))
    made = {suite: header_provenance(suite) for suite in {s.suite for s in specs if not s.provenance}}
    return [s if s.provenance else replace(s, provenance=made[s.suite]) for s in specs]


def _stoppable(records: Generator[EpisodeRecord, None, None], stop: StopCheck | None) -> Iterator[EpisodeRecord]:
    """Records until ``stop`` names a reason (asked after each); the executor is then shut down."""
    try:
        for record in records:
            yield record
            if stop is not None and stop():
                return
    finally:
        records.close()  # shuts the executor down (the generator's finally)


def _execute(specs: Sequence[EpisodeSpec], run_dir: str, executor: str, jobs: int, ray_address: str | None,
             ray_resources: Mapping[str, float] | None) -> Generator[EpisodeRecord, None, None]:
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


# Chunks handed to a worker ahead of the one it runs, so it never waits for the parent.
IN_FLIGHT_PER_WORKER = 2


def _process_pool(specs: Sequence[EpisodeSpec], run_dir: str, jobs: int) -> Iterator[EpisodeRecord]:
    """Worker processes that each pull chunks of episodes over a pipe of their own.

    Not ``concurrent.futures``: its manager and queue-feeder threads in the parent competed with
    two busy workers on two cores for the CPU and the parent's GIL, at about 0.04 ms an episode
    (docs/benchmarks.md). Here the parent's one thread sends a chunk, and on each answer yields its
    records and sends the next. When the caller stops early, each worker finishes the chunk it
    runs and exits; its records are not yielded, so a resumed run does them again."""
    context: ForkContext | SpawnContext = (multiprocessing.get_context("fork")
                                           if "fork" in multiprocessing.get_all_start_methods()
                                           else multiprocessing.get_context("spawn"))
    todo = deque(chunks(specs, jobs))
    workers: dict[Connection, Any] = {}
    in_flight: dict[Connection, int] = {}
    try:
        for _ in range(min(jobs, len(todo))):
            parent_end, child_end = context.Pipe()
            # a forked worker inherits the parent's end of its own pipe and of every earlier worker's:
            # it closes them, or a parent killed outright (SIGKILL, the OOM killer) never ends their
            # reads and the orphans hold the run's writer lock for ever (session 17's probe)
            inherited = [*workers, parent_end] if context.get_start_method() == "fork" else []
            # not a daemon: an episode may start processes of its own
            process = context.Process(target=_serve, args=(child_end, run_dir, inherited), daemon=False)
            process.start()
            child_end.close()
            workers[parent_end], in_flight[parent_end] = process, 0
        for conn in workers:
            while todo and in_flight[conn] < IN_FLIGHT_PER_WORKER:
                _send(conn, todo.popleft(), workers[conn], in_flight[conn])
                in_flight[conn] += 1
        while any(in_flight.values()):
            for conn in cast("list[Connection]", wait_any([c for c, n in in_flight.items() if n])):  # its input
                try:
                    records = conn.recv()
                except (EOFError, OSError):
                    raise _died(workers[conn], in_flight[conn]) from None
                if isinstance(records, _Failed):
                    raise RuntimeError(f"a worker process could not run or return a chunk of episodes: {records.text}")
                in_flight[conn] -= 1
                if todo:
                    _send(conn, todo.popleft(), workers[conn], in_flight[conn])
                    in_flight[conn] += 1
                yield from records
    finally:
        _stop(workers)


def _send(conn: Connection, chunk: list[EpisodeSpec], process: Any, unanswered: int) -> None:
    try:
        conn.send(chunk)
    except OSError:  # the worker is gone: its end of the pipe is closed
        raise _died(process, unanswered) from None


def _died(process: Any, unanswered: int) -> WorkerDied:
    process.join(1.0)
    return WorkerDied(f"a worker process ended (exit status {process.exitcode}) with {unanswered} chunks of "
                      "episodes unanswered; the episodes already recorded are kept: --resume runs the rest")


class _Failed:
    """A worker's answer when a chunk raised outside any episode (e.g. a record that cannot be
    pickled: nothing of it was written to the pipe)."""

    def __init__(self, text: str) -> None:
        self.text = text


def _serve(conn: Connection, run_dir: str, inherited: Sequence[Connection] = ()) -> None:
    """A pool worker: run each chunk it is sent and send back its records; ``None`` ends it, and so
    does the parent's death (its end of the pipe closes once ``inherited``, the parent's ends this
    fork copied, are closed here)."""
    for end in inherited:
        end.close()
    try:
        while (chunk := conn.recv()) is not None:
            try:
                answer: Any = run_chunk(chunk, run_dir)
                conn.send(answer)
            except Exception as exc:  # noqa: BLE001 - every episode's own failure is already a record
                conn.send(_Failed(failure_text(exc)))
    except (KeyboardInterrupt, EOFError, BrokenPipeError):
        pass  # Ctrl-C reaches the whole process group, and the parent reports it; a closed pipe: the parent is gone


def _stop(workers: Mapping[Connection, Any]) -> None:
    """Ask every worker to end after its chunk; one that does not within a while is terminated."""
    for conn in workers:
        try:
            conn.send(None)
        except OSError:
            pass  # already gone
    for conn, process in workers.items():
        process.join(60.0)
        if process.is_alive():
            os.kill(process.pid, signal.SIGTERM)
            process.join(5.0)
        conn.close()


def run_all(specs: Iterable[EpisodeSpec], run_dir: str | Path, on_record: Callable[[EpisodeRecord], None], **kw: Any) -> None:
    for record in execute(list(specs), run_dir, **kw):
        on_record(record)
