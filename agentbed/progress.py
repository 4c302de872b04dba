"""Progress of a long step (a grid of episodes, a branching build, a team run).

One primitive for every workload: ``with steps("graphrag grid", total) as done: ... done("cell")``.
On a terminal it draws counts and an ETA; otherwise it prints one line per finished step to
stderr; with quiet set (``agentbed ... --quiet``) it prints nothing. Progress never reaches a log,
a summary or stdout, so it cannot change a run's bytes.
"""

from __future__ import annotations

import sys
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from contextvars import ContextVar

_QUIET: ContextVar[bool] = ContextVar("agentbed_progress_quiet", default=False)


def set_quiet(quiet: bool) -> None:
    """Silence (or restore) every progress display of this process (the CLI's ``--quiet``)."""
    _QUIET.set(quiet)


@contextmanager
def steps(label: str, total: int) -> Iterator[Callable[[str], None]]:
    """Yield ``done(what)``, to be called once per finished step of ``total``."""
    if _QUIET.get() or total <= 0:
        yield lambda what="": None
        return
    if sys.stderr.isatty():
        from rich.progress import BarColumn, MofNCompleteColumn, Progress, TextColumn, TimeRemainingColumn

        bar = Progress(TextColumn("{task.description}"), BarColumn(), MofNCompleteColumn(), TimeRemainingColumn(),
                       transient=True)
        with bar:
            task = bar.add_task(label, total=total)
            yield lambda what="": bar.advance(task)
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
