"""The local backend: bubblewrap namespaces, resource limits and a private workdir.

Each sandbox is one bubblewrap (``bwrap``) session in its own user, PID, network and UTS
namespaces, inside the mount and IPC namespaces of the sandbox's holder (bounds.py): the
workdir is a tmpfs of ``disk_bytes`` that exists only there, and System V shared memory and
message queues are bounded by ``memory_bytes``. Its filesystem is built from an allowlist:
read-only ``/usr``, ``/etc``, the host Python (the venv and its base interpreter, so
``sandbox.python`` has pytest) and this package's directory, a ``/proc`` of its own PID
namespace (``/proc/sys`` read-only), a minimal ``/dev``, a private ``/tmp`` and the workdir at
``/sandbox``. The network namespace has only a loopback interface. /dev/shm and /tmp are tmpfs
mounts of at most ``disk_bytes`` each, the root and /dev are read-only and nested user
namespaces are disabled (``--disable-userns``), so no writable mount is unbounded and none can
be made. PID 1 is the exec server (session_server.py): a command costs a fork and exec instead
of new namespaces, and after each command the server kills and reaps everything else, so
background processes never outlive their command. If the server stops answering, the host
kills the session (the kernel then kills its whole PID namespace) and the next command starts
a new one in the same holder.

Run by root, commands do not run as root: each sandbox gets its own unused host uid, so
RLIMIT_NPROC caps exactly its processes and host files are seen as by a stranger; the holder
also stages read-only views of host paths that uid could not reach (a Python under /root).
Run by an ordinary user, the sandbox runs as that user (uid 1000 inside) and the holder is
that user's own user namespace; where the machine refuses one, the sandbox does not start.
"""

from __future__ import annotations

import os
import random
import re
import select
import shutil
import signal
import stat
import subprocess
import sys
import sysconfig
import time
from pathlib import Path

from agentbed.sandbox.base import (
    ExecResult,
    Limits,
    Sandbox,
    SandboxUnavailable,
    classify,
    failed_on_full_disk,
    stderr_says_oom,
)
from agentbed.sandbox.bounds import bounds_refused, holder_argv, start_holder
from agentbed.sandbox.capture import ReplyReader, pipe_chunks
from agentbed.sandbox.session import GRACE, encode_request, read_reply, wait_ready

INSIDE_UID = 1000
WORKDIR = "/sandbox"
OWNER_VAR = "AGENTBED_SANDBOX_OWNER"  # marks our host-side processes so prune can find orphans
UID_RANGE = (1_000_000, 2_000_000)  # per-sandbox host uids when run by root
WORKDIR_PREFIX = "agentbed-sbx-"
PACKAGE_DIR = os.path.dirname(os.path.realpath(__file__))  # the exec server runs from here, read-only
_SYSTEM_DIRS = ("/usr", "/etc")
_MERGED_USR = ("/bin", "/sbin", "/lib", "/lib32", "/lib64", "/libx32")
_PATH = "/usr/local/bin:/usr/bin:/bin"


def sandbox_path() -> str:
    """PATH inside: the scripts folder of the Python the sandbox runs (``sb.python``: the venv's
    ``bin``), then the system's. What that Python imports, its commands run: transitions' tests
    ``import mypy`` and then run ``mypy``, which without this was not found (issue 55)."""
    scripts = sysconfig.get_path("scripts")
    return _PATH if not scripts or scripts in _PATH.split(os.pathsep) else os.pathsep.join((scripts, _PATH))

# Docker's defaults refuse all three: its seccomp profile the namespace system calls, its masked
# /proc paths a fresh /proc in a new PID namespace, and a root holder's mount namespace needs SYS_ADMIN.
NAMESPACE_HINT = ("this machine does not let the local sandbox make namespaces; in a Docker container, run it "
                  "with --cap-add SYS_ADMIN --security-opt seccomp=unconfined --security-opt systempaths=unconfined"
                  " (see docs/sandbox.md)")


def bwrap_path() -> str | None:
    return shutil.which("bwrap")


def namespaces_refused() -> str | None:
    """None when this machine lets the sandbox make its namespaces and bound its workdir and
    System V IPC, else why not. A probe of a few milliseconds: bubblewrap's namespaces and
    /proc, then the holder's steps (bounds.py)."""
    bwrap = bwrap_path()
    argv = [bwrap or "bwrap", "--unshare-user", "--unshare-pid", "--unshare-net", "--ro-bind", "/", "/",
            "--proc", "/proc", "--dev", "/dev", "true"]
    try:
        done = subprocess.run(argv, capture_output=True, timeout=30)
    except (OSError, subprocess.TimeoutExpired) as exc:
        return f"{NAMESPACE_HINT} ({os.path.basename(argv[0])}: {exc})"
    if done.returncode != 0:
        said = done.stderr.decode(errors="replace").strip().splitlines()
        return f"{NAMESPACE_HINT} ({os.path.basename(argv[0])}: {said[-1][:200] if said else 'failed'})"
    return bounds_refused(os.geteuid() == 0)


def python_roots() -> list[str]:
    """Host directories the running Python needs (venv and base install), outside /usr."""
    candidates = {os.path.realpath(p) for p in (sys.prefix, sys.base_prefix, sys.exec_prefix, sys.base_exec_prefix)}
    candidates.add(os.path.abspath(sys.prefix))
    roots: list[str] = []
    for path in sorted(candidates, key=len):
        if any(path == r or path.startswith(r.rstrip("/") + "/") for r in (*_SYSTEM_DIRS, *roots)):
            continue
        roots.append(path)
    return roots


def count_tasks(uid: int) -> int:
    """Threads owned by ``uid`` (RLIMIT_NPROC counts threads of the real uid)."""
    total = 0
    for entry in os.scandir("/proc"):
        if not entry.name.isdigit():
            continue
        try:
            with open(f"/proc/{entry.name}/status", "rb") as fh:
                status = fh.read()
        except OSError:
            continue
        fields = dict(line.split(b":", 1) for line in status.splitlines() if b":" in line)
        if int(fields.get(b"Uid", b"-1 0").split()[0]) == uid:
            total += int(fields.get(b"Threads", b"1").strip() or 1)
    return total


def kill_uid(uid: int) -> int:
    """SIGKILL every process whose real uid is ``uid``; return how many were signalled."""
    killed = 0
    for entry in os.scandir("/proc"):
        if not entry.name.isdigit():
            continue
        try:
            if os.stat(f"/proc/{entry.name}").st_uid == uid:
                os.kill(int(entry.name), signal.SIGKILL)
                killed += 1
        except (OSError, ProcessLookupError):
            continue
    return killed


class LocalSandbox(Sandbox):
    backend = "local"
    workdir = WORKDIR

    def __init__(self, limits: Limits | None = None) -> None:
        super().__init__(limits)
        bwrap = bwrap_path()
        if bwrap is None:
            raise SandboxUnavailable("bubblewrap is not installed (apt-get install bubblewrap)")
        self.python = sys.executable
        self.as_root = os.geteuid() == 0
        self._holder: subprocess.Popen[bytes] | None = None
        self._session: _Session | None = None
        self._env = {OWNER_VAR: str(os.getpid()), "PATH": "/usr/sbin:/usr/bin:/sbin:/bin"}
        roots = python_roots()
        if not any(PACKAGE_DIR == r or PACKAGE_DIR.startswith(r + "/") for r in roots):
            roots.append(PACKAGE_DIR)
        if self.as_root:
            self.uid = random.SystemRandom().randrange(*UID_RANGE)
            holder = start_holder(holder_argv(True, "hold", self.limits, self.uid, roots), self._env, True)
            sources = {root: f"/mnt/ro{i}" for i, root in enumerate(roots)}
            # the holder's namespaces belong to the host's root: the sandbox's uid cannot change them
            launcher = ["nsenter", f"--mount=/proc/{holder.pid}/ns/mnt", f"--ipc=/proc/{holder.pid}/ns/ipc",
                        f"--setuid={self.uid}", f"--setgid={self.uid}", "--", bwrap]
            self._nproc = self.limits.processes + 2  # + bubblewrap's two processes
        else:
            self.uid = os.getuid()
            holder = start_holder(holder_argv(False, "hold", self.limits), self._env, False)
            sources = {root: root for root in roots}
            # this user is root of the holder's user namespace; bubblewrap then drops every capability
            launcher = ["nsenter", "--preserve-credentials", f"--user=/proc/{holder.pid}/ns/user",
                        f"--mount=/proc/{holder.pid}/ns/mnt", f"--ipc=/proc/{holder.pid}/ns/ipc", "--", bwrap]
            # RLIMIT_NPROC counts all of this user's threads, so leave room for those running now.
            self._nproc = count_tasks(self.uid) + self.limits.processes + 2
        self._holder = holder
        self._prefix = self._prlimit() + launcher + self._bwrap_args(sources, "/mnt/work")
        try:
            self._start_session()
        except SandboxUnavailable:
            self.cleanup()
            raise

    # -- set-up ------------------------------------------------------------------------
    def _bwrap_args(self, sources: dict[str, str], work_source: str) -> list[str]:
        # No --unshare-ipc: the holder's IPC namespace, with its System V limits, is the sandbox's.
        # --cap-drop ALL: an ordinary user enters bubblewrap as root of the holder's user namespace.
        args = ["--unshare-user", "--unshare-pid", "--unshare-net", "--unshare-uts", "--unshare-cgroup-try",
                "--cap-drop", "ALL", "--uid", str(INSIDE_UID), "--gid", str(INSIDE_UID),
                "--hostname", "sandbox", "--as-pid-1", "--die-with-parent", "--new-session", "--clearenv",
                "--setenv", "PATH", sandbox_path(), "--setenv", "HOME", WORKDIR, "--setenv", "TMPDIR", "/tmp",
                "--setenv", "LANG", "C.UTF-8", "--setenv", "USER", "sandbox"]
        for path in _SYSTEM_DIRS:
            args += ["--ro-bind", path, path]
        for path in _MERGED_USR:
            if os.path.islink(path):
                args += ["--symlink", os.readlink(path), path]
            elif os.path.isdir(path):
                args += ["--ro-bind", path, path]
        # Every writable mount is a tmpfs of at most disk_bytes; bubblewrap's own (the new root
        # and /dev, which would take up to half the host's memory) are made read-only at the end.
        disk = str(self.limits.disk_bytes)
        # /proc/sys read-only: an ordinary user's sandbox has that user's uid, which may write the
        # sysctls of the holder's IPC namespace (bubblewrap leaves them writable).
        args += ["--proc", "/proc", "--ro-bind", "/proc/sys", "/proc/sys", "--dev", "/dev", "--size", disk,
                 "--tmpfs", "/dev/shm",
                 "--size", disk, "--tmpfs", "/tmp"]
        for target, source in sources.items():  # after /tmp: a later mount covers an earlier one
            args += ["--ro-bind", source, target]
        # --disable-userns: no nested user namespace, so no `unshare -Urm` and a tmpfs of one's own
        return args + ["--bind", work_source, WORKDIR, "--remount-ro", "/", "--remount-ro", "/dev",
                       "--disable-userns", "--chdir", WORKDIR]

    def _prlimit(self) -> list[str]:
        """Resource limits, applied by util-linux prlimit before the launcher (a Python
        preexec_fn would cost a full fork of this process on every command)."""
        lim = self.limits
        cpu = int(lim.cpu_seconds)
        return ["prlimit", f"--cpu={cpu}:{cpu + 1}", f"--as={lim.memory_bytes}", f"--nproc={self._nproc}",
                f"--fsize={lim.file_size_bytes}", f"--nofile={lim.open_files}", "--core=0", "--"]

    # -- running -----------------------------------------------------------------------
    def _start_session(self) -> None:
        """Start bubblewrap with the exec server as its PID 1 (see session_server.py)."""
        info_read, info_write = os.pipe()  # bubblewrap writes its init's host pid here
        try:
            proc = subprocess.Popen(self._prefix + ["--info-fd", str(info_write), "--", self.python, "-I", "-S",
                                                    os.path.join(PACKAGE_DIR, "session_server.py")],
                                    stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                                    env=self._env, start_new_session=True, pass_fds=(info_write,))
        finally:
            os.close(info_write)
        session = _Session(proc, info_read)
        if not wait_ready(session.replies, time.monotonic() + 60):
            exited = proc.poll() is not None  # then its stderr is complete and safe to read
            detail = proc.stderr.read().decode(errors="replace") if exited and proc.stderr else ""
            session.stop()
            detail = detail.strip()[-300:] or "no answer"
            hint = f": {NAMESPACE_HINT}" if "namespace" in detail or "not permitted" in detail else ""
            raise SandboxUnavailable(f"bubblewrap could not start a sandbox ({detail}){hint}")
        self._session = session

    def _run(self, argv: list[str], timeout: float, stdin: bytes | None, output_bytes: int) -> ExecResult:
        start = time.monotonic()
        if self._session is None or self._session.proc.poll() is not None:
            self._start_session()  # the previous one was killed (timeout) or died
        session = self._session
        assert session is not None and session.proc.stdin is not None
        deadline = start + timeout + GRACE
        try:
            session.proc.stdin.write(encode_request(argv, timeout, stdin, output_bytes, WORKDIR))
            session.proc.stdin.flush()
            reply = read_reply(session.replies, deadline)
        except (EOFError, BrokenPipeError):
            reply = None
        if reply is None:  # the server died or stopped answering: end the session
            self._session = None
            session.stop()
            status = "timeout" if time.monotonic() >= deadline else "killed"
            return ExecResult(137, b"", b"", False, False, time.monotonic() - start, status)
        failed = reply.code != 0 and not reply.reason
        oom = failed and stderr_says_oom(reply.stderr)
        disk = failed and failed_on_full_disk(reply.stderr, self._workdir_full())
        status = classify(reply.code, timed_out=reply.reason == "timeout",
                          output_limited=reply.reason == "output_limit", oom=oom, disk_full=disk)
        return ExecResult(reply.code, reply.stdout, reply.stderr, reply.stdout_truncated, reply.stderr_truncated,
                          time.monotonic() - start, status)

    def _workdir_full(self) -> bool:
        if self._holder is None:
            return False
        try:
            st = os.statvfs(f"/proc/{self._holder.pid}/root/mnt/work")
        except OSError:
            return False
        return st.f_bavail == 0

    # -- teardown ----------------------------------------------------------------------
    def _release(self) -> None:
        if self._session is not None:
            self._session.stop()
            self._session = None
        if self.as_root:
            kill_uid(self.uid)
        if self._holder is not None:
            _stop(self._holder)  # its namespaces go with it: the workdir tmpfs, System V segments and queues
            self._holder = None


class _Session:
    """A running bubblewrap whose PID 1 is the exec server."""

    def __init__(self, proc: subprocess.Popen[bytes], info_fd: int) -> None:
        self.proc = proc
        self.info_fd = info_fd
        self.init_pid = _init_pid(info_fd)  # the exec server's host pid
        assert proc.stdout is not None
        self.replies = ReplyReader(pipe_chunks(proc.stdout.fileno()))

    def stop(self) -> None:
        _stop(self.proc, self.info_fd, self.init_pid)


def _stop(proc: subprocess.Popen[bytes], info_fd: int | None = None, init_pid: int | None = None) -> None:
    """End a launcher and reap it. If it still runs, SIGKILL bubblewrap's init (its host pid
    is on ``info_fd``): the kernel then kills the whole PID namespace and bubblewrap reaps
    its init, so no zombie is left to the host's init. The process group is the fallback."""
    try:
        if proc.poll() is None:
            if init_pid is None and info_fd is not None:
                init_pid = _init_pid(info_fd)
            if init_pid is not None:
                try:
                    os.kill(init_pid, signal.SIGKILL)
                except ProcessLookupError:
                    pass
            try:
                proc.wait(timeout=5 if init_pid is not None else 0)
            except subprocess.TimeoutExpired:
                try:
                    os.killpg(proc.pid, signal.SIGKILL)
                except ProcessLookupError:
                    pass
                proc.wait()
    finally:
        for stream in (proc.stdin, proc.stdout, proc.stderr):
            if stream is not None and not stream.closed:
                stream.close()
        if info_fd is not None:
            os.close(info_fd)


def _init_pid(info_fd: int) -> int | None:
    """bubblewrap's ``--info-fd`` JSON names its init's host pid ("child-pid")."""
    ready, _, _ = select.select([info_fd], [], [], 1.0)
    if not ready:
        return None
    found = re.search(rb'"child-pid":\s*(\d+)', os.read(info_fd, 4096))
    return int(found.group(1)) if found else None


def remove_tree(path: str) -> None:
    """rmtree that also removes what the sandbox made read-only."""

    def make_writable(func, target, _exc):  # shutil's onexc signature
        try:
            os.chmod(os.path.dirname(target), stat.S_IRWXU)
            os.chmod(target, stat.S_IRWXU)
        except OSError:
            pass
        func(target)

    if Path(path).exists():
        shutil.rmtree(path, onerror=make_writable)
