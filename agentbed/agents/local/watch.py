"""Keeping a run's local model servers alive (:mod:`agentbed.agents.local.server` starts them):
a server that dies is restarted once on its port; a second death, or a failed restart, is the
run's reason to stop handing out episodes, naming the server's log."""

from __future__ import annotations

import sys
import threading

from agentbed.agents.local.server import WATCHED, LocalServerError
from agentbed.errors import UsageError

MAX_RESTARTS = 1


def dead_server(*, restart: bool = True) -> str | None:
    """Check the servers this process started: a dead one is restarted once (on the same port),
    which is one line on stderr; one that dies again, or dies while restarting, is the reason to
    stop handing out episodes, naming the server and its log. None while every server runs. (A
    run's stop check; ``restart=False`` only looks, for the run's last check.)"""
    for model, watched in WATCHED.items():
        server = watched.server
        if server.alive():
            continue
        if restart and watched.restarts < MAX_RESTARTS:
            watched.restarts += 1
            code = server.process.poll() if server.process is not None else None
            try:
                server.restart()
            except (LocalServerError, OSError, UsageError) as exc:
                why = str(exc).splitlines()[0] if str(exc) else type(exc).__name__
                return (f"the local model server for {model} died again after {watched.restarts} restart(s) (while "
                        f"restarting: {why}); its log: {server.log_path}")
            print(f"agentbed: the local model server for {model} died (exit status {code}) and was restarted on "
                  f"the same port; its log: {server.log_path}", file=sys.stderr, flush=True)
            continue
        if watched.restarts == 0:
            return f"the local model server for {model} died; its log: {server.log_path}"
        return (f"the local model server for {model} died again after {watched.restarts} restart(s); its log: "
                f"{server.log_path}")
    return None


class ServerWatch:
    """A thread checking this process's servers every ``interval`` s (:func:`dead_server`): a dead
    one is restarted at once, so calls in flight succeed on a retry; :meth:`reason` says why the
    run must stop once one cannot be kept alive. On the way out it looks once more, after the
    thread has stopped, so a death the thread had no time to see is still named."""

    def __init__(self, interval: float = 0.5) -> None:
        self.interval = interval
        self._reason: str | None = None
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._watch, name="agentbed-server-watch", daemon=True)

    def _watch(self) -> None:
        while self._reason is None and not self._stop.wait(self.interval):
            self._reason = dead_server()

    def reason(self) -> str | None:
        return self._reason

    def settle(self) -> str | None:
        """Stop the thread, then look once more (without restarting): the run's last word."""
        self._stop.set()
        if self._thread.is_alive():
            self._thread.join()
        if self._reason is None and WATCHED:
            self._reason = dead_server(restart=False)
        return self._reason

    def __enter__(self) -> ServerWatch:
        if WATCHED:
            self._thread.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self._stop.set()
        if self._thread.is_alive():
            self._thread.join()


def restarts() -> dict[str, int]:
    """How often each watched server was restarted (for the run's events)."""
    return {model: w.restarts for model, w in WATCHED.items() if w.restarts}

