"""The in-flight executor: model-bound episodes, many at a time in each worker.

Each of ``jobs`` workers (threads of this process when ``jobs`` is 1, forked processes
otherwise) runs up to ``max_connections`` episodes at once, one thread each, under the world
lock described in :mod:`agentbed.inflight`; the connection cap itself is one per model across
all workers. The parent hands out episodes one at a time, at most ``max_connections + 2 * jobs``
ahead of the finished ones, so it can stop handing them out (a cost budget) with few in flight,
and each record reaches the caller (the run index) as soon as its episode ends, whatever the
order: a kill loses only unfinished episodes, which ``--resume`` runs again.
"""

from __future__ import annotations

import multiprocessing
import os
import queue
import threading
from collections.abc import Callable, Iterator, Sequence
from pathlib import Path
from typing import Any

from agentbed.inflight import ModelRuntime, hold_world_lock
from agentbed.runner import EpisodeRecord, EpisodeSpec
from agentbed.worker import run_spec

StopCheck = Callable[[], str | None]


def _episode_thread(tasks: Any, results: Any, run_dir: str, lock: Any, parent: int | None,
                    runtime: ModelRuntime) -> None:
    """Run episodes from ``tasks`` until a ``None``, holding the world lock except while waiting on a model."""
    hold_world_lock(lock, runtime)
    while True:
        try:
            spec = tasks.get(timeout=1.0)
        except queue.Empty:
            if parent is not None and os.getppid() != parent:
                return  # the parent is gone (killed): nobody would read the result
            continue
        if spec is None:
            return
        with lock:
            record = run_spec(spec, run_dir)
        results.put(record)


def _worker(tasks: Any, results: Any, run_dir: str, threads: int, parent: int | None, runtime: ModelRuntime) -> None:
    lock = threading.Lock()  # the world lock of this worker's episodes
    pool = [threading.Thread(target=_episode_thread, args=(tasks, results, run_dir, lock, parent, runtime), daemon=True)
            for _ in range(threads)]
    for thread in pool:
        thread.start()
    for thread in pool:
        thread.join()


def run_in_flight(specs: Sequence[EpisodeSpec], run_dir: str | Path, *, jobs: int, runtime: ModelRuntime,
                  stop: StopCheck | None = None) -> Iterator[EpisodeRecord]:
    """Yield a record for each model-bound spec as it finishes; ``stop`` is asked before each
    episode is handed out and, once it names a reason, no more are (those in flight finish)."""
    if not specs:
        return
    run_dir = str(run_dir)
    threads = max(1, min(runtime.max_connections, len(specs)))
    window = runtime.max_connections + 2 * jobs
    runtime.warm_up()
    if jobs == 1:
        tasks: Any = queue.Queue()
        results: Any = queue.Queue()
        workers: list[Any] = [threading.Thread(target=_worker, args=(tasks, results, run_dir, threads, None, runtime),
                                               daemon=True)]
    else:
        context = multiprocessing.get_context("fork")
        tasks, results = context.Queue(), context.Queue()
        workers = [context.Process(target=_worker, args=(tasks, results, run_dir, threads, os.getpid(), runtime),
                                     daemon=True)
                   for _ in range(jobs)]
    for worker in workers:
        worker.start()
    todo = iter(specs)
    outstanding, exhausted = 0, False
    try:
        while True:
            while not exhausted and outstanding < window:
                spec = next(todo, None)
                if spec is None or (stop is not None and stop()):
                    exhausted = True
                    break
                tasks.put(spec)
                outstanding += 1
            if outstanding == 0:
                return
            try:
                record = results.get(timeout=1.0)
            except queue.Empty:
                dead = [w for w in workers if not w.is_alive()]
                if dead:
                    codes = [getattr(w, "exitcode", None) for w in dead]
                    raise RuntimeError(f"a worker running model-bound episodes died (exit codes {codes});"
                                       " finished episodes are in the index, --resume runs the rest") from None
                continue
            outstanding -= 1
            yield record
    finally:
        for _ in range(len(workers) * threads):
            tasks.put(None)
        for worker in workers:
            worker.join(timeout=5)
            if worker.is_alive() and hasattr(worker, "terminate"):
                worker.terminate()
