"""Which code made a log: agentbed's version and git commit, and where each suite came from.

A suite's origin is the distribution and version that installed it (a packaged plugin), or the
SHA-256 of its source file (a one-file suite, ``agentbed run path/to/suite.py``, or a module named
``my.module:SUITE`` that no distribution installed). :mod:`agentbed.suite` records the origin of
each suite it loads; run.json, results.json and every log header carry it, and ``gate`` warns
when a run and its baseline were made by different worlds.

The commit is read from the files of the git checkout agentbed runs from, once per process; it
is None for an installed copy outside a checkout. Whether that checkout differs from its commit is
asked of ``git status`` (one ``git`` process per process, only inside a checkout): ``dirty`` is
true or false, None when git cannot say (not installed, or refusing the checkout), and a dirty
tree's changes are named by ``diff_sha256``: the SHA-256 of ``git diff --binary HEAD`` followed by
each untracked, unignored file's path and bytes, so two logs made by one uncommitted state agree.

An executor puts the driver's provenance into every episode spec it runs (``EpisodeSpec.provenance``),
so a log written on a Ray node, whose installed copy records no commit, names the driver's code.
"""

from __future__ import annotations

import hashlib
import subprocess
from functools import cache
from importlib.metadata import EntryPoint, entry_points
from pathlib import Path
from typing import Any

import agentbed
from agentbed.errors import printable

SUITES_GROUP = "agentbed.suites"  # the entry-point group of packaged suites
_ORIGINS: dict[str, dict[str, Any]] = {}


def _checkout_root() -> Path:
    return Path(agentbed.__file__).resolve().parent.parent


@cache
def code_commit(root: Path | None = None) -> str | None:
    """The git commit of the checkout at ``root`` (default: the one holding this agentbed
    package; None outside one)."""
    dot = (root or _checkout_root()) / ".git"
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


@cache
def tree_state(root: Path | None = None) -> dict[str, Any]:
    """``{"dirty": bool | None}``, with ``diff_sha256`` when dirty, for the checkout at ``root``
    (default: the one holding this package; {} outside one; see the module docstring)."""
    root = root or _checkout_root()
    if not (root / ".git").exists():
        return {}
    try:
        status = _git(root, "status", "--porcelain=v1", "-z", "--untracked-files=all")
        entries = [e for e in status.split(b"\0") if e and not (
            e.startswith(b"?? ") and _run_output(root, root / e[3:].decode("utf-8", "surrogateescape")))]
        if not entries:
            return {"dirty": False}
        digest = hashlib.sha256(_git(root, "diff", "--binary", "HEAD"))
        for entry in sorted(e[3:] for e in entries if e.startswith(b"?? ")):
            digest.update(b"\0untracked\0" + entry + b"\0")
            path = root / entry.decode("utf-8", "surrogateescape")
            if path.is_file() and not path.is_symlink():
                digest.update(hashlib.sha256(path.read_bytes()).digest())
    except (OSError, subprocess.SubprocessError):
        return {"dirty": None}
    return {"dirty": True, "diff_sha256": digest.hexdigest()}


def _run_output(root: Path, path: Path) -> bool:
    """An untracked file inside a run directory in the checkout (``--out`` not under the ignored
    ``runs/``): a run's output, not code. Counted, it made the code of a run's own resume differ
    (its logs and index are new untracked files), so ``--resume`` refused it (session 20)."""
    for parent in path.parents:
        if parent == root or root not in parent.parents:
            return False
        if (parent / "run.json").is_file() and ((parent / "manifest.json").is_file() or (parent / "index.jsonl").is_file()):
            return True
    return False


def _git(root: Path, *args: str) -> bytes:
    # safe.directory: a checkout owned by another user is still read (git refuses it otherwise)
    done = subprocess.run(["git", "-c", "safe.directory=*", "-C", str(root), *args], capture_output=True,
                          timeout=60, check=True)
    return done.stdout


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
    """agentbed's own provenance: version, commit and whether the checkout differs from it."""
    return {"agentbed": agentbed.__version__, "commit": code_commit(), **tree_state()}


def header_provenance(suite: str) -> dict[str, Any]:
    """A log header's provenance: :func:`code` and the suite's origin."""
    return {**code(), "suite": suite_origin(suite)}


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
        if _world(mine[name]) != _world(theirs[name]):
            lines.append(f"suite {name!r} differs: results from {_origin_text(mine[name])}, baseline from "
                         f"{_origin_text(theirs[name])}")
    return lines


def _world(origin: Any) -> Any:
    """What identifies a suite's world in its origin: agentbed's own suites by entry point alone
    (their version is agentbed's, which gate prints for each side), others with their version or sha256."""
    if isinstance(origin, dict) and origin.get("distribution") == "agentbed":
        return {k: v for k, v in origin.items() if k != "version"}
    return origin


def _origin_text(origin: dict[str, Any] | None) -> str:
    if not origin:
        return "an unrecorded origin"
    if origin.get("distribution"):
        return _printable(f"distribution {origin['distribution']} {origin.get('version')} ({origin.get('entry_point')})")
    return _printable(f"{origin.get('file') or origin.get('module')} (sha256 {str(origin.get('sha256'))[:12]})")


def describe(record: Any) -> str:
    """One line naming the code that made a results file or baseline: its agentbed version and
    commit (dirty or not) and each suite's origin; values from the file are shown printable only."""
    if not isinstance(record, dict) or not record:
        return "no provenance recorded"
    commit = _printable(record.get("commit"))[:12] if record.get("commit") else "no commit"
    dirty = record.get("dirty")
    state = (f", dirty (diff sha256 {_printable(record.get('diff_sha256'))[:12]})" if dirty
             else "" if dirty is False else ", clean or dirty unknown")
    suites = record.get("suites")
    suites = suites if isinstance(suites, dict) else {}
    worlds = "; ".join(f"{_printable(name)} from {_origin_text(origin if isinstance(origin, dict) else None)}"
                       for name, origin in sorted(suites.items()))
    note = f" [{_printable(record['note'])}]" if record.get("note") else ""
    mixed = record.get("mixed")
    if isinstance(mixed, list) and mixed:  # agentbed.code_versions: a resume under other code
        note += f" [MIXED CODE: {len(mixed)} code version(s) wrote its episodes, not only this one; see provenance.mixed]"
    return f"agentbed {_printable(record.get('agentbed'))}, commit {commit}{state}" + \
        (f"; {worlds}" if worlds else "") + note


def _printable(value: Any) -> str:
    """A value from a file as one printable line (no terminal control sequences), at most 200 characters."""
    return printable(str(value))[:200]
