"""Progress of a long step (a grid of episodes, a branching build, a team run).

One primitive for every workload: ``with steps("graphrag grid", total) as done: ... done("cell")``.
On a terminal it draws counts and an ETA; otherwise it prints one line per finished step to
stderr; with quiet set (``agentbed ... --quiet``) it prints nothing. Progress never reaches a log,
a summary or stdout, so it cannot change a run's bytes.
"""

from __future__ import annotations

import sys
import threading
import time
from collections.abc import Callable, Iterator
from contextlib import AbstractContextManager, contextmanager
from contextvars import ContextVar
from typing import Any, Protocol

from agentbed.problems import is_errored
from agentbed.scoped import scoped

_QUIET: ContextVar[bool] = ContextVar("agentbed_progress_quiet", default=False)


def quieted(quiet: bool) -> AbstractContextManager[None]:
    """Silence progress displays for the block only (the CLI's ``--quiet`` in a process that
    goes on: a verb called in-process must not silence what runs after it)."""
    return scoped(_QUIET, quiet or _QUIET.get())


class Step(Protocol):
    """What :func:`steps` yields: called once per finished step, optionally naming it."""

    def __call__(self, what: str = "") -> None: ...


@contextmanager
def steps(label: str, total: int) -> Iterator[Step]:
    """Yield ``done(what)``, to be called once per finished step of ``total``."""
    def nothing(what: str = "") -> None:
        return None

    if _QUIET.get() or total <= 0:
        yield nothing
        return
    if sys.stderr.isatty():
        from rich.progress import BarColumn, MofNCompleteColumn, Progress, TextColumn, TimeRemainingColumn

        bar = Progress(TextColumn("{task.description}"), BarColumn(), MofNCompleteColumn(), TimeRemainingColumn(),
                       transient=True)
        with bar:
            task = bar.add_task(label, total=total)
            def advance(what: str = "") -> None:
                bar.advance(task)

            yield advance
        return
    start, count = time.monotonic(), 0

    def done(what: str = "") -> None:
        nonlocal count
        count += 1
        elapsed = time.monotonic() - start
        eta = elapsed / count * (total - count)
        detail = f" {what}" if what else ""
        print(f"   {label}: {count}/{total}{detail} ({elapsed:.0f}s, about {eta:.0f}s left)", file=sys.stderr,
              flush=True)

    yield done


HEARTBEAT_SECONDS = 10.0  # on a pipe, a line at least this often (a run in CI must not look hung)


def _duration(seconds: float) -> str:
    seconds = max(0, int(round(seconds)))
    if seconds < 60:
        return f"{seconds}s"
    if seconds < 3600:
        return f"{seconds // 60}m{seconds % 60:02d}s"
    return f"{seconds // 3600}h{seconds % 3600 // 60:02d}m"


class RunProgress:
    """Progress of ``agentbed run``: done/total, errored episodes, tokens, cost and an ETA.

    On a terminal, a rich bar with those figures; on a pipe or file, one line to stderr at least
    every ``interval`` seconds (a timer thread, so a slow episode still shows the run is alive)
    and a final line; with ``quiet``, nothing. Use as a context manager and call :meth:`advance`
    with each finished record (an ``EpisodeRecord``)."""

    def __init__(self, total: int, *, quiet: bool = False, cost: Callable[[], float] | None = None,
                 interval: float = HEARTBEAT_SECONDS, label: str = "episodes", stream: Any = None,
                 figures: bool = True) -> None:
        self.total, self.quiet, self.cost, self.interval, self.label = total, quiet or _QUIET.get(), cost, interval, label
        self.figures = figures  # errors, tokens and cost (a set-up step has none)
        self.stream = stream or sys.stderr
        self.done = self.errors = self.tokens = 0
        self._start = time.monotonic()
        self._lock = threading.Lock()
        self._stop = threading.Event()
        self._bar: Any = None
        self._thread: threading.Thread | None = None

    def __enter__(self) -> RunProgress:
        if self.quiet or self.total <= 0:
            return self
        if _isatty(self.stream):
            from rich.console import Console
            from rich.progress import BarColumn, MofNCompleteColumn, Progress, TextColumn, TimeRemainingColumn

            self._bar = Progress(TextColumn("{task.description}"), BarColumn(), MofNCompleteColumn(),
                                 TextColumn("{task.fields[figures]}"), TimeRemainingColumn(), transient=True,
                                 console=Console(file=self.stream))
            self._bar.start()
            self._task = self._bar.add_task(self.label, total=self.total, figures="")
        else:
            self._print()  # at once: the plan is known before any episode (or provider) time is spent
            self._thread = threading.Thread(target=self._beat, name="agentbed-progress", daemon=True)
            self._thread.start()
        return self

    def advance(self, record: Any) -> None:
        with self._lock:
            self.done += 1
            self.errors += is_errored(record)  # the run's one count of errored episodes
            self.tokens += int(getattr(record, "tokens", 0) or 0)
        if self._bar is not None:
            self._bar.update(self._task, advance=1, figures=self._figures() if self.figures else "")

    def _figures(self) -> str:
        parts = [f"{self.errors} errored"] if self.errors else []
        if self.tokens:
            parts.append(f"{self.tokens:,} tokens")
        spent = self.cost() if self.cost is not None else 0.0
        if spent:
            parts.append(f"${spent:.4f}")
        return ", ".join(parts)

    def line(self) -> str:
        """One progress line: ``episodes 12/40, 1 errored, 5,321 tokens, $0.0123; 35s elapsed, ETA 1m20s``."""
        with self._lock:
            done, total = self.done, self.total
            figures = f", {self.errors} errored, {self.tokens:,} tokens" if self.figures else ""
        spent = self.cost() if self.cost is not None else 0.0
        money = f", ${spent:.4f}" if self.figures else ""
        elapsed = time.monotonic() - self._start
        eta = "ETA ?" if done == 0 else f"ETA {_duration(elapsed / done * (total - done))}"
        return (f"agentbed: {self.label} {done}/{total}{figures}{money}; {_duration(elapsed)} elapsed, "
                + ("done" if done >= total else eta))

    def _print(self) -> None:
        try:
            print(self.line(), file=self.stream, flush=True)
        except (OSError, ValueError):  # stderr closed: progress is never worth failing a run
            pass

    def _beat(self) -> None:
        while not self._stop.wait(self.interval):
            self._print()

    def __exit__(self, *exc: object) -> None:
        if self._bar is not None:
            self._bar.stop()
        if self._thread is not None:
            self._stop.set()
            self._thread.join()
            self._print()  # the final line


def _isatty(stream: Any) -> bool:
    try:
        return bool(stream.isatty())
    except (AttributeError, ValueError):
        return False


@contextmanager
def heartbeat(label: str, interval: float = HEARTBEAT_SECONDS) -> Iterator[None]:
    """Around one long step that reports no progress of its own (a build, a generation): on any
    output, a line to stderr at least every ``interval`` seconds saying it is still going, and one
    when it ends."""
    if _QUIET.get():
        yield
        return
    start, stop = time.monotonic(), threading.Event()

    def beat() -> None:
        while not stop.wait(interval):
            print(f"   {label}: still going ({_duration(time.monotonic() - start)})", file=sys.stderr, flush=True)

    thread = threading.Thread(target=beat, daemon=True)
    thread.start()
    try:
        yield
    finally:
        stop.set()
        thread.join()
        print(f"   {label}: done in {_duration(time.monotonic() - start)}", file=sys.stderr, flush=True)
