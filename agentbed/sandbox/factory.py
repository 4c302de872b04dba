"""Choosing a backend: ``auto`` is Docker when an engine answers and the image is built."""

from __future__ import annotations

from functools import lru_cache

from agentbed.sandbox.base import Limits, Sandbox, SandboxUnavailable

BACKENDS = ("auto", "local", "docker")


@lru_cache(maxsize=1)
def docker_ready() -> str | None:
    """None when the Docker backend can run here, else what is missing (checked once)."""
    from agentbed.sandbox.docker_backend import connect, default_image, image_present

    try:
        client = connect(timeout=5)
    except SandboxUnavailable as exc:
        return str(exc)
    try:
        if not image_present(client, default_image()):
            return f"the sandbox image {default_image()} is not built (run docker/build)"
    finally:
        client.close()
    return None


def local_ready() -> str | None:
    """None when the local backend can run here, else what is missing: bubblewrap, or the right
    to make namespaces (a container started with Docker's defaults lacks it)."""
    from agentbed.sandbox.local import bwrap_path, namespaces_refused

    if bwrap_path() is None:
        return "bubblewrap is not installed (apt-get install bubblewrap)"
    return namespaces_refused()


def open_sandbox(backend: str = "auto", limits: Limits | None = None) -> Sandbox:
    """Start a sandbox. Raises SandboxUnavailable naming what is missing."""
    if backend not in BACKENDS:
        raise ValueError(f"sandbox backend must be one of {', '.join(BACKENDS)}, got {backend!r}")
    if backend == "auto":
        backend = "docker" if docker_ready() is None else "local"
    if backend == "docker":
        from agentbed.sandbox.docker_backend import DockerSandbox

        return DockerSandbox(limits)
    from agentbed.sandbox.local import LocalSandbox

    return LocalSandbox(limits)
