"""Bounded capture of a command's output, with a deadline.

A flood of output must not exhaust the host's memory, and a command must not outlive its
time limit: :func:`pump` feeds stdin and collects stdout/stderr until both close, the
deadline passes, or a stream exceeds its cap, and says which of these ended it.
"""

from __future__ import annotations

import os
import select
import selectors
import subprocess
import time
from collections.abc import Callable

CHUNK = 64 * 1024


class CappedBuffer:
    """Keeps the first ``limit`` bytes of a stream; remembers whether more arrived."""

    def __init__(self, limit: int) -> None:
        self.limit = limit
        self._parts: list[bytes] = []
        self._size = 0
        self.truncated = False

    def add(self, data: bytes) -> bool:
        """Append ``data``; return True once the stream went past the limit."""
        room = self.limit - self._size
        if len(data) > room:
            data = data[:max(room, 0)]
            self.truncated = True
        if data:
            self._parts.append(data)
            self._size += len(data)
        return self.truncated

    def value(self) -> bytes:
        return b"".join(self._parts)


class ReplyReader:
    """Lines and exact byte counts from a stream, with deadlines. ``read_chunk(deadline)``
    returns the next bytes, or None once the deadline has passed; it raises EOFError when the
    stream ends."""

    def __init__(self, read_chunk: Callable[[float], bytes | None]) -> None:
        self.read_chunk = read_chunk
        self.buffer = bytearray()

    def _fill(self, deadline: float) -> bool:
        data = self.read_chunk(deadline)
        if data is None:
            return False
        self.buffer += data
        return True

    def line(self, deadline: float) -> bytes | None:
        while b"\n" not in self.buffer:
            if not self._fill(deadline):
                return None
        line, _, rest = bytes(self.buffer).partition(b"\n")
        self.buffer = bytearray(rest)
        return line

    def exactly(self, size: int, deadline: float) -> bytes | None:
        while len(self.buffer) < size:
            if not self._fill(deadline):
                return None
        data = bytes(self.buffer[:size])
        del self.buffer[:size]
        return data


def pipe_chunks(fd: int) -> Callable[[float], bytes | None]:
    """``read_chunk`` for a pipe."""

    def read_chunk(deadline: float) -> bytes | None:
        remaining = deadline - time.monotonic()
        if remaining <= 0 or not select.select([fd], [], [], remaining)[0]:
            return None
        data = os.read(fd, 1 << 20)
        if not data:
            raise EOFError("the stream ended")
        return data

    return read_chunk


def pump(proc: subprocess.Popen[bytes], stdin: bytes | None, deadline: float,
         out: CappedBuffer, err: CappedBuffer, until_exit: bool = False) -> str:
    """Drive ``proc``'s pipes. Returns "" (streams closed), "timeout" or "output_limit".

    With ``until_exit`` it also returns "" once ``proc`` itself has exited, after taking what
    is already in the pipes: a background process holding them open must not keep it waiting.
    """
    sel = selectors.DefaultSelector()
    exit_fd = _pidfd(proc.pid) if until_exit else None
    poll_exit = until_exit and exit_fd is None  # no pidfd (old kernel, seccomp): poll instead
    if exit_fd is not None:
        sel.register(exit_fd, selectors.EVENT_READ)
    buffers = {}
    for stream, buffer in ((proc.stdout, out), (proc.stderr, err)):
        if stream is not None:
            os.set_blocking(stream.fileno(), False)
            sel.register(stream, selectors.EVENT_READ)
            buffers[stream.fileno()] = buffer
    pending = memoryview(stdin or b"")
    if proc.stdin is not None:
        if pending:
            os.set_blocking(proc.stdin.fileno(), False)
            sel.register(proc.stdin, selectors.EVENT_WRITE)
        else:
            proc.stdin.close()
    try:
        while buffers or (proc.stdin is not None and not proc.stdin.closed):
            remaining = deadline - time.monotonic()
            if remaining <= 0:
                return "timeout"
            if poll_exit and proc.poll() is not None:
                return _drain(buffers)
            for key, _ in sel.select(min(remaining, 0.05) if poll_exit else remaining):
                fd = key.fd
                if fd == exit_fd:
                    return _drain(buffers)
                if proc.stdin is not None and key.fileobj is proc.stdin:
                    try:
                        pending = pending[os.write(fd, pending[:CHUNK]):]
                    except (BrokenPipeError, BlockingIOError) as exc:
                        if isinstance(exc, BlockingIOError):
                            continue
                        pending = pending[:0]
                    if not pending:
                        sel.unregister(proc.stdin)
                        proc.stdin.close()
                    continue
                try:
                    data = os.read(fd, CHUNK)
                except BlockingIOError:
                    continue
                if not data:
                    sel.unregister(key.fileobj)
                    del buffers[fd]
                elif buffers[fd].add(data):
                    return "output_limit"
        return ""
    finally:
        sel.close()
        if exit_fd is not None:
            os.close(exit_fd)


def _pidfd(pid: int) -> int | None:
    try:
        return os.pidfd_open(pid)
    except (AttributeError, OSError):
        return None


def _drain(buffers: dict[int, CappedBuffer]) -> str:
    """Take what the pipes hold now, without waiting for them to close."""
    for fd, buffer in buffers.items():
        while True:
            try:
                data = os.read(fd, CHUNK)
            except BlockingIOError:
                break
            if not data:
                break
            if buffer.add(data):
                return "output_limit"
    return ""
