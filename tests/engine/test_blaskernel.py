"""OpenBLAS's kernel is pinned so that fits give the same bytes on every x86-64 CPU (agentbed/blaskernel.py)."""

from __future__ import annotations

import os
import subprocess
import sys

from agentbed.blaskernel import KERNEL, cpu_flags, pin_openblas_kernel


def test_an_avx2_x86_machine_gets_the_one_kernel():
    env: dict[str, str] = {}
    assert pin_openblas_kernel(env, "x86_64", frozenset({"avx2", "fma", "sse2"})) == KERNEL
    assert env == {"OPENBLAS_CORETYPE": KERNEL}


def test_a_users_setting_and_other_cpus_are_left_alone():
    mine = {"OPENBLAS_CORETYPE": "SkylakeX"}
    assert pin_openblas_kernel(mine, "x86_64", frozenset({"avx2", "fma"})) == "SkylakeX"
    assert mine == {"OPENBLAS_CORETYPE": "SkylakeX"}
    for machine, flags in (("x86_64", frozenset({"sse2", "avx"})), ("aarch64", frozenset({"avx2", "fma"}))):
        env: dict[str, str] = {}
        assert pin_openblas_kernel(env, machine, flags) is None and env == {}


def test_cpu_flags_of_a_missing_file_are_empty(tmp_path):
    assert cpu_flags(tmp_path / "absent") == frozenset()
    info = tmp_path / "cpuinfo"
    info.write_text("processor\t: 0\nflags\t\t: fpu avx2 fma\n", encoding="utf-8")
    assert cpu_flags(info) == {"fpu", "avx2", "fma"}


def test_importing_agentbed_sets_it_before_numpy_loads():
    """A fresh process that imports agentbed and then numpy runs OpenBLAS with the pinned kernel."""
    code = ("import os, agentbed, numpy; from agentbed.blaskernel import cpu_flags, NEEDS; "
            "print(os.environ.get('OPENBLAS_CORETYPE'), NEEDS <= cpu_flags())")
    env = {k: v for k, v in os.environ.items() if k != "OPENBLAS_CORETYPE"}  # as a user's shell starts it
    env_kernel, capable = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                                         check=True, env=env).stdout.split()
    assert env_kernel == (KERNEL if capable == "True" else "None")
