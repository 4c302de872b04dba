"""Values built once per process and key, shared by the process's threads: the clients and
models whose construction costs tens of milliseconds (an SSL context, a LangChain model) and
that a run would otherwise build per episode.

The process id is part of every key, so a forked worker builds its own value instead of
using its parent's connections."""

from __future__ import annotations

import os
import threading
from collections.abc import Callable, Hashable
from typing import Generic, TypeVar

V = TypeVar("V")


class ProcessMemo(Generic[V]):
    """A thread-safe map from (this process, key) to a value built on first use."""

    def __init__(self) -> None:
        self._values: dict[tuple[int, Hashable], V] = {}
        self._lock = threading.Lock()

    def get(self, key: Hashable) -> V | None:
        return self._values.get((os.getpid(), key))

    def put(self, key: Hashable, value: V) -> V:
        with self._lock:
            return self._values.setdefault((os.getpid(), key), value)

    def get_or_build(self, key: Hashable, build: Callable[[], V]) -> V:
        """The value for ``key``, built by ``build`` once per process (under the lock, so two
        threads asking at once build it once)."""
        with self._lock:
            slot = (os.getpid(), key)
            if slot not in self._values:
                self._values[slot] = build()
            return self._values[slot]
