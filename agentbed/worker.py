"""One episode (or a chunk of them) as a worker runs it, whatever the executor.

Shared by the process pool (agentbed.executors) and the Ray executor (agentbed.executors_ray),
so neither imports the other. A pool worker on the driver's machine writes into the run
directory itself (:func:`run_chunk`); a Ray worker may be on another machine, so it runs each
episode in a scratch directory of its own node and returns the files the episode wrote with its
record (:func:`run_chunk_shipped`), for the driver to store.
"""

from __future__ import annotations

import os
import shutil
import tempfile
from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from dataclasses import replace
from pathlib import Path
from typing import Any

from agentbed.agents.faults import FaultyAgent
from agentbed.approval import episode_controller
from agentbed.control import chain
from agentbed.env import ToolEnv
from agentbed.errors import UsageError, episode_failure, failure_text
from agentbed.factories import build_controllers, run_wide_controllers
from agentbed.inflight import prepare_agent
from agentbed.log import TrajectoryWriter, forget_dirs
from agentbed.runner import EpisodeRecord, EpisodeSpec, run_episode, write_header
from agentbed.suite import Suite, SuiteError
from agentbed.suite_files import suite_of_spec


def run_spec(spec: EpisodeSpec, run_dir: str | Path) -> EpisodeRecord:
    """Run one episode of a suite into ``run_dir``; every failure becomes an error record."""
    run_dir = Path(run_dir)
    log = spec.log_in(run_dir)
    if not spec.controllers and run_wide_controllers():  # `agentbed demo --controller`
        spec = replace(spec, controllers=run_wide_controllers())
    try:
        suite = suite_of_spec(spec)  # a one-file suite: from the file the driver ran
        if suite.run_unit is not None:
            record = suite.run_unit(spec, run_dir)
        else:
            env = suite.make_env(spec.task, spec.options)
            try:
                agent = suite.make_agent(spec, env)
                meter = prepare_agent(spec.agent, agent)  # model-bound: limiter, cache, usage
                agent = meter or agent
                if spec.faults:
                    agent = FaultyAgent(agent, spec.faults, spec.seed)
                controller = episode_controllers(suite, spec, env)
                record = run_episode(env, agent, spec, budget=suite.budget, writer=TrajectoryWriter(log),
                                     controller=controller)
                if meter is not None:
                    record.usage = meter.usage()
            finally:
                env.close()
    except SuiteError as exc:  # e.g. a world whose package this node lacks
        record = _setup_failure(spec, log, f"{type(exc).__name__}: {exc}")
    except BaseException as exc:  # noqa: BLE001 - a setup failure is still a recorded episode
        if not episode_failure(exc):
            raise
        record = _setup_failure(spec, log, failure_text(exc))
    if not record.log:
        record.log = str(log.relative_to(run_dir)) if log.is_relative_to(run_dir) else str(log)
    return record


def episode_controllers(suite: Suite, spec: EpisodeSpec, env: ToolEnv,
                        recorded: list[dict[str, Any]] | None = None) -> Any:
    """The controllers of one episode, chained in this order: the suite's own (a benchmark's
    defenses), then ``--controller``'s in the order given, then ``--approver human``'s (who sees
    what the others let through); None when there is none."""
    own = suite.episode_controller(spec, env, recorded)
    given = build_controllers(spec.controllers, suite.setup(spec, env, recorded)) if spec.controllers else []
    return chain(own, *given, episode_controller(spec, suite, env))


def _setup_failure(spec: EpisodeSpec, log: Path, error: str) -> EpisodeRecord:
    writer = TrajectoryWriter(log)
    write_header(writer, spec)
    writer.write("footer", status="error", stop_reason="setup", success=False, total_reward=0.0, steps=0,
                 virtual_seconds=0.0, tokens=0, metrics={}, labels=["ERROR"], error=error)
    writer.close()
    return EpisodeRecord(spec.episode_id, spec.suite, spec.task, spec.agent, spec.seed, "error", False, 0.0, 0,
                         0.0, 0, labels=["ERROR"], options=spec.options, digest=writer.last_hash,
                         error=error[-4000:])


def run_chunk(specs: Sequence[EpisodeSpec], run_dir: str) -> list[EpisodeRecord]:
    return [run_spec(s, run_dir) for s in specs]


# An episode's output: its record and the files it wrote, by path relative to the run directory.
Shipped = tuple[EpisodeRecord, dict[str, bytes]]


def run_chunk_shipped(specs: Sequence[EpisodeSpec]) -> list[Shipped]:
    """Run episodes in this node's scratch space; return each record with its files' bytes.

    A ``local:`` model is served on this node, from this node's weights, for the chunk: the
    driver's server is on the driver's loopback. A node without the weights or the runtime
    records that one message (with the command that installs them) for each episode."""
    from agentbed.agents.local.server import local_models, serving

    models = local_models(s.agent for s in specs)
    with scratch_dir() as scratch:
        if not models:
            return [run_spec_shipped(s, scratch) for s in specs]
        try:
            with serving(models, scratch / "model"):
                return [run_spec_shipped(s, scratch / "run") for s in specs]
        except UsageError as exc:  # weights or runtime missing here, or the server would not start
            return [failure_record(s, failure_text(exc)) for s in specs]


def run_spec_shipped(spec: EpisodeSpec, scratch: Path | None = None) -> Shipped:
    """One episode run in ``scratch`` (emptied of its files afterwards), or in a scratch
    directory of its own when none is given."""
    if scratch is None:
        with scratch_dir() as own:
            return run_spec_shipped(spec, own)
    try:
        record = run_spec(spec, scratch)
        files = {str(p.relative_to(scratch)): p.read_bytes() for p in sorted(scratch.rglob("*")) if p.is_file()}
    finally:
        _empty(scratch)
    if os.path.isabs(record.log):  # a run_unit wrote its log outside the run directory: it cannot travel
        return failure_record(spec, f"suite {spec.suite!r} wrote its log outside the run directory "
                                    f"({record.log}); it cannot be shipped to the driver")
    return record, files


@contextmanager
def scratch_dir() -> Iterator[Path]:
    """A scratch run directory for one chunk of episodes, removed with what is in it when the
    chunk is done. (One per process, removed at exit, was left behind by every Ray worker: Ray
    ends its workers without running their ``atexit`` handlers.) The log writer forgets the
    directories it made there, so a long-lived worker's memory of them stays bounded."""
    path = Path(tempfile.mkdtemp(prefix="agentbed-worker-"))
    try:
        yield path
    finally:
        shutil.rmtree(path, ignore_errors=True)
        forget_dirs(path)


def _empty(scratch: Path) -> None:
    """Delete the files an episode wrote, keeping the directories (the next episode's writer
    finds them made)."""
    for path in scratch.rglob("*"):
        if not path.is_dir():
            path.unlink(missing_ok=True)


def failure_record(spec: EpisodeSpec, error: str) -> Shipped:
    """An error episode (log and record) made without running it, e.g. when its node was lost."""
    with scratch_dir() as scratch:
        log = spec.log_in(scratch)
        record = _setup_failure(spec, log, error)
        record.log = str(log.relative_to(scratch))
        return record, {record.log: log.read_bytes()}


def chunks(specs: Sequence[EpisodeSpec], jobs: int) -> list[list[EpisodeSpec]]:
    # Several episodes per task amortise inter-process overhead; enough chunks keep workers busy.
    size = max(1, min(32, len(specs) // (jobs * 8) or 1))
    return [list(specs[i:i + size]) for i in range(0, len(specs), size)]
