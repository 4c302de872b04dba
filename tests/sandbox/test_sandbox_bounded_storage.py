"""The local sandbox bounds every writable path: hostile code fills each one, and the host's
memory is checked while it is full and after cleanup (docs/sandbox.md lists what is writable).

Memory-backed storage is what matters here: a tmpfs without a size takes up to half the host's
RAM, outside every per-process limit. The host's ``Shmem`` (/proc/meminfo: tmpfs and shared
memory pages) is the measure; the fills try ten times what the limits allow, so an unbounded
path would show as hundreds of MiB where the bound allows a few tens.
"""

from __future__ import annotations

from dataclasses import replace

import pytest

from agentbed.sandbox import Limits, open_sandbox
from agentbed.sandbox.factory import local_ready
from agentbed.testing import require

MiB = 1024 * 1024
LIMITS = replace(Limits(memory_bytes=256 * MiB, cpu_seconds=20, processes=32, open_files=128),
                 disk_bytes=32 * MiB, file_size_bytes=256 * MiB)
WRITABLE = ("/sandbox", "/tmp", "/dev/shm")  # exactly what docs/sandbox.md lists
ATTEMPT = 10 * LIMITS.disk_bytes  # what each fill tries to write
SLACK = 48 * MiB  # other processes on a shared host, tmpfs metadata


def shmem() -> int:
    with open("/proc/meminfo") as fh:
        fields = dict(line.split(":", 1) for line in fh)
    return int(fields["Shmem"].split()[0]) * 1024


@pytest.fixture
def local_sandbox(sandbox_leftovers):
    problem = local_ready()
    require(problem is None, f"the local sandbox backend ({problem})",
            "run scripts/setup-docker as root (installs bubblewrap), or apt-get install bubblewrap")
    sb = open_sandbox("local", LIMITS)
    try:
        yield sb
    finally:
        sb.cleanup()
    assert sandbox_leftovers(sb) == [], "processes outlived cleanup"


def test_the_writable_mounts_are_exactly_the_listed_ones_each_bounded(local_sandbox):
    """mountinfo from inside: every read-write mount that can hold files is a listed tmpfs of
    at most disk_bytes (proc, devpts and the bind-mounted device nodes hold no files one can
    create)."""
    result = local_sandbox.exec("cat /proc/self/mountinfo")
    assert result.ok, result
    writable = {}
    for line in result.stdout.decode().splitlines():
        left, _, right = line.partition(" - ")
        point, options = left.split()[4], left.split()[5]
        fstype = right.split()[0]
        if "rw" in options.split(",") and fstype not in ("proc", "devpts", "devtmpfs"):
            writable[point] = fstype
    assert set(writable) == set(WRITABLE), writable
    for point in WRITABLE:
        size = local_sandbox.exec(["stat", "-f", "-c", "%b %S", point]).stdout.split()
        assert int(size[0]) * int(size[1]) <= LIMITS.disk_bytes, (point, size)


def test_filling_every_writable_path_is_bounded_and_the_host_memory_is_given_back(local_sandbox):
    before = shmem()
    for point in WRITABLE:
        fill = (f"i=0; while [ $i -lt {ATTEMPT // (8 * MiB)} ]; do head -c 8M /dev/zero > {point}/fill$i || exit 1; "
                "i=$((i+1)); done")
        result = local_sandbox.exec(fill, timeout=120)
        assert result.status == "disk_full", (point, result)
        used = int(local_sandbox.exec(["du", "-skx", point]).stdout.split()[0]) * 1024
        assert used <= LIMITS.disk_bytes + MiB, (point, used)
    full = shmem()
    assert full - before <= len(WRITABLE) * LIMITS.disk_bytes + SLACK, (before, full)
    local_sandbox.cleanup()
    assert shmem() - before <= SLACK, "the sandbox's tmpfs pages were not given back"


def test_dev_is_read_only_and_nested_user_namespaces_are_disabled(local_sandbox):
    assert not local_sandbox.exec("echo x > /dev/fill").ok
    assert not local_sandbox.exec("echo x > /fill").ok  # bubblewrap's root tmpfs, read-only too
    assert local_sandbox.exec("echo x > /dev/null && head -c 4 /dev/zero | wc -c").ok  # devices still work
    for escape in ("unshare -Urm sh -c 'mount -t tmpfs none /mnt && head -c 100M /dev/zero > /mnt/f'",
                   "unshare -U true"):
        result = local_sandbox.exec(escape, timeout=30)
        assert result.exit_code != 0, (escape, result)
    script = ("import ctypes\nlibc = ctypes.CDLL(None, use_errno=True)\n"
              "print(libc.unshare(0x10000000), ctypes.get_errno())\n")  # CLONE_NEWUSER, from code
    result = local_sandbox.exec([local_sandbox.python, "-c", script])
    assert result.ok and result.stdout.split()[0] == b"-1", result


def test_python_multiprocessing_still_works_in_the_bounded_dev_shm(local_sandbox):
    script = "import multiprocessing as m\nlock = m.Lock()\nwith lock:\n    print('ok')\n"
    result = local_sandbox.exec([local_sandbox.python, "-c", script])
    assert result.ok and result.stdout.strip() == b"ok", result


def test_dockers_dev_shm_follows_disk_bytes(sandbox_leftovers):
    """Docker gives /dev/shm 64 MiB whatever the limits say unless told otherwise (issue 31)."""
    from agentbed.sandbox.factory import docker_ready

    problem = docker_ready()
    require(problem is None, f"the docker sandbox backend ({problem})",
            "run scripts/setup-docker as root (installs docker.io, starts dockerd, builds the image)")
    for disk in (8 * MiB, 96 * MiB):
        sb = open_sandbox("docker", replace(LIMITS, disk_bytes=disk))
        try:
            size = sb.exec(["stat", "-f", "-c", "%b %S", "/dev/shm"]).stdout.split()
            assert int(size[0]) * int(size[1]) == disk, (disk, size)
        finally:
            sb.cleanup()


def test_a_permission_error_on_a_full_workdir_is_not_disk_full():
    from agentbed.sandbox.base import failed_on_full_disk

    assert failed_on_full_disk(b"cp: error writing 'x': No space left on device\n", False)
    assert failed_on_full_disk(b"", True)  # killed by the full disk before it could say so
    assert not failed_on_full_disk(b"sh: 1: cannot create /etc/x: Permission denied\n", True)
    assert not failed_on_full_disk(b"touch: cannot touch '/usr/x': Read-only file system\n", True)
    assert not failed_on_full_disk(b"Permission denied\n", False)
