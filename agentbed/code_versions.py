"""Which code wrote a run's episodes: one version, or a mix after a resume under other code.

Each log's header names the code of the invocation that ran it (``provenance``: agentbed's
version, git commit, whether the checkout was dirty and the digest of its changes, and the
suite's origin; :mod:`agentbed.provenance`); run.json names the code that started the run.
``agentbed run --resume`` under code other than run.json names is refused (exit 2) unless
``--allow-mixed-code`` is given (:func:`check_resume`). A run resumed so is *mixed*: at its end
results.json's ``provenance`` carries ``mixed``, every code version that wrote episodes with
how many, read from the logs themselves (:meth:`CodeTally.add_record`); ``agentbed verify`` (and so
the report, the viewer and the gate) counts the versions in the logs it checks, says the run is
mixed, and names a results.json that does not say what the logs say (:func:`results_disagree`).
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from pathlib import Path
from typing import Any

from agentbed.errors import UsageError
from agentbed.provenance import describe
from agentbed.rundir import TEAM_SUFFIX, log_path, team_members
from agentbed.validate import MAX_LINE_BYTES, InputError, open_regular

ALLOW_FLAG = "--allow-mixed-code"
IDENTITY = ("agentbed", "commit", "dirty", "diff_sha256", "suite")  # what names the code in a provenance


def identity(provenance: Any) -> dict[str, Any]:
    """The members of a log header's provenance that name the code (absent ones as None)."""
    given = provenance if isinstance(provenance, Mapping) else {}
    return {k: given.get(k) for k in IDENTITY}


def started_by(meta: Mapping[str, Any]) -> dict[str, Any] | None:
    """run.json's provenance in a log header's form (its suite's origin as ``suite``); None when
    run.json records none (a run written before provenance)."""
    recorded = meta.get("provenance")
    if not isinstance(recorded, Mapping):
        return None
    suites = recorded.get("suites")
    origin = suites.get(meta.get("suite")) if isinstance(suites, Mapping) else None
    return identity({**recorded, "suite": origin})


def text(code: Mapping[str, Any] | None, suite: str) -> str:
    """One printable line naming a code version (:func:`agentbed.provenance.describe`)."""
    if code is None:
        return "no provenance recorded"
    return describe({**{k: v for k, v in code.items() if k != "suite"}, "suites": {suite: code.get("suite")}})


def check_resume(meta: Mapping[str, Any], current: Mapping[str, Any], where: str, allowed: bool) -> bool:
    """Whether resuming the run ``meta`` (run.json) under ``current`` (this process's header
    provenance) goes on under other code than started it; refused (UsageError, exit 2) unless
    ``allowed``. A run.json that records no provenance (written before it) claims no code: not
    refused, and a mix shows in its logs (:class:`CodeTally`)."""
    recorded, mine = started_by(meta), identity(current)
    if recorded is None or recorded == mine:
        return False
    if allowed:
        return True
    suite = str(meta.get("suite", ""))
    raise UsageError(f"{where}: field 'provenance' says the run was started by {text(recorded, suite)}; this is "
                     f"{text(mine, suite)}: resuming would mix code versions in one run. Resume with the code that "
                     f"started it, or pass {ALLOW_FLAG} (results.json and verify then name every version)")


class CodeTally:
    """How many episodes each code version wrote (few versions, however many episodes). The run
    is mixed when they are more than one, or when any is not ``started`` (the code run.json
    names, :func:`started_by`: a resume under other code of a run none of whose episodes had
    finished leaves one version, not the one results.json's provenance names)."""

    def __init__(self, started: Mapping[str, Any] | None = None) -> None:
        self._counts: dict[str, int] = {}
        self._started = None if started is None else self._key(started)

    @staticmethod
    def _key(provenance: Any) -> str:
        return json.dumps(identity(provenance), sort_keys=True, ensure_ascii=False)

    def add(self, provenance: Any) -> None:
        key = self._key(provenance)
        self._counts[key] = self._counts.get(key, 0) + 1

    def add_record(self, root: Path, record: Mapping[str, Any]) -> None:
        """Count the version the log of this index record names (an unreadable log is left out:
        ``verify`` names it)."""
        header = unit_header(log_path(root, root, dict(record)))
        if header is not None:
            self.add(header.get("provenance"))

    @property
    def mixed(self) -> bool:
        return len(self._counts) > 1 or (self._started is not None and any(k != self._started for k in self._counts))

    def versions(self) -> list[dict[str, Any]]:
        """Each version with its ``episodes``, most episodes first (ties by the version's JSON)."""
        ranked = sorted(self._counts.items(), key=lambda kv: (-kv[1], kv[0]))
        return [{**json.loads(key), "episodes": n} for key, n in ranked]

    def words(self, suite: str) -> str:
        """"mixed code: N versions wrote its episodes (...)", or "" for one version."""
        if not self.mixed:
            return ""
        parts = "; ".join(f"{v['episodes']} by {text(v, suite)}" for v in self.versions())
        started = "" if self._started is None else f", started by {text(json.loads(self._started), suite)}"
        return f"MIXED CODE: {len(self._counts)} code version(s) wrote its episodes ({parts}){started}"


def unit_header(path: Path) -> dict[str, Any] | None:
    """The header of an episode's log (a team unit's: its first member's); None when unreadable."""
    try:
        if path.name.endswith(TEAM_SUFFIX):
            members = team_members(path)
            if not members:
                return None
            path = path.parent / members[0]["log"]
        with open_regular(path, what="trajectory log") as fh:
            header = json.loads(fh.readline(MAX_LINE_BYTES))
    except (InputError, OSError, ValueError):
        return None
    return header if isinstance(header, dict) else None


def results_disagree(results: Mapping[str, Any], tally: CodeTally, where: str) -> str:
    """Why results.json's ``provenance.mixed`` is not what the logs say ("" when it is)."""
    recorded = results.get("provenance")
    claimed = recorded.get("mixed") if isinstance(recorded, Mapping) else None
    found = tally.versions() if tally.mixed else None
    if claimed == found:
        return ""
    if found is None:
        return f"{where}: field 'provenance.mixed' names {len(claimed or [])} code versions, the logs the starting one"
    if claimed is None:
        return (f"{where}: field 'provenance' names the code that started the run, but its episodes' logs name "
                f"{len(found)} other or more (resumed under other code, by an agentbed that did not record it)")
    return f"{where}: field 'provenance.mixed' differs from the code versions the episodes' logs name"
