"""The Ray executor: episodes as Ray tasks, on a local Ray or a cluster (``--address``).

No node shares the driver's disk. A task runs its episodes in a scratch directory of its own
node and returns each record with the bytes of the files the episode wrote
(:func:`agentbed.worker.run_chunk_shipped`); the driver stores those files durably in the run
directory (:meth:`agentbed.store.RunStore.write_files`) before it yields the record, so the
caller appends the index line only once the log is safe.

Each node that runs episodes is one line of ``events.jsonl`` (its Ray node id and its exact
Python release), the first time one of its tasks comes home: logs record Python as
major.minor only, so they are the same whichever node wrote them.

Memory stays bounded on long runs: at most two tasks per slot of the cluster are in flight, and
the driver fetches one finished task at a time and drops it once stored.

A task lost with its node is retried by Ray on another node that has the resources asked for;
when the retries run out, or when no live node has those resources for ``STRANDED_SECONDS``,
its episodes are recorded as errors saying why. None is lost and none is recorded twice: the
driver takes exactly one result per task.
"""

from __future__ import annotations

import contextlib
import math
import os
import platform
import signal
import threading
import time
from collections.abc import Callable, Iterator, Mapping, Sequence
from pathlib import Path
from typing import Any

from agentbed.agents.connections import append_event
from agentbed.errors import UsageError
from agentbed.inflight import EVENTS, ModelRuntime, runtime_set
from agentbed.runner import EpisodeRecord, EpisodeSpec
from agentbed.store import RunStore
from agentbed.suite_files import install_sources, suite_sources
from agentbed.worker import Shipped, chunks, failure_record, run_chunk_shipped

TASKS_PER_SLOT = 2
MAX_RETRIES = 3  # Ray's re-runs of a task whose worker or node died
WAIT_SECONDS = 5.0
STRANDED_SECONDS = 60.0  # how long tasks may wait for a node with their resources before they fail


MAX_RESOURCE = 1e14  # Ray refuses a larger quantity (when the run starts its cluster: an internal error)


def parse_resources(items: Sequence[str] | None) -> dict[str, float]:
    """``NAME=AMOUNT`` (or ``NAME``, amount 1) per item: custom Ray resources each task needs. Ray
    takes a fraction of one unit or a whole number of units, finite; anything else reached
    ``ray.init`` and ended the run as an internal error (session 18's probe: nan, inf, 1.5, 1e300)."""
    resources: dict[str, float] = {}
    for item in items or ():
        name, eq, amount = item.partition("=")
        try:
            value = float(amount) if eq else 1.0
        except ValueError:
            value = -1.0
        if not name or not 0 < value <= MAX_RESOURCE or (value > 1 and not value.is_integer()):
            raise UsageError(f"--ray-resource {item!r}: expected NAME=AMOUNT with a positive amount, a fraction "
                             f"below 1 or a whole number up to {MAX_RESOURCE:.0e}")
        resources[name] = value
    return resources


def execute_ray(specs: Sequence[EpisodeSpec], run_dir: str | Path, jobs: int, address: str | None,
                resources: Mapping[str, float] | None = None, runtime: ModelRuntime | None = None,
                ) -> Iterator[EpisodeRecord]:
    """With a ``runtime`` (model-bound episodes), one :mod:`agentbed.ray_models` actor on the
    driver's node holds the run's connection cap and budget across every node and serves the
    driver's model-call cache to them."""
    try:
        import ray
    except ImportError as exc:
        raise RuntimeError("the ray executor needs Ray: pip install 'agentbed[ray]'") from exc
    resources = dict(resources or {})
    started_here = not ray.is_initialized()
    if started_here:
        kwargs: dict[str, Any] = {"include_dashboard": False, "log_to_driver": False, "configure_logging": False}
        if address:
            kwargs["address"] = address
            if runtime is not None and runtime.limiters:  # the provider's key and endpoint, for every node
                kwargs["runtime_env"] = {"env_vars": provider_environment()}
        else:
            kwargs["num_cpus"] = jobs
            kwargs["resources"] = {k: math.ceil(v) for k, v in resources.items()}  # a node holds whole units
        with _signals_kept():
            ray.init(**kwargs)
    try:
        slots = _slots(ray.cluster_resources(), resources) if address else jobs
        if slots < 1:
            raise UsageError(f"--ray-resource: no node of the Ray cluster at {address} has {_describe(resources)}"
                             f" (it has {_describe(ray.cluster_resources())})")
        store = RunStore(run_dir)
        nodes: set[str] = set()
        models = _model_runtime(ray, runtime)
        sources = suite_sources(specs)  # one-file suites: a fresh worker process loads them from these bytes
        extra = (models, ray.put(sources)) if sources else (models,)
        for node, shipped in _stream(ray, chunks(specs, slots), slots, resources, spread=bool(address),
                                     extra=extra):
            # a task's files together: each is fsynced, their directory once (fsyncs are the cost)
            store.write_files({name: data for _, files in shipped for name, data in files.items()})
            if models is not None and models.spend is not None and runtime is not None:  # the stop check's ledger
                runtime.spend.load(models.spend.ledger())
            if node is not None and node["node"] not in nodes:
                nodes.add(node["node"])
                append_event(Path(run_dir) / EVENTS, {"event": "ray_node", **node})
            yield from (record for record, _ in shipped)
    finally:
        if started_here:
            ray.shutdown()


@contextlib.contextmanager
def _signals_kept() -> Iterator[None]:
    """Ray's core installs its own SIGTERM handler in the driver (a C++ stack dump, then SIGABRT);
    the handler this process had (the CLI's: SIGTERM unwinds like Ctrl-C, so what finished stays
    recorded and the run exits 143) is put back after it."""
    main = threading.current_thread() is threading.main_thread()
    previous = signal.getsignal(signal.SIGTERM) if main else None
    try:
        yield
    finally:
        if main and previous is not None:
            signal.signal(signal.SIGTERM, previous)


NodeResults = tuple[dict[str, str] | None, list[Shipped]]  # the node that ran a task (None: none did), its results


PROVIDER_VARIABLES = ("_API_KEY", "_BASE_URL", "_API_BASE", "_ENDPOINT", "_API_VERSION", "_MODEL_TIMEOUT")


def provider_environment() -> dict[str, str]:
    """The variables a LangChain provider reads its key and endpoint from (``OPENAI_API_KEY``,
    ``OPENAI_BASE_URL``...), as this process has them: a cluster's nodes get them with the run's
    tasks, as a machine running the episodes itself would have them."""
    return {k: v for k, v in os.environ.items() if k.endswith(PROVIDER_VARIABLES)}


def _model_runtime(ray: Any, runtime: ModelRuntime | None) -> ModelRuntime | None:
    """The runtime each task installs: the run's caps and cache through one actor (None without models)."""
    if runtime is None or not runtime.limiters:
        return None
    from agentbed.ray_models import remote_runtime, start_service

    caps = {model: limiter.ceiling for model, limiter in runtime.limiters.items()}
    cache = runtime.cache
    directory = str(cache.directory) if cache is not None else None
    service = start_service(ray, caps, directory, cache.expiry if cache is not None else 0.0, runtime.spend)
    return remote_runtime(service, caps, directory, spend=runtime.spend is not None)


def run_chunk_on_node(specs: list[EpisodeSpec], runtime: ModelRuntime | None = None,
                      sources: Mapping[str, bytes] | None = None) -> NodeResults:
    """A Ray task: the chunk's results, with the node that ran them (``runtime``: the run's model
    cap and cache, through the driver's actor; ``sources``: the one-file suites' bytes by path)."""
    import ray

    if sources:
        install_sources(sources)
    node = {"node": ray.get_runtime_context().get_node_id(), "python": platform.python_version()}
    with runtime_set(runtime):
        return node, run_chunk_shipped(specs)


def _stream(ray: Any, work: list[list[EpisodeSpec]], slots: int, resources: dict[str, float], spread: bool,
            task: Callable[..., NodeResults] = run_chunk_on_node, extra: tuple[Any, ...] = ()) -> Iterator[NodeResults]:
    """Each task's results as it finishes, keeping at most ``TASKS_PER_SLOT * slots`` in flight.
    On a cluster, tasks are spread over the nodes (Ray's default packs them onto the driver's)."""
    remote = ray.remote(task).options(num_cpus=1, resources=resources, max_retries=MAX_RETRIES,
                                                   scheduling_strategy="SPREAD" if spread else "DEFAULT")
    todo = iter(work)
    pending: dict[Any, list[EpisodeSpec]] = {}
    stranded_since: float | None = None
    while True:
        while len(pending) < TASKS_PER_SLOT * slots and (chunk := next(todo, None)) is not None:
            pending[remote.remote(chunk, *extra)] = chunk
        if not pending:
            return
        done, _ = ray.wait(list(pending), num_returns=1, timeout=WAIT_SECONDS)
        if done:
            stranded_since = None
            chunk = pending.pop(done[0])
            try:
                results: NodeResults = ray.get(done[0])
            except ray.exceptions.RayError as exc:  # retries exhausted, node lost, or code missing there
                results = None, [failure_record(s, _lost(exc)) for s in chunk]
            del done
            yield results
        elif _slots(ray.cluster_resources(), resources) >= 1:
            stranded_since = None
        elif stranded_since is None:
            stranded_since = time.monotonic()
        elif time.monotonic() - stranded_since > STRANDED_SECONDS:  # no live node can ever take them
            why = (f"no live node of the Ray cluster has {_describe(resources)} (for {STRANDED_SECONDS:.0f}s);"
                   " the episode was not run")
            for ref, chunk in list(pending.items()):
                ray.cancel(ref, force=True)
                yield None, [failure_record(s, why) for s in chunk]
            pending.clear()
            for chunk in todo:
                yield None, [failure_record(s, why) for s in chunk]


def _slots(cluster: Mapping[str, float], resources: Mapping[str, float]) -> int:
    """How many one-CPU tasks needing ``resources`` the cluster's live nodes can run at once."""
    counts = [cluster.get("CPU", 0.0)] + [cluster.get(name, 0.0) / amount for name, amount in resources.items()]
    return int(min(counts))


def _describe(resources: Mapping[str, float]) -> str:
    return ", ".join(f"{k}={v:g}" for k, v in sorted(resources.items()) if not k.startswith("node:")) or "nothing"


def _lost(exc: Exception) -> str:
    lines = str(exc).strip().splitlines()
    return (f"the Ray task running this episode failed on its node, or was lost with the node after up to "
            f"{MAX_RETRIES} retries ({type(exc).__name__}: {lines[0] if lines else ''})")
