"""The Docker backend: one hardened, warm container per sandbox, commands by ``docker exec``.

The container (image built by ``docker/build``) has no network, memory/CPU/pids limits, a
read-only root with tmpfs ``/sandbox`` (the workdir) and ``/tmp``, runs as uid 1000 with every
capability dropped and no-new-privileges, and carries the label ``agentbed.sandbox`` so
``agentbed sandbox prune`` can remove what a crash left behind. PID 1 is a tiny reaper, which
``kill -1`` cannot touch: each command runs under a shell that kills every other process of
the sandbox user when it ends, so background processes never outlive their command.
"""

from __future__ import annotations

import os
import re
import select
import signal
import socket
import struct
import time
from typing import Any

from agentbed.sandbox.base import (
    ExecResult,
    Limits,
    Sandbox,
    SandboxError,
    SandboxUnavailable,
    classify,
    stderr_says_disk_full,
)
from agentbed.sandbox.capture import CHUNK, CappedBuffer

DEFAULT_IMAGE = "agentbed-sandbox:py311"
LABEL = "agentbed.sandbox"
OWNER_LABEL = "agentbed.sandbox.owner"  # "<hostname>:<pid>" of the process that started it
WORKDIR = "/sandbox"
USER = "1000:1000"
# PID 1: reap orphans (they are re-parented here) and otherwise sleep. It ignores every
# signal code inside could send it (Python's own SIGINT handler would let `kill -INT 1` end it).
_REAPER = ("import os, signal\n"
           "for s in (signal.SIGINT, signal.SIGTERM, signal.SIGHUP, signal.SIGQUIT, signal.SIGUSR1, signal.SIGUSR2):\n"
           "    signal.signal(s, signal.SIG_IGN)\n"
           "def reap(*_):\n"
           "    try:\n"
           "        while os.waitpid(-1, os.WNOHANG)[0] > 0: pass\n"
           "    except ChildProcessError: pass\n"
           "signal.signal(signal.SIGCHLD, reap)\n"
           "while True: signal.pause()\n")
# Run the command, then kill every other process of the sandbox user (not PID 1, not itself).
_WRAPPER = '"$@"; rc=$?; kill -9 -1 2>/dev/null; exit $rc'
_KILL_ALL = ["/bin/sh", "-c", "kill -9 -1"]
_PROBE = ("cat /sys/fs/cgroup/memory.events /sys/fs/cgroup/memory/memory.oom_control 2>/dev/null; "
          f"stat -f -c 'free_blocks %a' {WORKDIR}")


def default_image() -> str:
    return os.environ.get("AGENTBED_SANDBOX_IMAGE", DEFAULT_IMAGE)


def owner_tag() -> str:
    return f"{socket.gethostname()}:{os.getpid()}"


def connect(timeout: float = 10) -> Any:
    """A docker SDK client that has answered a ping, or SandboxUnavailable saying why."""
    try:
        import docker
    except ImportError as exc:  # pragma: no cover - docker is a core dependency
        raise SandboxUnavailable("the docker Python package is missing (pip install docker)") from exc
    try:
        client = docker.from_env(timeout=timeout)
        client.ping()
    except Exception as exc:
        raise SandboxUnavailable(f"no Docker engine answers ({type(exc).__name__}); "
                                 "run scripts/setup-docker as root to install and start one") from exc
    return client


def image_present(client: Any, image: str) -> bool:
    try:
        client.images.get(image)
    except Exception:
        return False
    return True


class DockerSandbox(Sandbox):
    backend = "docker"
    python = "python3"
    workdir = WORKDIR

    def __init__(self, limits: Limits | None = None, image: str | None = None, client: Any = None) -> None:
        super().__init__(limits)
        from docker.types import Ulimit

        self.image = image or default_image()
        self.client = client or connect()
        if not image_present(self.client, self.image):
            raise SandboxUnavailable(f"the sandbox image {self.image} is not built (run docker/build)")
        lim = self.limits
        cpu = int(lim.cpu_seconds)
        tmpfs_opts = f"rw,exec,nosuid,nodev,size={lim.disk_bytes}"
        self.container = self.client.containers.run(
            self.image, ["python3", "-c", _REAPER], detach=True, user=USER, working_dir=WORKDIR,
            network_mode="none", read_only=True, cap_drop=["ALL"], security_opt=["no-new-privileges"],
            mem_limit=lim.memory_bytes, memswap_limit=lim.memory_bytes, nano_cpus=int(lim.cpus * 1e9),
            pids_limit=lim.processes + 1, hostname="sandbox",
            tmpfs={WORKDIR: f"{tmpfs_opts},mode=0700,uid=1000,gid=1000", "/tmp": f"{tmpfs_opts},mode=1777"},
            ulimits=[Ulimit(name="cpu", soft=cpu, hard=cpu + 1),
                     Ulimit(name="fsize", soft=lim.file_size_bytes, hard=lim.file_size_bytes),
                     Ulimit(name="nofile", soft=lim.open_files, hard=lim.open_files),
                     Ulimit(name="core", soft=0, hard=0)],
            environment={"HOME": WORKDIR, "TMPDIR": "/tmp", "LANG": "C.UTF-8",
                         "PATH": "/usr/local/bin:/usr/bin:/bin"},
            labels={LABEL: "1", OWNER_LABEL: owner_tag()})
        self.id = self.container.id
        try:
            self.container.reload()
            self._init_pid = int(self.container.attrs["State"]["Pid"])
            self._procs_file = _cgroup_procs_file(self._init_pid)
            self._oom_baseline = self._probe()[0]
        except Exception:
            self.cleanup()
            raise

    # -- running -----------------------------------------------------------------------
    def _run(self, argv: list[str], timeout: float, stdin: bytes | None, output_bytes: int) -> ExecResult:
        api = self.client.api
        out, err = CappedBuffer(output_bytes), CappedBuffer(output_bytes)
        start = time.monotonic()
        exec_id = api.exec_create(self.id, ["/bin/sh", "-c", _WRAPPER, "sh", *argv], stdin=stdin is not None,
                                  user=USER, workdir=WORKDIR)["Id"]
        conn = api.exec_start(exec_id, socket=True)
        raw = getattr(conn, "_sock", conn)
        try:
            reason = _pump_socket(raw, stdin, start + timeout, out, err)
        except BaseException:
            self._kill_all()
            raise
        finally:
            _hang_up(raw, conn)
        if reason:
            self._kill_all()
        code = self._exit_code(exec_id)
        duration = time.monotonic() - start
        oom = disk = False
        stderr = err.value()
        if code != 0 and not reason:
            oom_kills, free_blocks = self._probe()
            oom = oom_kills > self._oom_baseline
            self._oom_baseline = oom_kills
            disk = free_blocks == 0 or stderr_says_disk_full(stderr)
        status = classify(code, timed_out=reason == "timeout", output_limited=reason == "output_limit",
                          oom=oom, disk_full=disk)
        return ExecResult(code, out.value(), stderr, out.truncated, err.truncated, duration, status)

    def _exit_code(self, exec_id: str) -> int:
        for _ in range(200):
            info = self.client.api.exec_inspect(exec_id)
            if not info.get("Running") and info.get("ExitCode") is not None:
                return int(info["ExitCode"])
            time.sleep(0.01)
        raise SandboxError(f"docker exec {exec_id[:12]} did not report an exit code")

    def _kill_all(self) -> None:
        """SIGKILL every process in the container but PID 1 (docker exec has no kill).

        With the engine on this host (as root), from the host: kill every process listed in
        the container's cgroup, round after round until none is left (a fork bomb that holds
        every pid leaves no room for a fresh exec). Otherwise by ``kill -9 -1`` inside."""
        if self._procs_file is None:
            exec_id = self.client.api.exec_create(self.id, _KILL_ALL, user=USER)["Id"]
            self.client.api.exec_start(exec_id, detach=True)
            self._exit_code(exec_id)
            return
        for _ in range(500):
            with open(self._procs_file) as fh:
                others = [int(pid) for pid in fh.read().split() if int(pid) != self._init_pid]
            if not others:
                return
            for pid in others:
                try:
                    os.kill(pid, signal.SIGKILL)
                except ProcessLookupError:
                    pass
            time.sleep(0.002)
        raise SandboxError(f"could not kill the processes of container {self.id[:12]}")

    def _probe(self) -> tuple[int, int]:
        """(OOM kills so far in the container's memory cgroup, free blocks of the workdir)."""
        exec_id = self.client.api.exec_create(self.id, ["/bin/sh", "-c", _PROBE], user=USER)["Id"]
        text = self.client.api.exec_start(exec_id).decode(errors="replace")
        kills = re.search(r"^oom_kill (\d+)", text, re.M)
        free = re.search(r"^free_blocks (\d+)", text, re.M)
        return (int(kills.group(1)) if kills else 0), (int(free.group(1)) if free else -1)

    # -- teardown ----------------------------------------------------------------------
    def _release(self) -> None:
        try:
            self.container.remove(force=True)
        except Exception as exc:
            if "No such container" not in str(exc) and "is already in progress" not in str(exc):
                raise SandboxError(f"could not remove container {self.id[:12]}: {exc}") from exc


def _cgroup_procs_file(host_pid: int) -> str | None:
    """The cgroup.procs listing every process of the container whose init is ``host_pid``,
    when this process can see and signal them (root, engine on this host); else None."""
    if os.geteuid() != 0:
        return None
    try:
        with open(f"/proc/{host_pid}/cgroup") as fh:
            lines = fh.read().splitlines()
    except OSError:
        return None
    for line in lines:
        _, controllers, path = line.split(":", 2)
        if "pids" in controllers.split(","):
            candidate = f"/sys/fs/cgroup/pids{path}/cgroup.procs"
        elif controllers == "" and len(lines) == 1:  # cgroup v2
            candidate = f"/sys/fs/cgroup{path}/cgroup.procs"
        else:
            continue
        if os.path.exists(candidate):
            return candidate
    return None


def _hang_up(raw: socket.socket, conn: Any) -> None:
    """Really close the exec connection: other objects share its fd, so close() alone would
    leave the daemon blocked writing a flood of output into it."""
    try:
        raw.shutdown(socket.SHUT_RDWR)
    except OSError:
        pass
    raw.close()
    if conn is not raw:
        conn.close()


def _pump_socket(raw: socket.socket, stdin: bytes | None, deadline: float,
                 out: CappedBuffer, err: CappedBuffer) -> str:
    """Demultiplex a docker exec stream (8-byte frame headers) into ``out``/``err``; feed stdin.

    Returns "" at end of stream, "timeout" or "output_limit" (the caller kills the command).
    """
    pending = memoryview(stdin or b"")
    writing = stdin is not None
    if writing and not pending:
        raw.shutdown(socket.SHUT_WR)
        writing = False
    buf = bytearray()
    raw.setblocking(False)
    while True:
        remaining = deadline - time.monotonic()
        if remaining <= 0:
            return "timeout"
        readable, writable, _ = select.select([raw], [raw] if writing else [], [], remaining)
        if writable:
            try:
                pending = pending[raw.send(pending[:CHUNK]):]
            except BlockingIOError:
                pass
            except OSError:
                pending = pending[:0]
            if not pending:
                raw.shutdown(socket.SHUT_WR)
                writing = False
        if not readable:
            continue
        try:
            data = raw.recv(CHUNK)
        except BlockingIOError:
            continue
        if not data:
            return ""
        buf += data
        while len(buf) >= 8:
            kind, size = buf[0], struct.unpack(">I", bytes(buf[4:8]))[0]
            if len(buf) < 8 + size:
                break
            frame, buf = bytes(buf[8:8 + size]), buf[8 + size:]
            if (err if kind == 2 else out).add(frame):
                return "output_limit"
