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


def test_an_unavailable_backend_is_one_line_of_an_episodes_error():
    from agentbed.errors import failure_text
    from agentbed.sandbox import SandboxUnavailable

    for exc, one_line in ((SandboxUnavailable("bubblewrap is not installed"), True), (RuntimeError("a bug"), False)):
        try:
            raise exc
        except Exception as raised:  # noqa: BLE001 - as the runner catches it
            text = failure_text(raised)
        assert (text == "SandboxUnavailable: bubblewrap is not installed") is one_line
        assert ("Traceback" in text) is not one_line  # anything else keeps its traceback


def test_a_machine_that_refuses_namespaces_is_named_with_the_options_it_needs(monkeypatch):
    from agentbed.sandbox import local

    monkeypatch.setattr(local, "bwrap_path", lambda: "/bin/false")  # stands for a refusing bubblewrap
    monkeypatch.setattr(local.os, "geteuid", lambda: 1000)
    refused = local.namespaces_refused()
    assert refused is not None and refused.startswith(local.NAMESPACE_HINT)
    assert "--security-opt seccomp=unconfined" in refused
