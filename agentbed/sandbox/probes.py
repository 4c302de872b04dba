"""Probes that a sandbox backend's limits hold on this machine.

Each probe runs hostile code in a fresh sandbox and checks how it ended: a memory hog is
stopped for memory, a fork bomb cannot outgrow the process limit, a CPU spin ends at the wall
time and at the CPU time limit, a huge file and a disk fill stop at their sizes, and System V
shared memory made and detached (so no process's limit counts it) stops at ``memory_bytes``. Run them on
every node of a cluster with ``agentbed sandbox check --limits``: a sandbox runs on the node of
its episode, so its limits are that node's. The hostile-code tests run the same programs.
"""

from __future__ import annotations

import time
from dataclasses import dataclass, replace

from agentbed.sandbox.base import Limits, Sandbox
from agentbed.sandbox.bounds import ipc_cap
from agentbed.sandbox.factory import open_sandbox

MiB = 1024 * 1024
MEMORY_HOG = "chunks = []\nwhile True:\n    chunks.append(b'x' * 10_000_000)\n"
FORK_BOMB = "import os\nwhile True:\n    try:\n        os.fork()\n    except OSError:\n        pass\n"
CPU_SPIN = "while True:\n    pass\n"
HUGE_FILE = "head -c 100M /dev/zero > big.bin"
DISK_FILL = "i=0; while head -c 4M /dev/zero > f$i; do i=$((i+1)); done; exit 1"
# System V shared memory: make segments, touch and detach each (a detached segment stays, outside
# every per-process limit) until refused; argv: segment size, how many. Exit 3 when refused.
SYSV_SHM_HOG = r"""
import ctypes, sys
libc = ctypes.CDLL(None, use_errno=True)
libc.shmget.argtypes = [ctypes.c_int, ctypes.c_size_t, ctypes.c_int]
libc.shmat.argtypes = [ctypes.c_int, ctypes.c_void_p, ctypes.c_int]
libc.shmat.restype = ctypes.c_void_p
libc.shmdt.argtypes = [ctypes.c_void_p]
size, count = int(sys.argv[1]), int(sys.argv[2])
held = 0
for _ in range(count):
    sid = libc.shmget(0, size, 0o1600)  # IPC_PRIVATE, IPC_CREAT | 0600
    addr = libc.shmat(sid, None, 0) if sid >= 0 else None
    if addr is None or addr == ctypes.c_void_p(-1).value:
        print("refused", ctypes.get_errno(), held, flush=True)
        sys.exit(3)
    ctypes.memset(addr, 1, size)
    libc.shmdt(addr)
    held += size
    print("held", held, flush=True)
"""
# bytes of every System V segment of the sandbox's IPC namespace (attached or not)
SYSV_SHM_TOTAL = "import pathlib; print(sum(int(l.split()[3]) for l in pathlib.Path('/proc/sysvipc/shm').read_text().splitlines()[1:]))"
SEGMENT = 16 * MiB
# small, so that hostile code reaches them in seconds
PROBE_LIMITS = Limits(memory_bytes=256 * MiB, cpu_seconds=20, processes=32, file_size_bytes=8 * MiB,
                      disk_bytes=32 * MiB, open_files=128, output_bytes=64 * 1024)


@dataclass(frozen=True)
class LimitProbe:
    limit: str  # memory | processes | wall_time | cpu_time | file_size | disk | sysv_shm
    held: bool
    detail: str  # how the hostile command ended


def probe_limits(backend: str, limits: Limits = PROBE_LIMITS) -> list[LimitProbe]:
    """Every limit's probe on ``backend`` here. Raises SandboxUnavailable when it cannot start."""
    with open_sandbox(backend, limits) as sb:
        probes = [_memory(sb), _processes(sb, limits), _wall_time(sb), _file_size(sb, limits), _disk(sb, limits),
                  sysv_shm(sb, limits)]
    with open_sandbox(backend, replace(limits, cpu_seconds=1)) as sb:
        result = sb.exec([sb.python, "-c", CPU_SPIN], timeout=30)
        probes.append(LimitProbe("cpu_time", result.status in {"cpu_limit", "killed"} and result.duration < 10,
                                 f"{result.status} after {result.duration:.1f}s with a 1 s CPU limit"))
    return probes


def _memory(sb: Sandbox) -> LimitProbe:
    result = sb.exec([sb.python, "-c", MEMORY_HOG], timeout=60)
    alive = sb.exec("echo alive").ok
    return LimitProbe("memory", result.status == "oom" and alive, f"{result.status}; sandbox alive after: {alive}")


def _processes(sb: Sandbox, limits: Limits) -> LimitProbe:
    bomb = sb.exec([sb.python, "-c", FORK_BOMB], timeout=3)
    count = sb.exec("for i in $(seq 8); do sleep 5 & done; ls /proc | grep -c '^[0-9]'", timeout=10)
    seen = int(count.stdout) if count.ok and count.stdout.strip().isdigit() else None
    held = bomb.status == "timeout" and seen is not None and seen < limits.processes
    return LimitProbe("processes", held, f"fork bomb {bomb.status}; then {seen} processes (limit {limits.processes})")


def _wall_time(sb: Sandbox) -> LimitProbe:
    start = time.monotonic()
    result = sb.exec([sb.python, "-c", CPU_SPIN], timeout=2)
    took = time.monotonic() - start
    return LimitProbe("wall_time", result.status == "timeout" and took < 10, f"{result.status} after {took:.1f}s (2 s)")


def _file_size(sb: Sandbox, limits: Limits) -> LimitProbe:
    result = sb.exec(HUGE_FILE, timeout=30)
    size = sb.exec("stat -c %s big.bin").stdout.strip()
    sb.exec("rm -f big.bin")
    held = result.status == "disk_full" and size.isdigit() and int(size) <= limits.file_size_bytes
    return LimitProbe("file_size", held, f"{result.status}; file of {size.decode() or '?'} bytes "
                                         f"(limit {limits.file_size_bytes})")


def _disk(sb: Sandbox, limits: Limits) -> LimitProbe:
    result = sb.exec(DISK_FILL, timeout=60)
    used = sb.exec("du -sk .").stdout.split()
    used_bytes = int(used[0]) * 1024 if used and used[0].isdigit() else None
    sb.exec("rm -f f*")
    held = result.status == "disk_full" and used_bytes is not None and used_bytes <= limits.disk_bytes + MiB
    return LimitProbe("disk", held, f"{result.status}; {used_bytes} bytes used (limit {limits.disk_bytes})")


def sysv_shm_total(sb: Sandbox) -> int | None:
    """Bytes of System V shared memory the sandbox's IPC namespace holds now."""
    result = sb.exec([sb.python, "-c", SYSV_SHM_TOTAL])
    return int(result.stdout) if result.ok and result.stdout.strip().isdigit() else None


def sysv_shm(sb: Sandbox, limits: Limits, attempt: int | None = None) -> LimitProbe:
    """Segments of SEGMENT bytes, touched and detached, ``attempt`` bytes in all (three times
    ``memory_bytes`` by default): the sandbox must hold at most ``ipc_cap`` (half of
    ``memory_bytes``, bounds.py) of them. The segments are removed afterwards."""
    count = (attempt or 3 * limits.memory_bytes) // SEGMENT + 1
    result = sb.exec([sb.python, "-c", SYSV_SHM_HOG, str(SEGMENT), str(count)], timeout=120)
    total = sysv_shm_total(sb)
    sb.exec("ipcrm --all=shm")
    said = result.stdout.decode(errors="replace").strip().splitlines()
    held = result.status != "ok" and total is not None and total <= ipc_cap(limits)
    return LimitProbe("sysv_shm", held, f"{result.status} ({said[-1] if said else 'nothing said'}); "
                                        f"{total} bytes held (limit {ipc_cap(limits)})")
