"""One sandbox per episode, for environments.

An environment holds an :class:`EpisodeSandbox`, calls :meth:`EpisodeSandbox.fresh` in
``setup`` (which cleans up the previous episode's sandbox first) and :meth:`close` in its
``close()``. The sandbox is started lazily, on the first use of :attr:`sandbox`, so an
episode that never runs code costs nothing. Anything still open when the interpreter exits
is cleaned up too; after a hard crash, ``agentbed sandbox prune`` removes the leftovers.
Environments holding a sandbox cannot be deep-copied: set ``can_snapshot = False``.
"""

from __future__ import annotations

from agentbed.sandbox.base import Limits, Sandbox
from agentbed.sandbox.factory import open_sandbox


class EpisodeSandbox:
    def __init__(self, backend: str = "auto", limits: Limits | None = None) -> None:
        self.backend = backend
        self.limits = limits
        self._sandbox: Sandbox | None = None

    @property
    def sandbox(self) -> Sandbox:
        """The current episode's sandbox, started on first use."""
        if self._sandbox is None or self._sandbox.closed:
            self._sandbox = open_sandbox(self.backend, self.limits)
        return self._sandbox

    @property
    def started(self) -> bool:
        return self._sandbox is not None and not self._sandbox.closed

    def fresh(self) -> EpisodeSandbox:
        """End the previous episode's sandbox; the next use starts a new one."""
        self.close()
        return self

    def close(self) -> None:
        if self._sandbox is not None:
            sandbox, self._sandbox = self._sandbox, None
            sandbox.cleanup()

    def __enter__(self) -> EpisodeSandbox:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    def __deepcopy__(self, memo: dict) -> EpisodeSandbox:
        raise TypeError("an episode's sandbox cannot be copied; set can_snapshot = False on the environment")
