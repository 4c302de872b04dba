"""Group commit of an append-only file: many lines, one ``write`` and one ``fsync``.

An fsync costs several milliseconds on this machine's disks (6.8 ms measured under load), more
than a whole trivial episode. Lines added while a batch is open wait for it; a batch is
committed when it holds ``max_lines`` lines, when ``max_seconds`` have passed since its first
line (a timer thread), or on :meth:`GroupCommit.flush`. A line's callback runs only after the
fsync that made it durable, so a caller that reports work as done from the callback never
reports what a crash could still lose. After a kill, the lines of the open batch are gone (their
work is redone on resume) and the file may end in a torn line, which readers of the index
already cut.
"""

from __future__ import annotations

import os
import threading
from collections.abc import Callable
from pathlib import Path

Durable = Callable[[], None]


class GroupCommit:
    def __init__(self, path: Path, *, max_lines: int = 64, max_seconds: float = 0.005) -> None:
        self.path, self.max_lines, self.max_seconds = path, max_lines, max_seconds
        self._lines: list[bytes] = []
        self._callbacks: list[Durable] = []
        self._lock = threading.RLock()
        self._timer: threading.Timer | None = None
        self._failed: OSError | None = None  # a timer's commit that failed, raised in the caller's thread
        self.commits = 0  # fsyncs so far (for tests and benchmarks)

    def add(self, line: bytes, on_durable: Durable | None = None) -> None:
        """Queue one line (ending in a newline); ``on_durable`` runs once it is on disk."""
        with self._lock:
            self._raise_failure()
            if not self._lines:
                if self.max_seconds > 0:
                    self._timer = threading.Timer(self.max_seconds, self._flush_from_timer)
                    self._timer.daemon = True
                    self._timer.start()
            self._lines.append(line)
            if on_durable is not None:
                self._callbacks.append(on_durable)
            if len(self._lines) >= self.max_lines or self.max_seconds <= 0:
                self.flush()

    @property
    def pending(self) -> int:
        return len(self._lines)

    def flush(self) -> None:
        """Commit the open batch, if any: one write, one fsync, then its lines' callbacks. A
        failed commit (disk full) keeps the batch for the next try and raises."""
        with self._lock:
            self._raise_failure()
            if self._timer is not None:
                self._timer.cancel()
                self._timer = None
            if not self._lines:
                return
            data = b"".join(self._lines)
            size = self.path.stat().st_size if self.path.exists() else 0
            fd = os.open(self.path, os.O_WRONLY | os.O_APPEND | os.O_CREAT, 0o644)
            try:
                written = os.write(fd, data)
                while written < len(data):  # a short write (a signal): finish it
                    written += os.write(fd, data[written:])
                os.fsync(fd)
            except OSError as exc:
                os.ftruncate(fd, size)  # no half batch on disk: the whole batch is retried
                raise OSError(exc.errno, exc.strerror, str(self.path)) from None  # a full disk names the file
            finally:
                os.close(fd)
            callbacks = self._callbacks
            self._lines, self._callbacks = [], []
            self.commits += 1
            for callback in callbacks:
                callback()

    def _flush_from_timer(self) -> None:
        try:
            self.flush()
        except OSError as exc:  # nobody to raise to in this thread: the caller's next add or flush does
            with self._lock:
                self._failed = exc

    def _raise_failure(self) -> None:
        if self._failed is not None:
            failed, self._failed = self._failed, None
            raise failed
