"""The virtual clock: the only source of time for environment semantics.

Tools advance it by their declared costs and waiting is a tool, so an episode's notion of
"now" depends on what the agent did, never on how fast the machine or the model ran.
Third-party code that reads the system time (botocore signing, PyJWT, pyotp, authlib) is run
inside :meth:`VirtualClock.frozen`, which makes ``time.time()`` and ``datetime.now()`` report
the virtual time.
"""

from __future__ import annotations

import contextlib
import datetime as _dt
import os
from collections.abc import Iterator

# Which library freezes the system clock. time-machine is the default: it swaps the C-level
# time functions in microseconds (about 0.02 ms per freeze here), while freezegun walks every
# attribute of every loaded module on each start (about 39 ms per freeze with botocore,
# LangChain and scikit-learn loaded), which would dominate a suite that signs on every call.
# Both make botocore's SigV4 signer, PyJWT and pyotp read virtual time (tests check both).
FREEZE_BACKENDS = ("time-machine", "freezegun")
DEFAULT_FREEZE_BACKEND = os.environ.get("AGENTBED_FREEZE_BACKEND", "time-machine")
# modules freezegun must not scan: their lazy __getattr__ imports pydantic models while datetime is
# patched (cohere, through AgentDojo; langchain_core's lazy exports), which raises mid-way
FREEZEGUN_SKIPS = ["agentdojo", "pydantic", "cohere", "google.genai", "anthropic", "langchain"]

# 2026-01-01T00:00:00Z: a fixed, documented epoch so that logs never depend on the wall clock.
DEFAULT_START = 1_767_225_600.0


class ClockError(ValueError):
    """Raised when the clock is asked to run backwards."""


class VirtualClock:
    """A monotonic clock advanced only by explicit calls.

    One clock belongs to one episode; two episodes never share one, so episodes in parallel
    processes (or in one process, one after the other) cannot see each other's time.
    """

    __slots__ = ("_now", "start")

    def __init__(self, start: float = DEFAULT_START) -> None:
        self.start = float(start)
        self._now = float(start)

    def now(self) -> float:
        """Seconds since the Unix epoch, in virtual time."""
        return self._now

    def elapsed(self) -> float:
        """Virtual seconds since the episode began."""
        return self._now - self.start

    def advance(self, seconds: float) -> float:
        """Move time forward by ``seconds`` (>= 0) and return the new time."""
        if seconds < 0:
            raise ClockError(f"cannot advance the clock by a negative amount ({seconds})")
        self._now += float(seconds)
        return self._now

    def set(self, timestamp: float) -> None:
        """Jump to ``timestamp``; used by restore() and replay, never by tools."""
        if timestamp < self.start:
            raise ClockError(f"timestamp {timestamp} precedes the clock's start {self.start}")
        self._now = float(timestamp)

    def datetime(self) -> _dt.datetime:
        """Virtual now as an aware UTC datetime."""
        return _dt.datetime.fromtimestamp(self._now, tz=_dt.UTC)

    def isoformat(self) -> str:
        return self.datetime().strftime("%Y-%m-%dT%H:%M:%SZ")

    @contextlib.contextmanager
    def frozen(self, backend: str | None = None) -> Iterator[None]:
        """Run third-party code with the system clock frozen at virtual now.

        ``time.time()``, ``time.gmtime()``, ``datetime.now()`` and friends return virtual now
        inside the block, so botocore's SigV4 signer, PyJWT's ``exp`` check and pyotp read
        virtual time. Time does not move while frozen (``tick=False``).
        """
        backend = backend or DEFAULT_FREEZE_BACKEND
        if backend == "time-machine":
            import time_machine

            with time_machine.travel(self.datetime(), tick=False):
                yield
        elif backend == "freezegun":
            import freezegun

            freezer = freezegun.freeze_time(self.datetime(), tick=False, ignore=FREEZEGUN_SKIPS)
            try:
                freezer.start()
            except BaseException:
                freezer.stop()  # a module scan that raised has already patched the clock: undo it
                raise
            try:
                yield
            finally:
                freezer.stop()
        else:
            raise ValueError(f"unknown freeze backend {backend!r}; choose one of {', '.join(FREEZE_BACKENDS)}")

    def snapshot(self) -> tuple[float, float]:
        return (self.start, self._now)

    @classmethod
    def from_snapshot(cls, state: tuple[float, float]) -> VirtualClock:
        clock = cls(state[0])
        clock._now = state[1]
        return clock

    def __repr__(self) -> str:
        return f"VirtualClock({self.isoformat()}, elapsed={self.elapsed():g}s)"
