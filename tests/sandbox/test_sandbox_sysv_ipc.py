"""System V IPC is bounded inside both sandboxes, and a local sandbox that cannot bound it (or
its workdir) refuses to start with one line saying what is missing (issue 31).

A detached System V segment stays after its process ends and no per-process limit counts it,
so without a bound of the IPC namespace's own a program can pin memory without end (reviewers
pinned 640 MiB under a 512 MiB limit). The hog here makes 16 MiB segments, touches and detaches
each, three times ``memory_bytes`` in all; the sandbox must hold at most half of
``memory_bytes`` (bounds.ipc_cap), and the host's ``Shmem`` (/proc/meminfo: tmpfs and shared
memory pages) is checked while they are held and after cleanup.
"""

from __future__ import annotations

import os
import stat
import time

import pytest

from agentbed.sandbox import SandboxUnavailable, bounds, local
from agentbed.sandbox.bounds import PAGE, ipc_cap, ipc_sysctls
from agentbed.sandbox.probes import SEGMENT, SYSV_SHM_HOG, sysv_shm_total

from .conftest import TEST_LIMITS, leftovers, require_backend

MiB = 1024 * 1024
SLACK = 48 * MiB  # other processes on a shared host, page tables


def shmem() -> int:
    with open("/proc/meminfo") as fh:
        fields = dict(line.split(":", 1) for line in fh)
    return int(fields["Shmem"].split()[0]) * 1024


def hog(sb, attempt: int):
    return sb.exec([sb.python, "-c", SYSV_SHM_HOG, str(SEGMENT), str(attempt // SEGMENT + 1)], timeout=120)


def test_sysv_shared_memory_stops_at_half_the_memory_limit_and_is_given_back(backend, sandbox, limits):
    cap = ipc_cap(limits)
    assert cap == limits.memory_bytes // 2
    before = shmem()
    result = hog(sandbox, 3 * limits.memory_bytes)
    said = result.stdout.decode().split()
    assert result.exit_code == 3 and said[-3:-1] == ["refused", "28"], result  # ENOSPC from shmget
    held = int(said[-1])
    assert cap - SEGMENT < held <= cap, (held, cap)  # usable up to the bound, never past it
    # The segments outlive their command (detached, nobody attached) and still count.
    assert sysv_shm_total(sandbox) == held
    assert shmem() - before <= cap + SLACK, (before, shmem())
    again = hog(sandbox, 2 * SEGMENT)
    assert again.exit_code == 3 and again.stdout.split()[-1] == b"0", again
    sandbox.cleanup()  # its IPC namespace, with the segments, goes with it
    deadline = time.monotonic() + 15  # the kernel frees a namespace from a work queue
    while shmem() - before > SLACK and time.monotonic() < deadline:
        time.sleep(0.2)
    assert shmem() - before <= SLACK, "the sandbox's System V segments were not given back"


def test_the_sandbox_cannot_raise_its_system_v_limits(sandbox, limits):
    wanted = ipc_sysctls(limits)
    for name in ("shmall", "shmmax", "msgmni", "msgmnb", "shmmni"):
        attempt = sandbox.exec(f"echo 4000000000 > /proc/sys/kernel/{name}")
        assert attempt.exit_code != 0, (name, attempt)
    shown = sandbox.exec("cat /proc/sys/kernel/shmall /proc/sys/kernel/shmmax /proc/sys/kernel/msgmni "
                         "/proc/sys/kernel/msgmnb").stdout.split()
    assert [int(v) for v in shown] == [wanted["shmall"], wanted["shmmax"], wanted["msgmni"], wanted["msgmnb"]]
    assert wanted["shmall"] * PAGE <= ipc_cap(limits) and wanted["msgmni"] * wanted["msgmnb"] <= ipc_cap(limits)
    # a raised queue size needs CAP_SYS_RESOURCE, which nobody inside has
    script = ("import ctypes\nlibc = ctypes.CDLL(None, use_errno=True)\nq = libc.msgget(0, 0o1600)\n"
              "buf = (ctypes.c_byte * 256)()\nlibc.msgctl(q, 2, buf)\n"  # IPC_STAT
              "ctypes.c_ulong.from_buffer(buf, 88).value = 1 << 30\n"  # msg_qbytes, x86-64 glibc layout
              "print(libc.msgctl(q, 1, buf), ctypes.get_errno())\n")  # IPC_SET
    if os.uname().machine == "x86_64":
        out = sandbox.exec([sandbox.python, "-c", script]).stdout.split()
        assert out == [b"-1", b"1"], out  # EPERM


def test_the_probe_of_agentbed_sandbox_check_holds(sandbox, limits):
    from agentbed.sandbox.probes import sysv_shm

    probe = sysv_shm(sandbox, limits)
    assert probe.held, probe
    assert sysv_shm_total(sandbox) == 0  # the probe removes its segments


def _local_needed() -> None:
    require_backend("local")


def _no_holder_left() -> None:
    marker = f"{local.OWNER_VAR}={os.getpid()}".encode()
    for entry in os.scandir("/proc"):
        if entry.name.isdigit() and int(entry.name) != os.getpid():
            try:
                with open(f"{entry.path}/environ", "rb") as fh:
                    assert marker not in fh.read().split(b"\0"), f"process {entry.name} left behind"
            except OSError:
                continue


@pytest.mark.parametrize("as_root", [True, False])
def test_a_kernel_that_will_not_set_the_ipc_limits_refuses_the_local_sandbox(monkeypatch, as_root):
    """The holder's real steps, with the sysctls' directory pointing where nothing can be set:
    what a kernel that does not let this user set its IPC namespace's limits does."""
    _local_needed()
    if not as_root:
        monkeypatch.setattr(local.os, "geteuid", lambda: 1000)  # the ordinary user's path
    monkeypatch.setattr(bounds, "SYSCTL_DIR", "/proc/sys/kernel/agentbed-absent")
    with pytest.raises(SandboxUnavailable) as raised:
        local.LocalSandbox(TEST_LIMITS)
    message = str(raised.value)
    assert "\n" not in message and "kernel.shmmax cannot be set in the sandbox's own IPC namespace" in message
    assert ("run as root, or allow unprivileged user namespaces" in message) is not as_root, message
    assert local.namespaces_refused() == message  # `agentbed sandbox check` says the same line
    _no_holder_left()


def test_an_ordinary_user_without_user_namespaces_is_refused_in_one_line(monkeypatch, tmp_path):
    """What a machine that refuses unprivileged user namespaces answers (util-linux unshare's
    own message), stood in for by a script: the sandbox names it and never runs unbounded."""
    _local_needed()
    fake = tmp_path / "unshare"
    fake.write_text("#!/bin/sh\necho 'unshare: unshare failed: Operation not permitted' >&2\nexit 1\n")
    fake.chmod(stat.S_IRWXU)
    monkeypatch.setattr(bounds, "UNSHARE", str(fake))
    monkeypatch.setattr(local.os, "geteuid", lambda: 1000)
    with pytest.raises(SandboxUnavailable) as raised:
        local.LocalSandbox(TEST_LIMITS)
    message = str(raised.value)
    assert message == local.namespaces_refused()
    assert message.startswith("the local sandbox run by an ordinary user bounds its workdir and System V IPC")
    assert "(unshare: unshare failed: Operation not permitted): run as root, or allow unprivileged user" in message
    _no_holder_left()


def test_without_unshare_the_local_sandbox_says_so(monkeypatch):
    _local_needed()
    monkeypatch.setattr(bounds, "UNSHARE", "/nonexistent/unshare")
    with pytest.raises(SandboxUnavailable) as raised:
        local.LocalSandbox(TEST_LIMITS)
    assert "unshare: No such file or directory" in str(raised.value), raised.value
    assert "\n" not in str(raised.value)


def test_the_ordinary_users_holder_is_bounded_like_roots(sandbox_leftovers, limits):
    """The ordinary user's path run by root (os.geteuid patched): the same bounds, no host
    workdir. The real unprivileged run is test_sandbox_unprivileged.py, as user nobody."""
    _local_needed()
    patch = pytest.MonkeyPatch()
    patch.setattr(local.os, "geteuid", lambda: 1000)
    try:
        sb = local.LocalSandbox(limits)
    finally:
        patch.undo()
    try:
        assert not sb.as_root
        size = sb.exec(["stat", "-f", "-c", "%b %S %T", "/sandbox"]).stdout.split()
        assert int(size[0]) * int(size[1]) == limits.disk_bytes and size[2] == b"tmpfs", size
        caps = sb.exec("grep CapEff /proc/self/status").stdout.split()
        assert caps == [b"CapEff:", b"0000000000000000"], caps
        assert sb.exec("cat /proc/sys/kernel/shmall").stdout.strip() == str(ipc_sysctls(limits)["shmall"]).encode()
    finally:
        sb.cleanup()
    assert leftovers(sb) == [] and sandbox_leftovers(sb) == []
