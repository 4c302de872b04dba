"""Files of the human-approval rendezvous (:mod:`agentbed.approval`), made so that the folder is
the run's own and nothing in it is reached through a link.

- The run makes the folder itself, readable and writable by its user only (0700); one that is a
  link or belongs to someone else is refused, and one of its own opened to others is closed
  (anyone who could write there could answer its questions).
- A file is created exclusively (``O_EXCL | O_NOFOLLOW``, mode 0600) under a temporary name, then
  hard-linked to its name: the name is never written through (a link planted under it is
  replaced, never followed) and a reader never sees half a file; the first writer wins.
- A file is read without following a link, only if it is a regular file of bounded size.
"""

from __future__ import annotations

import json
import os
import stat
import time
from pathlib import Path
from typing import Any

from agentbed.errors import UsageError
from agentbed.validate import InputError, parse_json

MAX_FILE_BYTES = 128 * 1024  # a question or decision is a few kilobytes; an edited call is bounded in its schema


RUN_FILES = ("run.json", "index.jsonl", "manifest.json")  # any of them: a folder agentbed run wrote


RUN_SEARCH_DEPTH = 2  # a folder's own directory and its two parents: R/x and R/episodes/x are found


def outside_every_run(folder: Path, option: str = "--approvals", given: tuple[Path, ...] = ()) -> None:
    """Refuse an approvals folder inside any run directory, not only the run's own: the viewer
    writes its decisions there and never writes into a run (session 17's probe: ``run --approvals
    OTHER_RUN/x`` made a folder in a sealed run, and ``view --approvals RUN/episodes`` was served).

    A run is what the user gave (``given``: the run directory, at any depth above the folder), or a
    directory holding run files found within ``RUN_SEARCH_DEPTH`` levels above it. The search is
    bounded: it once walked up to ``/``, so a stray run written into ``/`` (or any far ancestor, a
    home or /tmp) made every folder on the machine "inside the run directory /"."""
    here = folder.resolve()
    near = (here, *here.parents)[: RUN_SEARCH_DEPTH + 1]
    found = [p.resolve() for p in given if here.is_relative_to(p.resolve())]
    found += [p for p in near if any((p / name).is_file() for name in RUN_FILES)]
    if found:
        raise UsageError(f"{option} {folder}: inside the run directory {found[0]}; it must be beside it (the "
                         "viewer never writes into a run)")


def private_folder(folder: Path) -> None:
    """Create ``folder`` with mode 0700; one that exists must be this user's directory (not a link),
    and is made 0700 (stale files in it are replaced or removed as each question is put); anything
    else is a one-line UsageError naming it."""
    try:
        folder.parent.mkdir(parents=True, exist_ok=True)
        os.mkdir(folder, 0o700)
        return
    except FileExistsError:
        pass
    except OSError as exc:
        raise UsageError(f"--approvals {folder}: cannot create it ({exc.strerror or exc})") from None
    st = os.lstat(folder)
    if stat.S_ISLNK(st.st_mode) or not stat.S_ISDIR(st.st_mode):
        raise UsageError(f"--approvals {folder}: exists and is not a directory (a link is not followed)")
    if st.st_uid != os.getuid():
        raise UsageError(f"--approvals {folder}: belongs to another user (uid {st.st_uid}); not used")
    if st.st_mode & 0o077:  # this user's folder, opened to others: made private before any question is put
        os.chmod(folder, 0o700, follow_symlinks=False)


def _create(path: Path, data: bytes) -> None:
    fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_NOFOLLOW, 0o600)
    try:
        view = memoryview(data)
        while view:
            view = view[os.write(fd, view):]
    finally:
        os.close(fd)


def write_once(path: Path, doc: dict[str, Any]) -> bool:
    """Write ``path`` whole unless its name is taken; False when someone else wrote it first."""
    tmp = path.with_name(f".{path.name}.{os.getpid()}.{time.monotonic_ns()}.tmp")
    _create(tmp, json.dumps(doc, ensure_ascii=False, indent=1).encode("utf-8"))
    try:
        os.link(tmp, path, follow_symlinks=False)  # atomic, and fails if the name is taken (a link too)
        return True
    except FileExistsError:
        return False
    finally:
        tmp.unlink(missing_ok=True)


def remove(path: Path) -> None:
    """Remove a file or link by its name (never what a link points to); a directory is left."""
    try:
        if not stat.S_ISDIR(os.lstat(path).st_mode):
            path.unlink()
    except FileNotFoundError:
        pass


def replace_with(path: Path, doc: dict[str, Any]) -> None:
    """Write ``path`` whole in place of whatever file or link held its name."""
    remove(path)
    if not write_once(path, doc):
        raise UsageError(f"{path}: its name is taken (a directory, or another writer); not written through")


def read_file(path: Path) -> Any:
    """The JSON in ``path``, read without following a link; InputError (one line) for a link, a
    directory, a FIFO, a file over ``MAX_FILE_BYTES`` or bytes that are not JSON."""
    try:
        fd = os.open(path, os.O_RDONLY | os.O_NOFOLLOW | os.O_NONBLOCK)
    except FileNotFoundError:
        raise InputError(f"{path}: cannot read: no such file") from None
    except OSError as exc:  # ELOOP: a link
        why = "a link (not followed)" if os.path.islink(path) else (exc.strerror or str(exc))
        raise InputError(f"{path}: {why}") from None
    try:
        mode = os.fstat(fd).st_mode
        if not stat.S_ISREG(mode):
            kind = "a directory" if stat.S_ISDIR(mode) else "a FIFO or special file"
            raise InputError(f"{path}: is {kind}, not a regular file")
        with os.fdopen(fd, "rb", closefd=False) as fh:
            data = fh.read(MAX_FILE_BYTES + 1)
    finally:
        os.close(fd)
    if len(data) > MAX_FILE_BYTES:
        raise InputError(f"{path}: larger than {MAX_FILE_BYTES} bytes")
    return parse_json(data, str(path))
