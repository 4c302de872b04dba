"""One episode (or a chunk of them) as a worker runs it, whatever the executor.

Shared by the process pool (agentbed.executors) and the Ray executor (agentbed.executors_ray),
so neither imports the other.
"""

from __future__ import annotations

import traceback
from collections.abc import Sequence
from pathlib import Path

from agentbed.agents.faults import FaultyAgent
from agentbed.inflight import prepare_agent
from agentbed.log import TrajectoryWriter
from agentbed.runner import EpisodeRecord, EpisodeSpec, run_episode, write_header
from agentbed.suite import get_suite


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
            try:
                agent = suite.make_agent(spec, env)
                meter = prepare_agent(spec.agent, agent)  # model-bound: limiter, cache, usage
                agent = meter or agent
                if spec.faults:
                    agent = FaultyAgent(agent, spec.faults, spec.seed)
                record = run_episode(env, agent, spec, budget=suite.budget, writer=TrajectoryWriter(log))
                if meter is not None:
                    record.usage = meter.usage()
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


def run_chunk(specs: Sequence[EpisodeSpec], run_dir: str) -> list[EpisodeRecord]:
    return [run_spec(s, run_dir) for s in specs]


def chunks(specs: Sequence[EpisodeSpec], jobs: int) -> list[list[EpisodeSpec]]:
    # Several episodes per task amortise inter-process overhead; enough chunks keep workers busy.
    size = max(1, min(32, len(specs) // (jobs * 8) or 1))
    return [list(specs[i:i + size]) for i in range(0, len(specs), size)]
