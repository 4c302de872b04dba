"""Executors: run many episodes serially, in a process pool, or on Ray.

Workers write each episode's log themselves and return its record; the parent appends the
record to the run index as results arrive. Logs carry no wall-clock time, pid or host, so the
same specs give byte-identical logs whatever the executor.
"""

from __future__ import annotations

import multiprocessing
import os
import traceback
from collections.abc import Callable, Iterable, Iterator, Sequence
from concurrent.futures import FIRST_COMPLETED, ProcessPoolExecutor, wait
from pathlib import Path
from typing import Any

from agentbed.agents.faults import FaultyAgent
from agentbed.log import TrajectoryWriter
from agentbed.runner import EpisodeRecord, EpisodeSpec, run_episode, write_header
from agentbed.suite import get_suite

EXECUTORS = ("serial", "process", "ray")


def run_spec(spec: EpisodeSpec, run_dir: str | Path) -> EpisodeRecord:
    """Run one episode of a suite into ``run_dir``; every failure becomes an error record."""
    run_dir = Path(run_dir)
    log = run_dir / "episodes" / f"{spec.episode_id}.jsonl"
    try:
        suite = get_suite(spec.suite)
        if suite.run_unit is not None:
            record = suite.run_unit(spec, run_dir)
        else:
            env = suite.make_env(spec.task, spec.options)
            agent = suite.make_agent(spec, env)
            if spec.faults:
                agent = FaultyAgent(agent, spec.faults, spec.seed)
            try:
                record = run_episode(env, agent, spec, budget=suite.budget, writer=TrajectoryWriter(log))
            finally:
                env.close()
    except Exception:  # noqa: BLE001 - a setup failure is still a recorded episode
        record = _setup_failure(spec, log, traceback.format_exc())
    if not record.log:
        record.log = str(log.relative_to(run_dir)) if log.is_relative_to(run_dir) else str(log)
    return record


def _setup_failure(spec: EpisodeSpec, log: Path, error: str) -> EpisodeRecord:
    writer = TrajectoryWriter(log)
    write_header(writer, spec)
    writer.write("footer", status="error", stop_reason="setup", success=False, total_reward=0.0, steps=0,
                 virtual_seconds=0.0, tokens=0, metrics={}, labels=["ERROR"], error=error)
    writer.close()
    return EpisodeRecord(spec.episode_id, spec.suite, spec.task, spec.agent, spec.seed, "error", False, 0.0, 0,
                         0.0, 0, labels=["ERROR"], options=spec.options, digest=writer.last_hash,
                         error=error[-4000:])


def _run_chunk(specs: Sequence[EpisodeSpec], run_dir: str) -> list[EpisodeRecord]:
    return [run_spec(s, run_dir) for s in specs]


def _chunks(specs: Sequence[EpisodeSpec], jobs: int) -> list[list[EpisodeSpec]]:
    # Several episodes per task amortise inter-process overhead; enough chunks keep workers busy.
    size = max(1, min(32, len(specs) // (jobs * 8) or 1))
    return [list(specs[i:i + size]) for i in range(0, len(specs), size)]


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
        yield from _ray(specs, run_dir, jobs, ray_address)
    else:
        raise ValueError(f"unknown executor {executor!r}; choose one of {', '.join(EXECUTORS)}")


def _process_pool(specs: Sequence[EpisodeSpec], run_dir: str, jobs: int) -> Iterator[EpisodeRecord]:
    context = multiprocessing.get_context("fork" if "fork" in multiprocessing.get_all_start_methods() else "spawn")
    with ProcessPoolExecutor(max_workers=jobs, mp_context=context) as pool:
        pending = {pool.submit(_run_chunk, chunk, run_dir) for chunk in _chunks(specs, jobs)}
        while pending:
            done, pending = wait(pending, return_when=FIRST_COMPLETED)
            for future in done:
                yield from future.result()


def _ray(specs: Sequence[EpisodeSpec], run_dir: str, jobs: int, address: str | None) -> Iterator[EpisodeRecord]:
    try:
        import ray
    except ImportError as exc:
        raise RuntimeError("the ray executor needs Ray: pip install 'agentbed[ray]'") from exc
    started_here = not ray.is_initialized()
    if started_here:
        kwargs: dict[str, Any] = {"include_dashboard": False, "log_to_driver": False, "configure_logging": False}
        if address:
            kwargs["address"] = address
        else:
            kwargs["num_cpus"] = jobs
        ray.init(**kwargs)
    try:
        remote = ray.remote(_run_chunk)
        pending = [remote.remote(chunk, run_dir) for chunk in _chunks(specs, jobs)]
        while pending:
            done, pending = ray.wait(pending, num_returns=1)
            for ref in done:
                yield from ray.get(ref)
    finally:
        if started_here:
            ray.shutdown()


def run_all(specs: Iterable[EpisodeSpec], run_dir: str | Path, on_record: Callable[[EpisodeRecord], None], **kw: Any) -> None:
    for record in execute(list(specs), run_dir, **kw):
        on_record(record)
