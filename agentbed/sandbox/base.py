"""The sandbox protocol shared by every backend.

A :class:`Sandbox` is one isolated working directory in which untrusted commands run, one
after another, for the length of an episode. Expected failures (timeout, memory or disk
exhausted, output flood, unknown command) come back as an :class:`ExecResult` with a status
label, never as an exception. Exceptions are for the host's own problems: a backend that
cannot start (:class:`SandboxUnavailable`), a path that leaves the workdir
(:class:`SandboxPathError`), a file operation that failed (:class:`SandboxError`).

File operations run *inside* the sandbox (``cat``, ``tar``), so they see exactly what the
sandboxed code sees: a symlink planted by that code can never make the host read or write
one of its own files.
"""

from __future__ import annotations

import atexit
import io
import os
import shutil
import signal
import tarfile
import tempfile
import weakref
from abc import ABC, abstractmethod
from dataclasses import dataclass, fields
from pathlib import Path, PurePosixPath

MiB = 1024 * 1024

# One word per way a command can end; the first that applies wins (see classify()).
STATUSES = ("ok", "nonzero", "timeout", "cpu_limit", "oom", "disk_full", "output_limit", "not_found", "killed")


class SandboxError(RuntimeError):
    """A sandbox operation failed on the host's side (not a result of the command)."""


class SandboxUnavailable(SandboxError):
    """The requested backend cannot run here; the message says what is missing."""

    one_line = True  # what this machine lacks: an episode records the message, not a traceback


class SandboxPathError(ValueError):
    """A path given to a file operation is absolute or leaves the sandbox workdir."""


@dataclass(frozen=True)
class Limits:
    """Resource limits for every command a sandbox runs (per command unless noted)."""

    memory_bytes: int = 512 * MiB  # local: address space (RLIMIT_AS); docker: cgroup memory
    cpu_seconds: int = 60  # CPU time per process (RLIMIT_CPU)
    cpus: float = 1.0  # docker only: CPU share of the container
    processes: int = 64  # local: RLIMIT_NPROC of the sandbox's user; docker: pids cgroup
    file_size_bytes: int = 64 * MiB  # largest file a process may write (RLIMIT_FSIZE)
    disk_bytes: int = 256 * MiB  # size of the workdir (a tmpfs) for the whole sandbox
    open_files: int = 256  # RLIMIT_NOFILE
    output_bytes: int = 1 * MiB  # per stream; beyond it the command is killed

    def __post_init__(self) -> None:
        for f in fields(self):
            value = getattr(self, f.name)
            if not isinstance(value, int | float) or isinstance(value, bool) or value <= 0:
                raise ValueError(f"Limits.{f.name} must be a positive number, got {value!r}")


@dataclass(frozen=True)
class ExecResult:
    """What one command did. ``duration`` is wall time: a measurement, never env semantics."""

    exit_code: int
    stdout: bytes
    stderr: bytes
    stdout_truncated: bool
    stderr_truncated: bool
    duration: float
    status: str

    @property
    def ok(self) -> bool:
        return self.status == "ok"


def classify(exit_code: int, *, timed_out: bool = False, output_limited: bool = False,
             oom: bool = False, disk_full: bool = False) -> str:
    """The status label of a finished command. ``exit_code`` uses the shell's 128+signal form."""
    if timed_out:
        return "timeout"
    if output_limited:
        return "output_limit"
    if oom:
        return "oom"
    if exit_code == 128 + signal.SIGXCPU:
        return "cpu_limit"
    if disk_full or exit_code == 128 + signal.SIGXFSZ:
        return "disk_full"
    if exit_code == 0:
        return "ok"
    if exit_code == 127:  # the shell's "command not found"
        return "not_found"
    if 128 < exit_code <= 128 + 64:
        return "killed"
    return "nonzero"


_OOM_MARKERS = (b"MemoryError", b"Cannot allocate memory", b"std::bad_alloc", b"out of memory")
_DISK_MARKERS = (b"No space left on device", b"File too large")


def stderr_says_oom(stderr: bytes) -> bool:
    """An allocation failure reported by the program itself (a limit on address space)."""
    return any(marker in stderr[-4096:] for marker in _OOM_MARKERS)


def stderr_says_disk_full(stderr: bytes) -> bool:
    """ENOSPC or EFBIG reported by the program itself."""
    return any(marker in stderr[-4096:] for marker in _DISK_MARKERS)


_DENIED_MARKERS = (b"Permission denied", b"Read-only file system", b"Operation not permitted")


def failed_on_full_disk(stderr: bytes, disk_full_now: bool) -> bool:
    """Whether a failed command failed for lack of space: the program says so, or the workdir is
    full and the program does not say it was refused (a permission error on a full workdir is a
    permission error, not ``disk_full``)."""
    if stderr_says_disk_full(stderr):
        return True
    return disk_full_now and not any(marker in stderr[-4096:] for marker in _DENIED_MARKERS)


def sandbox_path(path: str | os.PathLike[str]) -> str:
    """Check a path relative to the workdir; return it in POSIX form."""
    text = os.fspath(path)
    if not text or "\0" in text:
        raise SandboxPathError(f"sandbox path {text!r} is empty or contains NUL")
    pure = PurePosixPath(text)
    if pure.is_absolute() or ".." in pure.parts:
        raise SandboxPathError(f"sandbox path {text!r} must be relative to the workdir, without '..'")
    return str(pure)


def _tar_of(host_path: Path) -> bytes:
    """A tar of ``host_path``'s contents (a directory) or of the file itself, owner-neutral."""
    buf = io.BytesIO()

    def neutral(info: tarfile.TarInfo) -> tarfile.TarInfo:
        info.uid = info.gid = 0
        info.uname = info.gname = ""
        info.mode &= 0o777
        return info

    with tarfile.open(fileobj=buf, mode="w") as tar:
        tar.add(host_path, arcname=".", filter=neutral)
    return buf.getvalue()


_LIVE: weakref.WeakSet[Sandbox] = weakref.WeakSet()


@atexit.register
def _cleanup_live_sandboxes() -> None:
    """An interpreter that exits normally leaves no sandbox behind, even after an exception."""
    for sandbox in list(_LIVE):
        try:
            sandbox.cleanup()
        except Exception:
            pass


class Sandbox(ABC):
    """One isolated workdir; commands run in it one at a time. Use as a context manager."""

    backend: str = ""
    python: str = "python3"  # the interpreter to call inside the sandbox (pytest importable)
    workdir: str = "/sandbox"  # the workdir's path as commands inside see it

    def __init__(self, limits: Limits | None = None) -> None:
        self.limits = limits or Limits()
        self.closed = False
        _LIVE.add(self)

    # -- the backend's part ------------------------------------------------------------
    @abstractmethod
    def _run(self, argv: list[str], timeout: float, stdin: bytes | None, output_bytes: int) -> ExecResult:
        """Run ``argv`` in the workdir; contain it; leave no process behind."""

    @abstractmethod
    def _release(self) -> None:
        """Free everything the sandbox holds (processes, containers, mounts, directories)."""

    # -- the protocol ------------------------------------------------------------------
    def exec(self, cmd: list[str] | str, timeout: float = 30, stdin: bytes | None = None) -> ExecResult:
        """Run ``cmd`` (an argv list, or a string for ``/bin/sh -c``) in the workdir."""
        if self.closed:
            raise SandboxError(f"{self.backend} sandbox is already cleaned up")
        if isinstance(cmd, str):
            argv = ["/bin/sh", "-c", cmd]
        elif cmd and all(isinstance(a, str) for a in cmd):
            argv = list(cmd)
        else:
            raise TypeError("cmd must be a non-empty list of str, or a str")
        if not timeout > 0:
            raise ValueError(f"timeout must be positive, got {timeout!r}")
        return self._run(argv, float(timeout), stdin, self.limits.output_bytes)

    def write_file(self, path: str, data: bytes | str) -> None:
        rel = sandbox_path(path)
        payload = data.encode() if isinstance(data, str) else bytes(data)
        script = 'mkdir -p -- "$(dirname -- "$1")" && cat > "$1"'
        self._check(self._run(["/bin/sh", "-c", script, "sh", rel], 60, payload, 64 * 1024), "write_file", rel)

    def read_file(self, path: str) -> bytes:
        rel = sandbox_path(path)
        result = self._run(["cat", "--", rel], 60, None, self.limits.disk_bytes)
        if result.exit_code != 0 and b"No such file" in result.stderr:
            raise FileNotFoundError(f"{rel} does not exist in the sandbox")
        self._check(result, "read_file", rel)
        return result.stdout

    def copy_in(self, host_path: str | os.PathLike[str], dest: str) -> None:
        """Copy a host file or directory (its contents) to ``dest`` in the workdir."""
        source = Path(host_path)
        rel = sandbox_path(dest)
        if source.is_file():
            self.write_file(rel, source.read_bytes())
            if os.access(source, os.X_OK):
                self._check(self._run(["chmod", "+x", "--", rel], 30, None, 64 * 1024), "copy_in", rel)
            return
        if not source.is_dir():
            raise FileNotFoundError(f"copy_in: {source} is neither a file nor a directory")
        script = 'mkdir -p -- "$1" && tar -x --no-same-owner -C "$1"'
        self._check(self._run(["/bin/sh", "-c", script, "sh", rel], 120, _tar_of(source), 64 * 1024), "copy_in", rel)

    def copy_out(self, src: str, host_dest: str | os.PathLike[str]) -> None:
        """Copy ``src`` (a file or directory in the workdir) to ``host_dest`` on the host."""
        rel = sandbox_path(src)
        parent, name = str(PurePosixPath(rel).parent), PurePosixPath(rel).name
        result = self._run(["tar", "-c", "-C", parent, "--", name], 120, None, self.limits.disk_bytes)
        if result.exit_code != 0 and b"No such file" in result.stderr:
            raise FileNotFoundError(f"{rel} does not exist in the sandbox")
        self._check(result, "copy_out", rel)
        dest = Path(host_dest)
        with tempfile.TemporaryDirectory(dir=dest.parent if dest.parent.exists() else None) as tmp:
            with tarfile.open(fileobj=io.BytesIO(result.stdout)) as tar:
                tar.extractall(tmp, filter="data")  # no absolute paths, no links out, no devices
            shutil.move(os.path.join(tmp, name), dest)

    def cleanup(self) -> None:
        """Kill whatever still runs and remove the workdir. Safe to call twice."""
        if self.closed:
            return
        self.closed = True
        self._release()

    def __enter__(self) -> Sandbox:
        return self

    def __exit__(self, *exc: object) -> None:
        self.cleanup()

    @staticmethod
    def _check(result: ExecResult, what: str, path: str) -> None:
        if result.exit_code != 0:
            detail = result.stderr.decode(errors="replace").strip()[-300:]
            raise SandboxError(f"{what} {path!r} failed ({result.status}): {detail}")
