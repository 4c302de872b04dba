"""Which code made a log: agentbed's version and git commit, and where each suite came from.

A suite's origin is the distribution and version that installed it (a packaged plugin), or the
SHA-256 of its source file (a one-file suite, ``agentbed run path/to/suite.py``, or a module named
``my.module:SUITE`` that no distribution installed). :mod:`agentbed.suite` records the origin of
each suite it loads; run.json, results.json and every log header carry it, and ``gate`` warns
when a run and its baseline were made by different worlds.

The commit is read from the files of the git checkout agentbed runs from (no ``git`` process),
once per process; it is None for an installed copy outside a checkout. A working tree with
uncommitted changes is not detected: the commit names the last committed state.
"""

from __future__ import annotations

import hashlib
from functools import cache
from importlib.metadata import EntryPoint, entry_points
from pathlib import Path
from typing import Any

import agentbed

SUITES_GROUP = "agentbed.suites"  # the entry-point group of packaged suites
_ORIGINS: dict[str, dict[str, Any]] = {}


@cache
def code_commit() -> str | None:
    """The git commit of the checkout holding this agentbed package (None outside one)."""
    root = Path(agentbed.__file__).resolve().parent.parent
    dot = root / ".git"
    try:
        if dot.is_file():  # a worktree: "gitdir: PATH"
            gitdir = Path(dot.read_text(encoding="utf-8").split("gitdir:", 1)[1].strip())
        elif dot.is_dir():
            gitdir = dot
        else:
            return None
        common = gitdir
        if (gitdir / "commondir").is_file():
            common = (gitdir / (gitdir / "commondir").read_text(encoding="utf-8").strip()).resolve()
        head = (gitdir / "HEAD").read_text(encoding="utf-8").strip()
        if not head.startswith("ref: "):
            return head if _is_sha(head) else None
        ref = head[5:]
        for base in (gitdir, common):
            if (base / ref).is_file():
                sha = (base / ref).read_text(encoding="utf-8").strip()
                return sha if _is_sha(sha) else None
        packed = common / "packed-refs"
        for line in packed.read_text(encoding="utf-8").splitlines() if packed.is_file() else []:
            sha, _, name = line.partition(" ")
            if name == ref and _is_sha(sha):
                return sha
    except (OSError, IndexError, UnicodeDecodeError):
        return None
    return None


def _is_sha(text: str) -> bool:
    return len(text) == 40 and all(c in "0123456789abcdef" for c in text)


def file_sha256(path: str | Path) -> str:
    return hashlib.sha256(Path(path).read_bytes()).hexdigest()


def record_origin(suite: str, origin: dict[str, Any]) -> None:
    """Where suite ``suite`` was loaded from (see the module docstring for the forms)."""
    _ORIGINS[suite] = dict(origin)


def suite_origin(suite: str) -> dict[str, Any] | None:
    """Where suite ``suite`` comes from: as recorded when it was loaded, else its entry point's
    (read from the installed metadata, without importing it: the same answer either way)."""
    if suite not in _ORIGINS:
        eps = list(entry_points(group=SUITES_GROUP, name=suite))
        if len(eps) != 1:
            return None
        _ORIGINS[suite] = entry_point_origin(eps[0])
    return _ORIGINS[suite]


def entry_point_origin(ep: EntryPoint) -> dict[str, Any]:
    dist = getattr(ep, "dist", None)
    return {"entry_point": f"{ep.name} = {ep.value}", "distribution": dist.name if dist else None,
            "version": dist.version if dist else None}


def code() -> dict[str, Any]:
    """agentbed's own provenance: version and commit."""
    return {"agentbed": agentbed.__version__, "commit": code_commit()}


def provenance(suites: list[str]) -> dict[str, Any]:
    """What run.json, results.json and a log header record: agentbed's version and commit and
    each suite's origin (None when the suite was not loaded through :mod:`agentbed.suite`)."""
    return {**code(), "suites": {name: suite_origin(name) for name in suites}}


def differing_worlds(current: dict[str, Any] | None, baseline: dict[str, Any] | None) -> list[str]:
    """Lines saying which suites two provenance records (of a run and its baseline) load from
    different origins; none when either side records none (results written before provenance)."""
    if not isinstance(current, dict) or not isinstance(baseline, dict):
        return []
    lines = []
    mine, theirs = current.get("suites") or {}, baseline.get("suites") or {}
    for name in sorted(set(mine) & set(theirs)):
        if mine[name] != theirs[name]:
            lines.append(f"suite {name!r} differs: results from {_origin_text(mine[name])}, baseline from "
                         f"{_origin_text(theirs[name])}")
    return lines


def _origin_text(origin: dict[str, Any] | None) -> str:
    if not origin:
        return "an unrecorded origin"
    if origin.get("distribution"):
        return f"distribution {origin['distribution']} {origin.get('version')} ({origin.get('entry_point')})"
    return f"{origin.get('file')} (sha256 {str(origin.get('sha256'))[:12]})"
