"""A context variable set for one block: the run-scoped settings (the model runtime, the human
approver, quiet progress) belong to the context that runs the run, not to the process, so two runs
in threads of one process each keep their own."""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager
from contextvars import ContextVar
from typing import TypeVar

T = TypeVar("T")


@contextmanager
def scoped(var: ContextVar[T], value: T) -> Iterator[None]:
    """``var`` is ``value`` for the block and what it was after. A generator holding the block
    that is closed from another context (which never had the value) has nothing to restore."""
    token = var.set(value)
    try:
        yield
    finally:
        try:
            var.reset(token)
        except ValueError:
            pass
