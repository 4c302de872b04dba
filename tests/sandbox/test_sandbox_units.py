"""Pure logic of the sandbox package: status labels, limits, paths, capped capture."""

from __future__ import annotations

import signal

import pytest

from agentbed.sandbox import Limits, SandboxPathError, open_sandbox
from agentbed.sandbox.base import classify, sandbox_path, stderr_says_disk_full, stderr_says_oom
from agentbed.sandbox.capture import CappedBuffer


@pytest.mark.parametrize(("code", "flags", "status"), [
    (0, {}, "ok"), (1, {}, "nonzero"), (127, {}, "not_found"), (137, {}, "killed"),
    (128 + signal.SIGXCPU, {}, "cpu_limit"), (128 + signal.SIGXFSZ, {}, "disk_full"),
    (137, {"timed_out": True}, "timeout"), (0, {"output_limited": True}, "output_limit"),
    (137, {"oom": True}, "oom"), (1, {"disk_full": True}, "disk_full"),
])
def test_classify(code, flags, status):
    assert classify(code, **flags) == status


def test_limits_are_validated():
    with pytest.raises(ValueError, match="Limits.memory_bytes"):
        Limits(memory_bytes=0)
    with pytest.raises(ValueError, match="Limits.processes"):
        Limits(processes=True)


def test_paths():
    assert sandbox_path("a/./b") == "a/b"
    for bad in ("/abs", "..", "x/../..", ""):
        with pytest.raises(SandboxPathError):
            sandbox_path(bad)


def test_capped_buffer():
    buf = CappedBuffer(5)
    assert not buf.add(b"abc")
    assert buf.add(b"defg")
    assert buf.value() == b"abcde" and buf.truncated


def test_stderr_markers():
    assert stderr_says_oom(b"Traceback...\nMemoryError\n")
    assert stderr_says_disk_full(b"head: error writing 'f': No space left on device\n")
    assert not stderr_says_oom(b"AssertionError")


def test_unknown_backend_is_a_clear_error():
    with pytest.raises(ValueError, match="backend must be one of"):
        open_sandbox("podman")
