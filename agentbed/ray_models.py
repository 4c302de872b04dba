"""Model calls on a Ray cluster: one connection cap and one budget across every node, and the driver's model-call cache.

Ray workers do not fork from the run's process, so the shared-memory limiter and the cache
directory of :mod:`agentbed.inflight` do not reach them. Instead the driver starts one
:class:`ModelService` actor on its own node for the run: it holds the cap of concurrent calls per
model (a slot is asked for before each call and given back after it, whichever node makes the
call), keeps the ledger of ``--max-cost``/``--max-tokens`` asked before each call (the driver
takes it over as each task comes home, so its stop check sees what every node paid), and it
reads and writes the driver's cache directory, so a rerun on the cluster is answered
from the same entries as one on this machine. Each Ray task gets a :class:`ModelRuntime` whose
limiters and cache are thin clients of that actor (:class:`RemoteLimiter`, :class:`RemoteCache`).

The actor is asynchronous (Ray runs its coroutines concurrently), so a caller waiting for a slot
does not block the others' releases. The cap is fixed at ``--max-connections``: the adaptive
decrease on 429s of :class:`~agentbed.agents.connections.ConnectionLimiter` is per machine and
not carried over (a refused call is still retried with backoff by the agent).
"""

from __future__ import annotations

import asyncio
from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from pathlib import Path
from typing import Any

from agentbed.agents.cache import CachedReply, ModelCallCache
from agentbed.cost import PriceTable, SpendCap
from agentbed.errors import BudgetExhausted
from agentbed.inflight import ModelRuntime


class ModelService:
    """The run's cap and cache, as a Ray actor (created with :func:`start_service`)."""

    def __init__(self, caps: dict[str, int], cache_dir: str | None, expiry: float,
                 spend: tuple[PriceTable, float | None, int | None] | None = None) -> None:
        self.caps = dict(caps)
        self.in_flight = dict.fromkeys(caps, 0)
        self.peak = dict.fromkeys(caps, 0)
        self.cache = ModelCallCache(cache_dir, expiry=expiry) if cache_dir is not None else None
        self._free: asyncio.Condition | None = None
        self.spend = SpendCap(spend[0], max_cost=spend[1], max_tokens=spend[2]) if spend is not None else None

    def _condition(self) -> asyncio.Condition:
        if self._free is None:  # made in the actor's event loop
            self._free = asyncio.Condition()
        return self._free

    async def acquire(self, model: str) -> None:
        free = self._condition()
        async with free:
            await free.wait_for(lambda: self.in_flight.get(model, 0) < self.caps.get(model, 1))
            self.in_flight[model] = self.in_flight.get(model, 0) + 1
            self.peak[model] = max(self.peak.get(model, 0), self.in_flight[model])

    async def release(self, model: str) -> None:
        free = self._condition()
        async with free:
            self.in_flight[model] = max(0, self.in_flight.get(model, 0) - 1)
            free.notify_all()

    async def before_call(self) -> str | None:
        """Why the next call may not be made (the budget's refusal), or None."""
        try:
            if self.spend is not None:
                self.spend.before_call()
        except BudgetExhausted as exc:
            return str(exc)
        return None

    async def paid(self, model: str | None, input_tokens: int, output_tokens: int) -> None:
        if self.spend is not None:
            self.spend.paid(model, input_tokens, output_tokens)

    async def ledger(self) -> list[float]:
        return self.spend.ledger() if self.spend is not None else []

    async def get(self, key: str) -> CachedReply | None:
        return self.cache.get(key) if self.cache is not None else None

    async def put(self, key: str, reply: CachedReply, about: dict[str, Any]) -> CachedReply:
        return self.cache.put(key, reply, **about) if self.cache is not None else reply

    async def get_profile(self, model: str, recipe: str, tools: list[str]) -> tuple[str, dict[str, Any]] | None:
        return self.cache.get_profile(model, recipe, tools) if self.cache is not None else None

    async def put_profile(self, model: str, recipe: str, tools: list[str], profile: tuple[str, dict[str, Any]]) -> None:
        if self.cache is not None:
            self.cache.put_profile(model, recipe, tools, profile)

    async def has_profiles(self, model: str) -> bool:
        return self.cache.has_profiles(model) if self.cache is not None else False


def start_service(ray: Any, caps: dict[str, int], cache_dir: str | Path | None, expiry: float,
                  spend: SpendCap | None = None) -> Any:
    """The run's :class:`ModelService` actor, on the driver's node (where the cache directory is);
    with ``spend``, it keeps that budget's ledger for every node."""
    from ray.util.scheduling_strategies import NodeAffinitySchedulingStrategy

    here = ray.get_runtime_context().get_node_id()
    actor = ray.remote(ModelService).options(
        num_cpus=0, max_concurrency=10_000,
        scheduling_strategy=NodeAffinitySchedulingStrategy(node_id=here, soft=False))
    limits = (spend.prices, spend.max_cost, spend.max_tokens) if spend is not None else None
    return actor.remote(caps, str(cache_dir) if cache_dir is not None else None, expiry, limits)


class RemoteLimiter:
    """A model's slot in the run's :class:`ModelService` (the agents' ``connections``)."""

    def __init__(self, service: Any, model: str, ceiling: int) -> None:
        self.service, self.model, self.ceiling = service, model, ceiling

    @contextmanager
    def slot(self) -> Iterator[None]:
        import ray

        ray.get(self.service.acquire.remote(self.model))
        try:
            yield
        finally:  # not waited for: a round trip to the actor per call is what a cluster run pays for the cap
            self.service.release.remote(self.model)

    def succeeded(self) -> None:
        pass

    def throttled(self, reason: str, retry_after: float | None = None) -> None:
        pass


class RemoteCache:
    """The driver's model-call cache, through the run's :class:`ModelService` (the agents' ``cache``)."""

    def __init__(self, service: Any, directory: str) -> None:
        self.service, self.directory = service, Path(directory)

    def get(self, key: str) -> CachedReply | None:
        import ray

        return ray.get(self.service.get.remote(key))

    def put(self, key: str, reply: CachedReply, **about: Any) -> CachedReply:
        import ray

        held = ray.get(self.service.put.remote(key, reply, about))
        return reply if held == reply else held

    # a lazily built model's request profiles (agentbed.agents.request_keys), kept in the driver's cache too
    def get_profile(self, model: str, recipe: str, tools: Sequence[str]) -> tuple[str, dict[str, Any]] | None:
        import ray

        return ray.get(self.service.get_profile.remote(model, recipe, list(tools)))

    def put_profile(self, model: str, recipe: str, tools: Sequence[str], profile: tuple[str, dict[str, Any]]) -> None:
        import ray

        ray.get(self.service.put_profile.remote(model, recipe, list(tools), profile))

    def has_profiles(self, model: str) -> bool:
        import ray

        return bool(ray.get(self.service.has_profiles.remote(model)))


class RemoteSpend:
    """The run's budget kept per call in its :class:`ModelService` (the agents' ``spend``): one
    ledger for every node, asked before each call as :class:`agentbed.cost.SpendCap` is."""

    def __init__(self, service: Any) -> None:
        self.service = service

    def before_call(self) -> None:
        import ray

        refusal = ray.get(self.service.before_call.remote())
        if refusal is not None:
            raise BudgetExhausted(refusal)

    def paid(self, model: str | None, input_tokens: int, output_tokens: int) -> None:
        import ray

        ray.get(self.service.paid.remote(model, input_tokens, output_tokens))  # waited: the next call must see it

    def ledger(self) -> list[float]:
        import ray

        return list(ray.get(self.service.ledger.remote()))


def remote_runtime(service: Any, caps: dict[str, int], cache_dir: str | None, spend: bool = False) -> ModelRuntime:
    """What a Ray task installs as its runtime: the cap, the cache and (``spend``) the budget, all
    through ``service``."""
    limiters: dict[str, Any] = {m: RemoteLimiter(service, m, cap) for m, cap in caps.items()}
    cache: Any = RemoteCache(service, cache_dir) if cache_dir is not None else None
    return ModelRuntime(max(caps.values(), default=1), cache, limiters, RemoteSpend(service) if spend else None)
