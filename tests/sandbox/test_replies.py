"""The exec server's replies as the host reads them (agentbed/sandbox/session.py)."""

from __future__ import annotations

import time

import pytest

from agentbed.sandbox.capture import ReplyReader
from agentbed.sandbox.session import read_reply


def _reader(data: bytes) -> ReplyReader:
    chunks = [data]

    def read_chunk(deadline: float) -> bytes | None:
        if not chunks:
            raise EOFError("the stream ended")
        return chunks.pop()

    return ReplyReader(read_chunk)


REPLY = (b'{"out": 3, "err": 1, "code": 0, "reason": "", "out_truncated": false, "err_truncated": false}\n'
         b"abcE")


def test_a_ready_line_replayed_by_dockers_attach_is_skipped():
    """Docker's attach with logs can deliver the ready line again after the live stream did."""
    reply = read_reply(_reader(b'{"ready": true}\n' + REPLY), time.monotonic() + 5)
    assert reply is not None and (reply.code, reply.stdout, reply.stderr) == (0, b"abc", b"E")


@pytest.mark.parametrize("line", [b'{"ready": false}', b'{"code": 0}', b'[1, 2]', b'{"out": "x", "err": 0}',
                                  b'{"out": 0, "err": 0, "reason": ""}'])
def test_a_header_that_is_not_a_reply_is_a_lost_server_not_a_crash(line):
    with pytest.raises(EOFError, match="unexpected header"):
        read_reply(_reader(line + b"\n"), time.monotonic() + 5)


def test_garbage_is_still_named():
    with pytest.raises(EOFError, match="garbage"):
        read_reply(_reader(b"not json\n"), time.monotonic() + 5)
