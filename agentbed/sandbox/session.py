"""The host's side of the exec-server protocol (see session_server.py), for both backends.

A request is one JSON line (argv, timeout, stdin length, output cap, cwd) followed by the
command's stdin; a reply is one JSON line (exit code, what ended it, lengths, truncation)
followed by the command's stdout and stderr.
"""

from __future__ import annotations

import json
from dataclasses import dataclass

from agentbed.sandbox.capture import ReplyReader

GRACE = 10.0  # the server enforces the timeout; the host waits this much longer before giving up


@dataclass(frozen=True)
class Reply:
    code: int
    reason: str  # "", "timeout" or "output_limit"
    stdout: bytes
    stderr: bytes
    stdout_truncated: bool
    stderr_truncated: bool


def encode_request(argv: list[str], timeout: float, stdin: bytes | None, output_bytes: int, cwd: str) -> bytes:
    header = {"argv": argv, "timeout": timeout, "stdin": None if stdin is None else len(stdin),
              "output": output_bytes, "cwd": cwd}
    return json.dumps(header).encode() + b"\n" + (stdin or b"")


READY = {"ready": True}  # the exec server's first line (session_server.py)


def read_reply(replies: ReplyReader, deadline: float) -> Reply | None:
    """The next reply, or None if it did not come by ``deadline``. EOFError if the server died."""
    while True:
        line = replies.line(deadline)
        if line is None:
            return None
        try:
            header = json.loads(line)
        except ValueError as exc:
            raise EOFError(f"the exec server sent garbage: {line[:80]!r}") from exc
        # Docker's attach with logs replays the container's output so far, and under load that can
        # come after the live stream already gave it: the ready line twice (seen 2026-12-06 on
        # Docker 20.10 in a Ray container node). The server sends nothing else before a request.
        if header != READY:
            break
    try:  # every field read before any byte is, so a malformed header is one lost server, never a KeyError
        sizes = int(header["out"]), int(header["err"])
        code, reason = int(header["code"]), str(header["reason"])
        truncated = bool(header["out_truncated"]), bool(header["err_truncated"])
    except (KeyError, TypeError, ValueError) as exc:
        raise EOFError(f"the exec server sent an unexpected header: {line[:80]!r}") from exc
    out = replies.exactly(sizes[0], deadline)
    err = replies.exactly(sizes[1], deadline)
    if out is None or err is None:
        return None
    return Reply(code, reason, out, err, *truncated)


def wait_ready(replies: ReplyReader, deadline: float) -> bool:
    try:
        line = replies.line(deadline)
    except EOFError:
        return False
    return line is not None and b"ready" in line
