"""Probes that a sandbox backend's limits hold on this machine.

Each probe runs hostile code in a fresh sandbox and checks how it ended: a memory hog is
stopped for memory, a fork bomb cannot outgrow the process limit, a CPU spin ends at the wall
time and at the CPU time limit, a huge file and a disk fill stop at their sizes. Run them on
every node of a cluster with ``agentbed sandbox check --limits``: a sandbox runs on the node of
its episode, so its limits are that node's. The hostile-code tests run the same programs.
"""

from __future__ import annotations

import os
import time
from dataclasses import dataclass, replace

from agentbed.sandbox.base import Limits, Sandbox
from agentbed.sandbox.factory import open_sandbox

MiB = 1024 * 1024
MEMORY_HOG = "chunks = []\nwhile True:\n    chunks.append(b'x' * 10_000_000)\n"
FORK_BOMB = "import os\nwhile True:\n    try:\n        os.fork()\n    except OSError:\n        pass\n"
CPU_SPIN = "while True:\n    pass\n"
HUGE_FILE = "head -c 100M /dev/zero > big.bin"
DISK_FILL = "i=0; while head -c 4M /dev/zero > f$i; do i=$((i+1)); done; exit 1"
# small, so that hostile code reaches them in seconds
PROBE_LIMITS = Limits(memory_bytes=256 * MiB, cpu_seconds=20, processes=32, file_size_bytes=8 * MiB,
                      disk_bytes=32 * MiB, open_files=128, output_bytes=64 * 1024)


@dataclass(frozen=True)
class LimitProbe:
    limit: str  # memory | processes | wall_time | cpu_time | file_size | disk
    held: bool
    detail: str  # how the hostile command ended


def probe_limits(backend: str, limits: Limits = PROBE_LIMITS) -> list[LimitProbe]:
    """Every limit's probe on ``backend`` here. Raises SandboxUnavailable when it cannot start."""
    with open_sandbox(backend, limits) as sb:
        probes = [_memory(sb), _processes(sb, limits), _wall_time(sb), _file_size(sb, limits), _disk(sb, limits)]
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
    if sb.backend == "local" and os.geteuid() != 0:  # the workdir is then a host directory: do not fill it
        return LimitProbe("disk", False, "not limited: the local sandbox bounds its workdir only when run as root")
    result = sb.exec(DISK_FILL, timeout=60)
    used = sb.exec("du -sk .").stdout.split()
    used_bytes = int(used[0]) * 1024 if used and used[0].isdigit() else None
    held = result.status == "disk_full" and used_bytes is not None and used_bytes <= limits.disk_bytes + MiB
    return LimitProbe("disk", held, f"{result.status}; {used_bytes} bytes used (limit {limits.disk_bytes})")
