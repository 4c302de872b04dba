"""Writing files so that a kill at any moment leaves the old content or the new, never half."""

from __future__ import annotations

import os
from collections.abc import Iterable
from pathlib import Path


def resolved(path: Path) -> Path:
    """``path.resolve()``, also for a link in a loop (before Python 3.13 ``resolve`` raises
    RuntimeError there, and one such link in a run's ``episodes`` made its report and its viewer
    page an internal error; session 18's probe): then the path made absolute, which names no other
    file; reading it fails as an unreadable log does."""
    try:
        return path.resolve()
    except RuntimeError:
        return Path(os.path.abspath(path))


def write_atomic(path: Path, data: bytes) -> None:
    """Write to a temporary file beside ``path``, fsync, rename it over ``path``."""
    tmp = path.with_name(path.name + ".tmp")
    fd = os.open(tmp, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o644)
    try:
        view = memoryview(data)
        while view:
            view = view[os.write(fd, view):]
        os.fsync(fd)
    except OSError as exc:  # a full disk (ENOSPC) names the file, as a permission error does
        raise OSError(exc.errno, exc.strerror, str(path)) from None
    finally:
        os.close(fd)
    os.replace(tmp, path)


def write_atomic_chunks(path: Path, chunks: Iterable[bytes]) -> None:
    """:func:`write_atomic` of ``b"".join(chunks)``, without holding the whole file in memory."""
    tmp = path.with_name(path.name + ".tmp")
    try:
        with os.fdopen(os.open(tmp, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o644), "wb", buffering=1 << 20) as fh:
            for chunk in chunks:
                fh.write(chunk)
            fh.flush()
            os.fsync(fh.fileno())
    except OSError as exc:
        raise OSError(exc.errno, exc.strerror, str(path)) from None
    os.replace(tmp, path)
