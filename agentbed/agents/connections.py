"""How many calls to one model may be in flight at once: a cap shared by every thread of every
worker process, which adapts to the provider's signals.

The policy is additive increase, multiplicative decrease (AIMD, as TCP congestion control:
Jacobson, "Congestion Avoidance and Control", SIGCOMM 1988). The limit starts at the cap;
a rate limit (HTTP 429), a ``Retry-After`` or a timeout halves it (at most once a second, so one
burst of refusals counts once) and opens a cool-down during which it does not grow; after the
cool-down, each ``limit`` successful calls in a row raise it by one, back up to the cap. A
``Retry-After`` also holds every new call back until the time the server named, at most
``MAX_HOLD_SECONDS`` (what one call's own retry waits at most, :class:`agentbed.agents.retry.Backoff`:
a server naming an hour, a year or a date long past the run would otherwise stall it). Each change of
the limit is one line of ``events.jsonl`` in the run directory.

The state lives in shared memory created before the worker processes fork, so the cap is one
cap across workers. Times are ``time.monotonic()`` (which the virtual clock's freezing leaves
alone), shared by processes on one machine; so an event says when it happened as seconds since
the limiter was made, not as a wall-clock date.
"""

from __future__ import annotations

import json
import math
import multiprocessing
import os
import time
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

DEFAULT_MAX_CONNECTIONS = 32  # per model; API providers allow tens of concurrent requests per key
# A model served on this machine (``local:``) by a llama.cpp server decodes a few requests at once
# (its slots, 2 by default); more in flight only queue there and time out.
LOCAL_MAX_CONNECTIONS = 2


def default_max_connections(model: str) -> int:
    return LOCAL_MAX_CONNECTIONS if model.startswith("local:") else DEFAULT_MAX_CONNECTIONS
COOLDOWN_SECONDS = 10.0
MAX_HOLD_SECONDS = 30.0  # the longest a Retry-After holds new calls back (Backoff.max_delay's default)
_DECREASE_EVERY = 1.0

# slots of the shared state array
_LIMIT, _IN_FLIGHT, _SUCCESSES, _COOLDOWN_UNTIL, _HOLD_UNTIL, _LAST_DECREASE = range(6)


class Unlimited:
    """No cap: what an agent uses outside an executor that set one."""

    @contextmanager
    def slot(self) -> Iterator[None]:
        yield

    def succeeded(self) -> None:
        pass

    def throttled(self, reason: str, retry_after: float | None = None) -> None:
        pass


class ConnectionLimiter:
    """An adaptive cap on concurrent calls to one model, shared across threads and forked processes."""

    def __init__(self, model: str, max_connections: int = DEFAULT_MAX_CONNECTIONS, *,
                 events: str | os.PathLike[str] | None = None, cooldown: float = COOLDOWN_SECONDS,
                 context: Any = None) -> None:
        if max_connections < 1:
            raise ValueError(f"max_connections must be at least 1, not {max_connections}")
        ctx = context or multiprocessing.get_context("fork")
        self.model, self.ceiling, self.cooldown = model, max_connections, cooldown
        self.events = Path(events) if events is not None else None
        self._cond = ctx.Condition(ctx.Lock())
        self._state = ctx.RawArray("d", [float(max_connections), 0.0, 0.0, 0.0, 0.0, -1e18])
        self._t0 = time.monotonic()  # events say seconds since the limiter was made (the run began)

    @property
    def limit(self) -> int:
        return int(self._state[_LIMIT])

    @property
    def in_flight(self) -> int:
        return int(self._state[_IN_FLIGHT])

    @contextmanager
    def slot(self) -> Iterator[None]:
        """Hold one of the model's connections for the duration of a call."""
        s = self._state
        with self._cond:
            while True:
                wait = s[_HOLD_UNTIL] - time.monotonic()
                if wait <= 0 and s[_IN_FLIGHT] < s[_LIMIT]:
                    break
                self._cond.wait(timeout=wait if wait > 0 else 1.0)
            s[_IN_FLIGHT] += 1
        try:
            yield
        finally:
            with self._cond:
                s[_IN_FLIGHT] -= 1
                self._cond.notify_all()

    def succeeded(self) -> None:
        s = self._state
        with self._cond:
            if s[_LIMIT] >= self.ceiling or time.monotonic() < s[_COOLDOWN_UNTIL]:
                return
            s[_SUCCESSES] += 1
            if s[_SUCCESSES] >= s[_LIMIT]:
                self._change(s[_LIMIT] + 1, "recovered")
                self._cond.notify_all()

    def throttled(self, reason: str, retry_after: float | None = None) -> None:
        """The provider refused or timed out: ``reason`` is ``rate_limit``, ``retry_after`` or ``timeout``."""
        s = self._state
        now = time.monotonic()
        if retry_after is not None:  # never longer than a call's own retry waits (the module docstring)
            retry_after = min(retry_after, MAX_HOLD_SECONDS) if math.isfinite(retry_after) else MAX_HOLD_SECONDS
        with self._cond:
            if retry_after:
                s[_HOLD_UNTIL] = max(s[_HOLD_UNTIL], now + retry_after)
            s[_COOLDOWN_UNTIL] = max(s[_COOLDOWN_UNTIL], now + max(self.cooldown, retry_after or 0.0))
            s[_SUCCESSES] = 0
            if now - s[_LAST_DECREASE] >= _DECREASE_EVERY:
                s[_LAST_DECREASE] = now
                self._change(max(1.0, float(int(s[_LIMIT]) // 2)), reason, retry_after)

    def _change(self, new: float, reason: str, retry_after: float | None = None) -> None:
        old = self._state[_LIMIT]
        self._state[_LIMIT], self._state[_SUCCESSES] = new, 0
        if self.events is not None and new != old:
            event = {"event": "concurrency", "model": self.model, "from": int(old), "to": int(new),
                     "reason": reason, "retry_after": retry_after,
                     "seconds": round(time.monotonic() - self._t0, 3), "pid": os.getpid()}
            append_event(self.events, event)


def append_event(path: Path, event: dict[str, Any]) -> None:
    """One line appended with one ``write`` on an ``O_APPEND`` descriptor (whole lines from any process)."""
    line = (json.dumps(event, sort_keys=True) + "\n").encode("utf-8")
    fd = os.open(path, os.O_WRONLY | os.O_APPEND | os.O_CREAT, 0o644)
    try:
        os.write(fd, line)
    finally:
        os.close(fd)


def read_events(path: str | os.PathLike[str]) -> list[dict[str, Any]]:
    path = Path(path)
    if not path.exists():
        return []
    events = []
    for line in path.read_text(encoding="utf-8").splitlines():
        try:
            events.append(json.loads(line))
        except json.JSONDecodeError:
            continue  # a line torn by a kill
    return events
