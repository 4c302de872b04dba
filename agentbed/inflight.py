"""Model-bound episodes, many in flight: what a worker shares among the episodes it runs at once.

An episode whose agent is a chat model (``model:...``) spends nearly all its time waiting for the
provider. A worker therefore runs many such episodes at once, one thread each (the agent's
provider client is synchronous; LangChain's thread-safe clients and per-thread response capture
make threads the smallest change). The threads interleave only while waiting for the model:
each episode holds the worker's *world lock* for everything else (building the environment,
every ``step``, the controller, writing the log), so environments and third-party code that are
not thread-safe, and the virtual clock's freezing of the system clock (process-wide), never see
two episodes at once. Python runs one thread at a time anyway, so the lock costs nothing.

:class:`ModelRuntime` holds the per-model connection limiters (one cap across all worker
processes: see :mod:`agentbed.agents.connections`) and the model-call cache;
:func:`attach` gives a freshly built agent its share, and :class:`MeteredAgent` counts the
tokens, calls and cache hits of the episode for cost accounting.
"""

from __future__ import annotations

import threading
from collections.abc import Iterable, Sequence
from contextlib import AbstractContextManager, nullcontext
from contextvars import ContextVar
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from agentbed.agents.base import Action, Agent
from agentbed.agents.cache import ModelCallCache
from agentbed.agents.connections import DEFAULT_MAX_CONNECTIONS, ConnectionLimiter, default_max_connections
from agentbed.scoped import scoped
from agentbed.tools import Tool

EVENTS = "events.jsonl"
# The model-call settings of the run this context runs: per context, not per process, so two runs
# in threads of one process (a notebook, a test, a service) each keep their own (as the approver,
# agentbed.approval). Forked workers inherit the forking thread's; a thread starts without one, so
# the in-flight threads are given it (hold_world_lock). And the world lock of the episode a thread
# runs (only in-flight threads have one).
_RUNTIME: ContextVar[ModelRuntime | None] = ContextVar("agentbed_model_runtime", default=None)
_THREAD = threading.local()


def current_runtime() -> ModelRuntime | None:
    return _RUNTIME.get()


def runtime_set(runtime: ModelRuntime | None) -> AbstractContextManager[None]:
    """Episodes this context runs use ``runtime`` for the block."""
    return scoped(_RUNTIME, runtime)


def hold_world_lock(lock: Any, runtime: ModelRuntime | None) -> None:
    """Say that this thread runs episodes of ``runtime`` holding ``lock`` (see :func:`prepare_agent`)."""
    _THREAD.world_lock = lock
    _RUNTIME.set(runtime)  # the thread's own context: it ends with the thread


def is_model_bound(agent_id: str) -> bool:
    """Agents that wait on a provider: the chat agent for any ``--model``."""
    return agent_id.startswith("model:")


@dataclass
class ModelRuntime:
    """What every model-bound episode of one run shares, made in the parent before workers fork."""

    max_connections: int = DEFAULT_MAX_CONNECTIONS
    cache: ModelCallCache | None = None
    limiters: dict[str, ConnectionLimiter] = field(default_factory=dict)
    spend: Any = None  # the run's per-call budget (agentbed.cost.SpendCap), when --max-cost/--max-tokens

    @classmethod
    def for_run(cls, agent_ids: Iterable[str], run_dir: str | Path, *, max_connections: int | None = None,
                cache: ModelCallCache | None = None) -> ModelRuntime:
        """One limiter per model: ``max_connections`` each, or the model's default (32 for a
        provider, 2 for a ``local:`` model)."""
        events = Path(run_dir) / EVENTS
        models = sorted({a.removeprefix("model:") for a in agent_ids if is_model_bound(a)})
        limiters = {m: ConnectionLimiter(m, max_connections or default_max_connections(m), events=events)
                    for m in models}
        widest = max((limiter.ceiling for limiter in limiters.values()), default=DEFAULT_MAX_CONNECTIONS)
        return cls(widest, cache, limiters)

    def warm_up(self) -> None:
        """Import each model's provider package once, before workers fork (each would import it
        under its world lock, holding up its first episodes by a second or more)."""
        from agentbed.agents.chat import ChatAgent

        for model in self.limiters:
            try:
                ChatAgent.from_model_string(model).warm_up(self.cache)
            except Exception:  # noqa: BLE001 - the episodes themselves record why a model cannot be built
                pass

    def attach(self, agent: Agent) -> None:
        """Give a chat agent its model's limiter and the cache (other agents are left alone)."""
        from agentbed.agents.chat import ChatAgent

        if isinstance(agent, ChatAgent):
            agent.cache = self.cache
            agent.spend = self.spend
            limiter = self.limiters.get(agent.model or "")
            if limiter is not None:
                agent.connections = limiter


def prepare_agent(spec_agent: str, agent: Agent) -> MeteredAgent | None:
    """For a model-bound episode: the agent with the run's limiter and cache, metered, and (in an
    in-flight thread) letting go of the world lock while it waits for its model. None otherwise."""
    if not is_model_bound(spec_agent):
        return None
    runtime = _RUNTIME.get()
    if runtime is not None:
        runtime.attach(agent)
    lock = getattr(_THREAD, "world_lock", None)
    return MeteredAgent(agent, Released(lock) if lock is not None else None)


class Released:
    """The world lock let go for the duration of a block (by the thread that holds it)."""

    def __init__(self, lock: Any) -> None:
        self.lock = lock

    def __enter__(self) -> None:
        self.lock.release()

    def __exit__(self, *exc: object) -> None:
        self.lock.acquire()


class MeteredAgent(Agent):
    """Delegates to ``inner``, counting its usage; with ``waiting`` (a context manager) around each
    ``act``, other episodes' threads may run while this one waits for its model."""

    def __init__(self, inner: Agent, waiting: AbstractContextManager[Any] | None = None) -> None:
        self.inner, self.name, self.model = inner, inner.name, inner.model
        self.waiting = waiting or nullcontext()
        self.input_tokens = self.output_tokens = self.calls = self.cached_calls = 0
        self.cached_input_tokens = self.cached_output_tokens = 0

    def __getattr__(self, name: str) -> Any:  # the inner agent's own API (fork, reflected, load_history...)
        if name == "inner":
            raise AttributeError(name)
        return getattr(self.inner, name)

    def reset(self, *, seed: int, task: Any = None) -> None:
        self.inner.reset(seed=seed, task=task)

    def act(self, observation: str, tools: Sequence[Tool]) -> Action:
        with self.waiting:
            action = self.inner.act(observation, tools)
        self.calls += 1
        if action.usage is not None:
            self.input_tokens += action.usage.input_tokens
            self.output_tokens += action.usage.output_tokens
        if action.cached:
            self.cached_calls += 1
            if action.usage is not None:
                self.cached_input_tokens += action.usage.input_tokens
                self.cached_output_tokens += action.usage.output_tokens
        return action

    def fork(self) -> Agent:
        return self.inner.fork()

    def describe(self) -> dict[str, Any]:
        return self.inner.describe()

    def usage(self) -> dict[str, Any]:
        """The episode's model usage, for its index record and cost (tokens of cache hits included)."""
        return {"model": self.model, "calls": self.calls, "cached_calls": self.cached_calls,
                "input_tokens": self.input_tokens, "output_tokens": self.output_tokens,
                "cached_input_tokens": self.cached_input_tokens, "cached_output_tokens": self.cached_output_tokens}
