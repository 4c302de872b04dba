"""Group commit of an append-only file: many lines, one ``write`` and one ``fsync``.

An fsync costs several milliseconds on this machine's disks (6.8 ms measured under load), more
than a whole trivial episode. Lines added while a batch is open wait for it; a batch is
committed when it holds ``max_lines`` lines, when ``max_seconds`` have passed since its first
line (the committer thread), or on :meth:`GroupCommit.flush`. A line's callback runs only after the
fsync that made it durable, so a caller that reports work as done from the callback never
reports what a crash could still lose. After a kill, the lines of the open batch are gone (their
work is redone on resume) and the file may end in a torn line, which readers of the index
already cut.

A commit runs outside the lock that :meth:`GroupCommit.add` takes, so the thread adding lines
(a serial run's only thread) keeps working while the committer thread waits on the disk; commits
are ordered by a lock of their own. With ``sync_first`` (the run store's), the file system that
holds the file is flushed (``syncfs``) before the batch is written, so the files its lines name
(the episodes' logs, written and closed before their records arrived) are on disk before any
line that reports them finished is.
"""

from __future__ import annotations

import ctypes
import functools
import os
import threading
import time
from collections.abc import Callable
from pathlib import Path

Durable = Callable[[], None]


class GroupCommit:
    def __init__(self, path: Path, *, max_lines: int = 64, max_seconds: float = 0.005,
                 sync_first: bool = False) -> None:
        self.path, self.max_lines, self.max_seconds, self.sync_first = path, max_lines, max_seconds, sync_first
        self._lines: list[bytes] = []
        self._callbacks: list[Durable] = []
        self._lock = threading.Lock()  # the open batch
        self._opened = threading.Condition(self._lock)  # a batch opened, or the committer is to stop
        self._commit = threading.RLock()  # one commit at a time, in order (a callback may add)
        self._first_at = 0.0  # when the open batch's first line came
        self._committer: threading.Thread | None = None
        self._closed = False
        self._failed: OSError | None = None  # the committer thread's failed commit, raised in the caller's thread
        self.commits = 0  # fsyncs so far (for tests and benchmarks)

    def add(self, line: bytes, on_durable: Durable | None = None) -> None:
        """Queue one line (ending in a newline); ``on_durable`` runs once it is on disk."""
        with self._lock:
            self._raise_failure()
            if not self._lines and self.max_seconds > 0:
                # one long-lived committer thread: starting a timer thread per batch made the adding
                # thread wait for it to be scheduled, behind busy workers on a small machine
                self._first_at = time.monotonic()
                if self._committer is None:
                    self._closed = False
                    self._committer = threading.Thread(target=self._commit_on_time, daemon=True,
                                                       name=f"group-commit {self.path.name}")
                    self._committer.start()
                self._opened.notify()
            self._lines.append(line)
            if on_durable is not None:
                self._callbacks.append(on_durable)
            full = len(self._lines) >= self.max_lines or self.max_seconds <= 0
        if full:
            self.flush()

    @property
    def pending(self) -> int:
        return len(self._lines)

    def flush(self) -> None:
        """Commit the open batch, if any: one write, one fsync, then its lines' callbacks. A
        failed commit (disk full) keeps the batch for the next try and raises."""
        with self._commit:
            with self._lock:
                self._raise_failure()
                lines, callbacks = self._lines, self._callbacks
                self._lines, self._callbacks = [], []
            if not lines:
                return
            try:
                self._write(b"".join(lines))
            except OSError:
                with self._lock:  # the whole batch goes back in front of lines added meanwhile
                    self._lines, self._callbacks = lines + self._lines, callbacks + self._callbacks
                    self._opened.notify()  # the committer waits for this batch again, until it is due
                raise
            self.commits += 1
            for callback in callbacks:
                callback()

    def _write(self, data: bytes) -> None:
        size = self.path.stat().st_size if self.path.exists() else 0
        fd = os.open(self.path, os.O_WRONLY | os.O_APPEND | os.O_CREAT, 0o644)
        try:
            if self.sync_first:
                sync_file_system(fd)
            written = os.write(fd, data)
            while written < len(data):  # a short write (a signal): finish it
                written += os.write(fd, data[written:])
            os.fsync(fd)
        except OSError as exc:
            os.ftruncate(fd, size)  # no half batch on disk: the whole batch is retried
            raise OSError(exc.errno, exc.strerror, str(self.path)) from None  # a full disk names the file
        finally:
            os.close(fd)

    def close(self) -> None:
        """Commit what is open and stop the committer thread (a new line starts it again)."""
        self.flush()
        with self._lock:
            self._closed = True
            self._opened.notify()
            committer, self._committer = self._committer, None
        if committer is not None and committer is not threading.current_thread():
            committer.join()

    def _commit_on_time(self) -> None:
        """The committer thread: each open batch is committed ``max_seconds`` after its first line
        (unless it filled up first)."""
        while True:
            with self._lock:
                while not self._lines and not self._closed:
                    self._opened.wait()
                if self._closed:
                    return
                while self._lines and (left := self._first_at + self.max_seconds - time.monotonic()) > 0:
                    self._opened.wait(left)
                if not self._lines:  # a caller's flush took the batch meanwhile: it commits it, or puts it
                    continue  # back and raises, and a failed batch is not retried before it is due
            try:
                self.flush()
            except OSError as exc:  # nobody to raise to in this thread: the caller's next add or flush does
                with self._lock:  # and retries the batch; the next batch opened starts a committer again
                    self._failed = exc
                    if self._committer is threading.current_thread():
                        self._committer = None
                return

    def _raise_failure(self) -> None:
        if self._failed is not None:
            failed, self._failed = self._failed, None
            raise failed


def sync_file_system(fd: int) -> None:
    """Flush the file system holding ``fd`` (Linux ``syncfs``); elsewhere, every file system."""
    syncfs = _syncfs()
    if syncfs is None:
        os.sync()
    elif syncfs(fd) != 0:
        errno = ctypes.get_errno()
        raise OSError(errno, os.strerror(errno))


@functools.cache
def _syncfs() -> Callable[[int], int] | None:
    try:  # the symbols the process already has, libc's among them: nothing searched for or loaded
        return ctypes.CDLL(None, use_errno=True).syncfs
    except (OSError, AttributeError):
        return None
