"""On a pipe, ``agentbed run``'s progress is a line at once (the plan known, before any provider
time), then one at least every ``interval`` seconds while episodes run (a slow episode must not
look like a hung run), then a final line. Waits are bounded polls: no timing is asserted."""

from __future__ import annotations

import io
import threading
import time

from agentbed.progress import HEARTBEAT_SECONDS, RunProgress
from agentbed.runner import EpisodeRecord


class Lines(io.StringIO):
    """A pipe-like stream (not a terminal) whose lines can be awaited."""

    def __init__(self) -> None:
        super().__init__()
        self.changed = threading.Condition()

    def write(self, text: str) -> int:
        with self.changed:
            n = super().write(text)
            self.changed.notify_all()
            return n

    def wait_for(self, count: int, limit: float = 30.0) -> list[str]:
        with self.changed:
            self.changed.wait_for(lambda: len(self.getvalue().splitlines()) >= count, limit)
            return self.getvalue().splitlines()


def test_a_line_at_once_then_heartbeats_while_an_episode_runs_then_a_final_line():
    stream = Lines()
    with RunProgress(2, interval=0.01, stream=stream) as progress:
        first = stream.getvalue().splitlines()
        assert first == ["agentbed: episodes 0/2, 0 errored, 0 tokens, $0.0000; 0s elapsed, ETA ?"]
        beats = stream.wait_for(4)  # nothing finished, yet the run keeps saying it is alive
        assert len(beats) >= 4 and all(line.startswith("agentbed: episodes 0/2") for line in beats)
        progress.advance(EpisodeRecord("e1", "s", "t", "a", 0, "ok", True, 1.0, 1, 1.0, 5))
        progress.advance(EpisodeRecord("e2", "s", "t", "a", 1, "error", False, 0.0, 1, 1.0, 0,
                                       error="RateLimitError: Error code: 429"))  # a provider's, not scored
    assert stream.getvalue().splitlines()[-1].startswith("agentbed: episodes 2/2, 1 errored, 5 tokens")
    assert stream.getvalue().splitlines()[-1].endswith("done")


def test_the_heartbeat_is_at_most_ten_seconds_and_quiet_prints_nothing():
    assert HEARTBEAT_SECONDS <= 10
    stream = Lines()
    with RunProgress(2, quiet=True, interval=0.01, stream=stream):
        time.sleep(0.05)
    assert stream.getvalue() == ""


def test_quiet_is_scoped_to_the_block_that_asked_for_it():
    from agentbed.progress import quieted

    with quieted(True):
        silent = Lines()
        with RunProgress(1, interval=60, stream=silent):
            pass
        assert silent.getvalue() == ""
    loud = Lines()
    with RunProgress(1, interval=60, stream=loud):  # an in-process `demo --quiet` leaves nothing behind
        pass
    assert loud.getvalue().startswith("agentbed: episodes 0/1")
