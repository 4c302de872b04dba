"""The sandbox protocol, on both backends: exec, files, limits as results, cleanup."""

from __future__ import annotations

import os
import tarfile

import pytest

from agentbed.sandbox import ExecResult, SandboxError, SandboxPathError, open_sandbox


def test_exec_list_and_string(sandbox):
    result = sandbox.exec(["echo", "hello world"])
    assert isinstance(result, ExecResult)
    assert (result.status, result.exit_code, result.stdout) == ("ok", 0, b"hello world\n")
    assert result.duration > 0 and not result.stdout_truncated and not result.stderr_truncated
    shell = sandbox.exec("echo out; echo err >&2; exit 3")
    assert (shell.status, shell.exit_code, shell.stdout, shell.stderr) == ("nonzero", 3, b"out\n", b"err\n")


def test_stdin_is_passed_whole(sandbox):
    data = bytes(range(256)) * 2000  # binary, larger than a pipe buffer
    result = sandbox.exec(["sh", "-c", "cat | od -An -c | wc -l >&2; echo done"], stdin=data)
    assert result.status == "ok" and result.stdout == b"done\n"
    echoed = sandbox.exec(["cat"], stdin=b"abc\x00def")
    assert echoed.stdout == b"abc\x00def"


def test_unknown_command_is_a_result(sandbox):
    result = sandbox.exec(["no-such-program-xyz", "--flag"])
    assert result.status == "not_found" and result.exit_code == 127


def test_unrunnable_arguments_are_a_result(sandbox):
    for argv in (["echo", "nul\x00byte"], ["/sandbox"]):  # a NUL byte; a directory
        result = sandbox.exec(argv)
        assert result.status == "nonzero" and result.exit_code == 126, (argv, result)
    assert sandbox.exec(["echo", "still fine"]).ok


def test_workdir_persists_between_commands(sandbox):
    assert sandbox.exec("echo kept > note.txt").ok
    assert sandbox.exec(["cat", "note.txt"]).stdout == b"kept\n"
    assert sandbox.exec("pwd").stdout.decode().strip() == sandbox.workdir


def test_file_round_trip(sandbox, tmp_path):
    sandbox.write_file("pkg/data.bin", bytes(range(256)))
    sandbox.write_file("pkg/text.txt", "héllo")
    assert sandbox.read_file("pkg/data.bin") == bytes(range(256))
    assert sandbox.read_file("pkg/text.txt") == "héllo".encode()
    with pytest.raises(FileNotFoundError):
        sandbox.read_file("missing.txt")

    src = tmp_path / "project"
    (src / "sub").mkdir(parents=True)
    (src / "sub" / "a.py").write_text("A = 1\n")
    (src / "run.sh").write_text("#!/bin/sh\necho ran\n")
    (src / "run.sh").chmod(0o755)
    sandbox.copy_in(src, "proj")
    assert sandbox.exec(["cat", "proj/sub/a.py"]).stdout == b"A = 1\n"
    assert sandbox.exec(["./proj/run.sh"]).stdout == b"ran\n"
    sandbox.copy_in(src / "run.sh", "single/run.sh")
    assert sandbox.exec(["./single/run.sh"]).stdout == b"ran\n"

    sandbox.exec("mkdir -p out/deep && echo result > out/deep/r.txt")
    sandbox.copy_out("out", tmp_path / "copied")
    assert (tmp_path / "copied" / "deep" / "r.txt").read_text() == "result\n"
    sandbox.copy_out("out/deep/r.txt", tmp_path / "r.txt")
    assert (tmp_path / "r.txt").read_text() == "result\n"


@pytest.mark.parametrize("bad", ["/etc/passwd", "../outside", "a/../../b", "", "nul\0byte"])
def test_paths_must_stay_in_the_workdir(sandbox, bad):
    with pytest.raises(SandboxPathError):
        sandbox.write_file(bad, b"x")
    with pytest.raises(SandboxPathError):
        sandbox.read_file(bad)


def test_python_has_pytest(sandbox, tmp_path):
    project = tmp_path / "proj"
    project.mkdir()
    (project / "calc.py").write_text("def add(a, b):\n    return a + b\n")
    (project / "test_calc.py").write_text(
        "from calc import add\n\ndef test_add():\n    assert add(2, 3) == 5\n\n"
        "def test_fails():\n    assert add(2, 2) == 5\n")
    sandbox.copy_in(project, "proj")
    result = sandbox.exec([sandbox.python, "-m", "pytest", "-q", "-p", "no:cacheprovider", "proj"], timeout=120)
    assert result.status == "nonzero", result.stderr
    assert b"1 failed, 1 passed" in result.stdout


def test_the_pythons_own_commands_are_on_path(sandbox):
    """What ``sb.python`` imports, its console scripts run: PATH has that Python's scripts folder
    (local: the venv's bin). transitions' tests ``import mypy`` and then run ``mypy``, which the
    local sandbox did not find, so its reference run failed on a machine without Docker (issue 55)."""
    result = sandbox.exec(["pytest", "--version"])
    assert result.ok, (result.status, result.stderr)
    found = sandbox.exec(["sh", "-c", "command -v pytest"]).stdout.decode().strip()
    scripts = sandbox.exec([sandbox.python, "-c", "import sys, sysconfig; print(sysconfig.get_path('scripts'))"])
    assert os.path.dirname(found) == scripts.stdout.decode().strip(), found


def test_environment_is_scrubbed(backend, limits, monkeypatch):
    monkeypatch.setenv("AGENTBED_HOST_SECRET", "s3cret-token-value")
    with open_sandbox(backend, limits) as sb:
        env = sb.exec(["env"]).stdout.decode()
        assert "s3cret-token-value" not in env and "AGENTBED_HOST_SECRET" not in env
        assert f"HOME={sb.workdir}" in env.splitlines()
        assert sb.exec(["id", "-u"]).stdout.strip() == b"1000"


def test_cleanup_is_final_and_idempotent(backend):
    sb = open_sandbox(backend)
    sb.exec("echo x > f")
    sb.cleanup()
    sb.cleanup()
    with pytest.raises(SandboxError):
        sb.exec("true")


def test_copy_out_refuses_links_leaving_the_destination(sandbox, tmp_path):
    sandbox.exec("mkdir d && ln -s /etc/passwd d/link")
    with pytest.raises((SandboxError, tarfile.TarError)):
        sandbox.copy_out("d", tmp_path / "d")
    assert not os.path.lexists(tmp_path / "d" / "link")


def test_workdir_survives_a_timeout(sandbox):
    sandbox.write_file("kept.txt", b"still here")
    assert sandbox.exec("sleep 60", timeout=1).status == "timeout"
    assert sandbox.exec(["cat", "kept.txt"]).stdout == b"still here"


def test_sandboxed_code_cannot_touch_the_exec_machinery(sandbox):
    """PID 1, the exec server, ignores signals from inside and is not readable through /proc,
    so code cannot take it over or fake later results."""
    for sig in ("KILL", "TERM", "INT", "STOP"):
        sandbox.exec(f"kill -{sig} 1")
    assert sandbox.exec(["echo", "still serving"]).stdout == b"still serving\n"
    fds = sandbox.exec("ls /proc/1/fd")
    assert fds.status == "nonzero" and b"Permission denied" in fds.stderr
