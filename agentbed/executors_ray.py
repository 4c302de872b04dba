"""The Ray executor: episodes as Ray tasks, on a local Ray or a cluster (``--address``)."""

from __future__ import annotations

from collections.abc import Iterator, Sequence
from typing import Any

from agentbed.runner import EpisodeRecord, EpisodeSpec
from agentbed.worker import chunks, run_chunk


def execute_ray(specs: Sequence[EpisodeSpec], run_dir: str, jobs: int, address: str | None) -> Iterator[EpisodeRecord]:
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
        remote = ray.remote(run_chunk)
        pending = [remote.remote(chunk, run_dir) for chunk in chunks(specs, jobs)]
        while pending:
            done, pending = ray.wait(pending, num_returns=1)
            for ref in done:
                yield from ray.get(ref)
    finally:
        if started_here:
            ray.shutdown()
