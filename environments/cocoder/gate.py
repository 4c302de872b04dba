"""Run a team's agents so that their turns happen in the order of their simulated start.

Each agent's episode runs in its own thread (one runner episode, one log per agent), but only
the turn the discrete-event replay picks next may build its observation and act; the others
wait. So when a turn starts, every unit it waits for has been written by the agent that wrote
it, and its text can be shown. One turn at a time keeps the logs byte-identical across runs.
"""

from __future__ import annotations

import threading
from collections.abc import Callable
from typing import Any

from controllers.cocoder.schedule import Replay, Turn

WAIT_SECONDS = 3600.0  # a turn longer than this (a hung model call) is a bug, not a slow model


class TurnGate:
    """Grants one turn at a time in simulated-start order and keeps what each turn wrote."""

    def __init__(self, replay: Replay) -> None:
        self.replay = replay
        self.written: dict[str, str] = {}  # unit -> the text its agent wrote
        self.durations: dict[str, float] = {}
        self.order: list[str] = []  # units in the order they ran
        self._cond = threading.Condition()
        self._gone: set[int] = set()
        self._granted: Turn | None = None
        with self._cond:
            self._advance()

    def _advance(self) -> None:
        """Grant the next turn (lock held); an agent whose episode has ended takes no time for the rest."""
        while (turn := self.replay.next()) is not None and turn.worker in self._gone:
            self.replay.record(turn, 0.0)
            self.durations[turn.module] = 0.0
        self._granted = turn
        self._cond.notify_all()

    def wait(self, worker: int, unit: str) -> None:
        """Block until ``unit`` of ``worker`` is the turn to run."""
        with self._cond:
            ok = self._cond.wait_for(lambda: self._granted is not None and self._granted.worker == worker
                                     and self._granted.module == unit, WAIT_SECONDS)
            if not ok:
                raise RuntimeError(f"turn {unit} of agent {worker} was never granted")

    def done(self, worker: int, unit: str, text: str, duration: float) -> None:
        with self._cond:
            turn = self._granted
            if turn is None or turn.worker != worker or turn.module != unit:
                raise RuntimeError(f"{unit} was written out of turn")
            self.written[unit] = text
            self.durations[unit] = duration
            self.order.append(unit)
            self.replay.record(turn, duration)
            self._advance()

    def leave(self, worker: int) -> None:
        """The agent's episode ended (done, error or budget): its unwritten turns take no time."""
        with self._cond:
            self._gone.add(worker)
            if self._granted is not None and self._granted.worker == worker:
                self.replay.record(self._granted, 0.0)
                self.durations[self._granted.module] = 0.0
                self._advance()


def run_gated(gate: TurnGate, jobs: dict[int, Callable[[], Any]]) -> dict[int, Any]:
    """Run each worker's episode in a thread under ``gate``; results by worker (errors re-raised)."""
    results: dict[int, Any] = {}
    errors: list[BaseException] = []

    def run(worker: int, job: Callable[[], Any]) -> None:
        try:
            results[worker] = job()
        except BaseException as exc:  # noqa: BLE001 - re-raised in the caller's thread
            errors.append(exc)
        finally:
            gate.leave(worker)

    threads = [threading.Thread(target=run, args=(w, job), name=f"cocoder-w{w}") for w, job in sorted(jobs.items())]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    if errors:
        raise errors[0]
    return results
