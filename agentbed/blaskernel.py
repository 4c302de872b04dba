"""One OpenBLAS kernel on every x86-64 machine, so that floating-point results are the same bytes.

numpy and scipy ship OpenBLAS built for many CPUs (DYNAMIC_ARCH) and pick a kernel by the CPU at
load time. Kernels differ in the order they add and fuse, so a fit's last digits depend on the
machine: TDP's tdp-mix ranker retrained to 2.40745 on an AVX-512 machine (SkylakeX kernel) against
the shipped 2.40502 (Haswell kernel), and 32 of 72 rows of the oversight demo's live rebuild
differed in ``risk_slope`` (np.polyfit), with the same code and seeds. Pinning the Haswell kernel,
which every AVX2 CPU runs, gives the shipped bytes on both (2026-12-06). OpenBLAS reads
OPENBLAS_CORETYPE once, when numpy is first imported, so this runs in ``agentbed/__init__``; child
processes inherit it. A user's own setting is kept; a CPU without AVX2 and FMA (or not x86-64)
is left to OpenBLAS's own choice.
"""

from __future__ import annotations

import os
import platform
from collections.abc import MutableMapping
from pathlib import Path

KERNEL = "Haswell"
NEEDS = frozenset({"avx2", "fma"})  # what the Haswell kernel executes


def cpu_flags(cpuinfo: Path = Path("/proc/cpuinfo")) -> frozenset[str]:
    """The first processor's flags (Linux); empty where the file is absent or unreadable."""
    try:
        with cpuinfo.open(encoding="utf-8", errors="replace") as lines:
            for line in lines:
                if line.startswith("flags"):
                    return frozenset(line.partition(":")[2].split())
    except OSError:
        pass
    return frozenset()


def pin_openblas_kernel(environ: MutableMapping[str, str] = os.environ, machine: str | None = None,
                        flags: frozenset[str] | None = None) -> str | None:
    """Set OPENBLAS_CORETYPE to :data:`KERNEL` where the CPU can run it and nothing set it before;
    return the kernel in force by this setting (None: OpenBLAS chooses)."""
    if "OPENBLAS_CORETYPE" in environ:
        return environ["OPENBLAS_CORETYPE"]
    if (machine or platform.machine()).lower() not in {"x86_64", "amd64"}:
        return None
    if not NEEDS <= (cpu_flags() if flags is None else flags):
        return None
    environ["OPENBLAS_CORETYPE"] = KERNEL
    return KERNEL
