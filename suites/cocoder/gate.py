"""Run a team's agents at once, each turn waiting only for the texts it is shown.

Each agent's episode runs in its own thread (one runner episode, one log per agent). A turn may
build its observation and act once every unit whose text it is shown (a message from another
agent) has been written and the replay can place it (every unit its unit depends on finished);
its own agent's earlier turns are done by construction. So turns of
different agents overlap in wall-clock time (a real model's calls run in parallel), while what
each turn sees depends only on the plan and the texts it waits for: the logs are byte-identical
whatever order the threads finish in. The virtual timeline is the discrete-event replay of the
plan with each turn's duration, recorded as turns finish (the replay places a turn by its
agent and its dependencies, not by when it was recorded).
"""

from __future__ import annotations

import threading
from collections.abc import Callable, Collection, Mapping
from typing import Any

from controllers.cocoder.schedule import Replay, Turn

WAIT_SECONDS = 3600.0  # a turn longer than this (a hung model call) is a bug, not a slow model


class TurnGate:
    """Holds each turn until the texts it is shown exist, records the timeline, keeps what each
    turn wrote."""

    def __init__(self, replay: Replay, needs: Mapping[str, Collection[str]]) -> None:
        self.replay = replay
        self.needs = needs  # unit -> the units whose written text the turn is shown
        self.written: dict[str, str] = {}  # unit -> the text its agent wrote
        self.durations: dict[str, float] = {}
        self._worker = {t.module: w for w, queue in replay.queues.items() for t in queue}
        self._finished: set[str] = set()  # written, or never to be (its agent's episode ended)
        self._gone: set[int] = set()
        self._cond = threading.Condition()

    @property
    def order(self) -> list[str]:
        """The units whose turns ran, in the order of their start on the virtual clock (ties by agent)."""
        timeline = self.replay.timeline
        return sorted(self.written, key=lambda u: (timeline[u][0], self._worker[u], u))

    def wait(self, worker: int, unit: str) -> None:
        """Block until ``unit`` of ``worker`` can start: every text it is shown has been written and
        the replay can place it (a cycle's first member waits for what any member depends on)."""
        def ready() -> bool:
            turn = self._head(worker)
            return (turn is not None and turn.module == unit and self.replay.start_of(turn) is not None
                    and all(u in self._finished for u in self.needs.get(unit, ())))

        with self._cond:
            if not self._cond.wait_for(ready, WAIT_SECONDS):
                raise RuntimeError(f"turn {unit} of agent {worker} waited {WAIT_SECONDS:.0f} s for its dependencies")

    def done(self, worker: int, unit: str, text: str, duration: float) -> None:
        with self._cond:
            turn = self._head(worker)
            if turn is None or turn.module != unit or self.replay.start_of(turn) is None:
                raise RuntimeError(f"{unit} was written out of turn")
            self.written[unit] = text
            self._record(turn, duration)

    def leave(self, worker: int) -> None:
        """The agent's episode ended (done, error or budget): its unwritten turns take no time."""
        with self._cond:
            self._gone.add(worker)
            self._settle()
            self._cond.notify_all()

    def _head(self, worker: int) -> Turn | None:
        queue = self.replay.queues.get(worker)
        return queue[0] if queue else None

    def _record(self, turn: Turn, duration: float) -> None:
        """(lock held) Place ``turn`` on the timeline, release the turns waiting for it."""
        self.replay.record(turn, duration)
        self.durations[turn.module] = duration
        self._finished.add(turn.module)
        self._settle()
        self._cond.notify_all()

    def _settle(self) -> None:
        """(lock held) Record the unwritten turns of agents that left, with no time, as soon as
        the replay can place them (their dependencies recorded)."""
        placed = True
        while placed:
            placed = False
            for worker in sorted(self._gone):
                turn = self._head(worker)
                if turn is not None and self.replay.start_of(turn) is not None:
                    self.replay.record(turn, 0.0)
                    self.durations[turn.module] = 0.0
                    self._finished.add(turn.module)
                    placed = True


def run_gated(gate: TurnGate, jobs: Mapping[int, Callable[[], Any]]) -> dict[int, Any]:
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
