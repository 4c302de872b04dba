"""The Docker backend: one hardened, warm container per sandbox.

The container (image built by ``docker/build``) has no network, memory/CPU/pids limits, a
read-only root with tmpfs ``/sandbox`` (the workdir) and ``/tmp``, System V limits of its own
IPC namespace set from ``memory_bytes`` (as the local backend's), runs as uid 1000 with every
capability dropped and no-new-privileges, and carries the label ``agentbed.sandbox`` so
``agentbed sandbox prune`` can remove what a crash left behind. Its PID 1 is the same exec
server as the local backend's (session_server.py and capture.py, their source passed in the
container's command, so the container needs nothing of this machine's files and any engine this
process reaches can run it, ``DOCKER_HOST`` included), reached through the container's attached stdin/stdout: a command costs a fork inside the
container rather than a ``docker exec`` (a runc process and three API calls), and after each
command the server kills and reaps every other process in the container.
"""

from __future__ import annotations

import os
import re
import select
import socket
import struct
import time
from pathlib import Path
from typing import Any

from agentbed.sandbox.base import (
    ExecResult,
    Limits,
    Sandbox,
    SandboxError,
    SandboxUnavailable,
    classify,
    failed_on_full_disk,
)
from agentbed.sandbox.bounds import ipc_sysctls
from agentbed.sandbox.capture import CHUNK, CappedBuffer, ReplyReader
from agentbed.sandbox.local import PACKAGE_DIR
from agentbed.sandbox.session import GRACE, encode_request, read_reply, wait_ready

DEFAULT_IMAGE = "agentbed-sandbox:py311"
LABEL = "agentbed.sandbox"
OWNER_LABEL = "agentbed.sandbox.owner"  # "<hostname>:<pid>" of the process that started it
WORKDIR = "/sandbox"
USER = "1000:1000"
SERVER_DIR = "/opt/agentbed-sandbox"  # where the exec server says it is (its source travels in its command)
_PROBE = ("cat /sys/fs/cgroup/memory.events /sys/fs/cgroup/memory/memory.oom_control 2>/dev/null; "
          f"stat -f -c 'free_blocks %a' {WORKDIR}")


def default_image() -> str:
    return os.environ.get("AGENTBED_SANDBOX_IMAGE", DEFAULT_IMAGE)


def server_command() -> list[str]:
    """The exec server as the container's command: its module and capture.py's, as source."""
    package = Path(PACKAGE_DIR)
    boot = ("import sys, types\n"
            f"__file__ = {SERVER_DIR + '/session_server.py'!r}\n"
            "capture = sys.modules['capture'] = types.ModuleType('capture')\n"
            f"exec(compile({(package / 'capture.py').read_text()!r}, 'capture.py', 'exec'), capture.__dict__)\n"
            f"exec(compile({(package / 'session_server.py').read_text()!r}, __file__, 'exec'))\n")
    return ["python3", "-I", "-S", "-c", boot]


def owner_tag() -> str:
    return f"{socket.gethostname()}:{os.getpid()}"


def connect(timeout: float = 10) -> Any:
    """A docker SDK client that has answered a ping, or SandboxUnavailable saying why."""
    try:
        import docker
    except ImportError as exc:  # pragma: no cover - docker is a core dependency
        raise SandboxUnavailable("the docker Python package is missing (pip install docker)") from exc
    try:
        # mypy resolves ``docker`` to the repository's docker/ folder (a namespace package to it)
        client = docker.from_env(timeout=timeout)  # type: ignore[attr-defined]
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
        self.lost: str | None = None  # why the container is gone, once it is
        if not image_present(self.client, self.image):
            raise SandboxUnavailable(f"the sandbox image {self.image} is not built (run docker/build)")
        lim = self.limits
        cpu = int(lim.cpu_seconds)
        tmpfs_opts = f"rw,exec,nosuid,nodev,size={lim.disk_bytes}"
        self.container = self.client.containers.create(
            self.image, server_command(), user=USER,
            working_dir=WORKDIR, stdin_open=True, network_mode="none", read_only=True, cap_drop=["ALL"],
            security_opt=["no-new-privileges"], mem_limit=lim.memory_bytes, memswap_limit=lim.memory_bytes,
            nano_cpus=int(lim.cpus * 1e9), pids_limit=lim.processes + 1, hostname="sandbox",
            shm_size=lim.disk_bytes,  # /dev/shm is a tmpfs too (Docker's default is 64 MiB whatever the limits)
            # System V limits of the container's own IPC namespace (never the host's or another
            # container's), as in the local backend; the memory cgroup also counts touched segments
            ipc_mode="private", sysctls={f"kernel.{name}": str(value) for name, value in ipc_sysctls(lim).items()},
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
            conn = self.client.api.attach_socket(self.id, params={"stdin": 1, "stdout": 1, "stderr": 1,
                                                                  "stream": 1, "logs": 1})
            self._conn = conn
            self._sock: socket.socket = getattr(conn, "_sock", conn)
            self._frames = _Frames(self._sock)
            self.replies = ReplyReader(self._frames.stdout_chunk)
            self.container.start()
            if not wait_ready(self.replies, time.monotonic() + 60):
                raise SandboxUnavailable("the sandbox container's exec server did not start: "
                                         + self._frames.diagnostics())
            self._oom_baseline = self._probe()[0]
        except BaseException:
            self.cleanup()
            raise

    # -- running -----------------------------------------------------------------------
    def _run(self, argv: list[str], timeout: float, stdin: bytes | None, output_bytes: int) -> ExecResult:
        if self.lost:
            raise SandboxError(f"docker sandbox {self.id[:12]} is gone: {self.lost}")
        start = time.monotonic()
        deadline = start + timeout + GRACE
        try:
            self._sock.sendall(encode_request(argv, timeout, stdin, output_bytes, WORKDIR))
            reply = read_reply(self.replies, deadline)
        except (EOFError, OSError):
            reply = None
        if reply is None:
            # The server died or hung. Its workdir was a tmpfs in the container, so the
            # sandbox cannot go on: remove the container; later calls raise SandboxError.
            timed_out = time.monotonic() >= deadline
            self.lost = "its exec server stopped answering" + (" (timeout)" if timed_out else "")
            self._release()
            return ExecResult(137, b"", b"", False, False, time.monotonic() - start,
                              "timeout" if timed_out else "killed")
        oom = disk = False
        if reply.code != 0 and not reply.reason:
            oom_kills, free_blocks = self._probe()
            oom = oom_kills > self._oom_baseline
            self._oom_baseline = oom_kills
            disk = failed_on_full_disk(reply.stderr, free_blocks == 0)
        status = classify(reply.code, timed_out=reply.reason == "timeout",
                          output_limited=reply.reason == "output_limit", oom=oom, disk_full=disk)
        return ExecResult(reply.code, reply.stdout, reply.stderr, reply.stdout_truncated, reply.stderr_truncated,
                          time.monotonic() - start, status)

    def _probe(self) -> tuple[int, int]:
        """(OOM kills so far in the container's memory cgroup, free blocks of the workdir)."""
        result = self._run(["/bin/sh", "-c", _PROBE], 30, None, 64 * 1024)
        text = result.stdout.decode(errors="replace")
        kills = re.search(r"^oom_kill (\d+)", text, re.M)
        free = re.search(r"^free_blocks (\d+)", text, re.M)
        return (int(kills.group(1)) if kills else 0), (int(free.group(1)) if free else -1)

    # -- teardown ----------------------------------------------------------------------
    def _release(self) -> None:
        conn = getattr(self, "_conn", None)
        if conn is not None:
            _hang_up(self._sock, conn)
            self._conn = None
        try:
            self.container.remove(force=True)
        except Exception as exc:
            if "No such container" not in str(exc) and "is already in progress" not in str(exc):
                raise SandboxError(f"could not remove container {self.id[:12]}: {exc}") from exc


class _Frames:
    """Demultiplexes a docker attach stream (8-byte frame headers): the server's stdout
    carries replies; its stderr is kept (capped) to explain a failure."""

    def __init__(self, sock: socket.socket) -> None:
        self.sock = sock
        self.pending = bytearray()
        self.stderr = CappedBuffer(16 * 1024)

    def stdout_chunk(self, deadline: float) -> bytes | None:
        while True:
            out = self._split()
            if out:
                return out
            remaining = deadline - time.monotonic()
            if remaining <= 0 or not select.select([self.sock], [], [], remaining)[0]:
                return None
            data = self.sock.recv(CHUNK)
            if not data:
                raise EOFError("the sandbox container's exec server exited")
            self.pending += data

    def _split(self) -> bytes:
        out = bytearray()
        while len(self.pending) >= 8:
            kind, size = self.pending[0], struct.unpack(">I", bytes(self.pending[4:8]))[0]
            if len(self.pending) < 8 + size:
                break
            payload = bytes(self.pending[8:8 + size])
            del self.pending[:8 + size]
            if kind == 2:
                self.stderr.add(payload)
            else:
                out += payload
        return bytes(out)

    def diagnostics(self) -> str:
        return self.stderr.value().decode(errors="replace").strip()[-300:] or "no answer"


def _hang_up(raw: socket.socket, conn: Any) -> None:
    """Really close the connection: other objects share its fd, so close() alone would not."""
    try:
        raw.shutdown(socket.SHUT_RDWR)
    except OSError:
        pass
    raw.close()
    if conn is not raw:
        conn.close()
