"""Fixtures for the sandbox tests: one parametrised fixture runs a test on both backends.

A backend that cannot run here fails under CI=true and is skipped elsewhere, with what to
install (agentbed.testing.require). After every test the fixture checks that the sandbox
left nothing behind: no process of the sandbox, no container.
"""

from __future__ import annotations

import os
import re

import pytest

from agentbed.sandbox import Limits, open_sandbox
from agentbed.sandbox.factory import docker_ready, local_ready
from agentbed.sandbox.probes import PROBE_LIMITS
from agentbed.testing import require

# Small limits so hostile code hits them fast (those `agentbed sandbox check --limits` probes with).
TEST_LIMITS = PROBE_LIMITS
HOW = {
    "local": "run scripts/setup-docker as root (installs bubblewrap), or apt-get install bubblewrap",
    "docker": "run scripts/setup-docker as root (installs docker.io, starts dockerd, builds the image)",
}


def require_backend(backend: str) -> None:
    problem = local_ready() if backend == "local" else docker_ready()
    require(problem is None, f"the {backend} sandbox backend ({problem})", HOW[backend])


def leftovers(sb) -> list[str]:
    """Processes the sandbox still has besides its idle machinery."""
    if sb.backend == "docker":
        procs = sb.container.top(ps_args="-o pid,args")["Processes"] if not sb.closed else []
        return [" ".join(p) for p in procs if "session_server.py" not in " ".join(p)]
    found = []
    marker = re.compile(rb"AGENTBED_SANDBOX_OWNER=" + str(os.getpid()).encode() + rb"\0")
    machinery = {sb._holder.pid if sb._holder is not None else None}
    if sb._session is not None:
        machinery |= {sb._session.proc.pid, sb._session.init_pid}
    for entry in os.scandir("/proc"):
        if not entry.name.isdigit() or int(entry.name) in machinery:
            continue
        try:
            if sb.as_root and os.stat(entry.path).st_uid == sb.uid:
                found.append(entry.name)
                continue
            with open(f"{entry.path}/environ", "rb") as fh:
                if marker.search(fh.read() + b"\0"):
                    found.append(entry.name)
        except OSError:
            continue
    return found


def container_exists(container_id: str) -> bool:
    import docker

    client = docker.from_env()
    try:
        client.containers.get(container_id)
    except docker.errors.NotFound:
        return False
    finally:
        client.close()
    return True


@pytest.fixture
def sandbox_leftovers():
    """``leftovers(sandbox)``: the sandbox's processes besides its own machinery."""
    return leftovers


@pytest.fixture
def container_exists_fn():
    return container_exists


@pytest.fixture
def limits() -> Limits:
    return TEST_LIMITS


@pytest.fixture(params=["local", "docker"])
def backend(request) -> str:
    require_backend(request.param)
    return request.param


@pytest.fixture
def sandbox(backend):
    sb = open_sandbox(backend, TEST_LIMITS)
    try:
        yield sb
        assert leftovers(sb) == [], "processes outlived their command"
    finally:
        sb.cleanup()
    if backend == "docker":
        assert not container_exists(sb.id), "container not removed"
    else:
        assert leftovers(sb) == [], "processes outlived cleanup"
