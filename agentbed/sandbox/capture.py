"""Bounded capture of a command's output, with a deadline.

A flood of output must not exhaust the host's memory, and a command must not outlive its
time limit: :func:`pump` feeds stdin and collects stdout/stderr until both close, the
deadline passes, or a stream exceeds its cap, and says which of these ended it.
"""

from __future__ import annotations

import os
import selectors
import subprocess
import time

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


def pump(proc: subprocess.Popen[bytes], stdin: bytes | None, deadline: float,
         out: CappedBuffer, err: CappedBuffer, until_exit: bool = False) -> str:
    """Drive ``proc``'s pipes. Returns "" (streams closed), "timeout" or "output_limit".

    With ``until_exit`` it also returns "" once ``proc`` itself has exited, after taking what
    is already in the pipes: a background process holding them open must not keep it waiting.
    """
    sel = selectors.DefaultSelector()
    exit_fd = os.pidfd_open(proc.pid) if until_exit else None
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
            for key, _ in sel.select(remaining):
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
