"""Sandboxes: where code an agent wrote runs, never on the host itself.

``open_sandbox(backend="auto"|"local"|"docker", limits=Limits(...))`` returns a
:class:`Sandbox`; use it as a context manager, or hold one per episode with
:class:`EpisodeSandbox`. See docs/sandbox.md for what each backend isolates.
"""

from agentbed.sandbox.base import (
    STATUSES,
    ExecResult,
    Limits,
    Sandbox,
    SandboxError,
    SandboxPathError,
    SandboxUnavailable,
)
from agentbed.sandbox.episode import EpisodeSandbox
from agentbed.sandbox.factory import BACKENDS, docker_ready, local_ready, open_sandbox

__all__ = [
    "BACKENDS",
    "STATUSES",
    "EpisodeSandbox",
    "ExecResult",
    "Limits",
    "Sandbox",
    "SandboxError",
    "SandboxPathError",
    "SandboxUnavailable",
    "docker_ready",
    "local_ready",
    "open_sandbox",
]
