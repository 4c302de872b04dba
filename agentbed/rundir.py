"""The one reader of a run directory's layout, for verify, report, view and export alike.

A run directory holds what ``agentbed run`` sealed (run.json, the index, results, summaries:
the files its manifest lists, and the logs the index and manifest name) and possibly more:
``inspect/`` and ``branches/`` written by later verbs, a workload's own index, stray logs,
links. :func:`read_run` says which is which once, so the four readers cannot disagree on what
is the run's: of a sealed run, only what the manifest seals is read as the run's, and
everything else is listed by :meth:`RunDirectory.unsealed` to be shown apart, never counted.
A directory without a manifest (``agentbed demo``, a workload's own folder) is read whole;
the seal verdict says it is unsealed. No link is followed when listing folders.
"""

from __future__ import annotations

import os
from collections.abc import Container, Iterable, Iterator, Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from agentbed import manifest as mf
from agentbed.validate import InputError, read_json

INDEX = "index.jsonl"
SUMMARY = "summary.json"
EPISODES = "episodes"
TEAM_SUFFIX = ".team.json"
TEAM_MANIFEST_SCHEMA: dict[str, Any] = {
    "type": "object", "required": ["agents"],
    "properties": {"agents": {"type": "array", "items": {
        "type": "object", "required": ["log"],
        "properties": {"log": {"type": "string", "minLength": 1}, "digest": {"type": ["string", "null"]}}}}},
}
# folders other verbs write into a run directory after it ended (export, branch): not the run's
OUTPUT_DIRS = {"inspect", "branches"}
UNSEALED = "unsealed, not verified: not shown or counted (the run's manifest does not seal it)"
LINK = "a link, not followed: unsealed, not verified, not shown or counted"


def subdirs(root: Path) -> list[Path]:
    """The folders of ``root`` (workload folders, ``inspect/``, ``branches/``), sorted, without
    ``episodes/`` and without following links."""
    try:
        return sorted(Path(e.path) for e in os.scandir(root)
                      if e.is_dir(follow_symlinks=False) and e.name != EPISODES)
    except OSError:
        return []


def _links(folder: Path) -> list[Path]:
    try:
        return sorted(Path(e.path) for e in os.scandir(folder) if e.is_symlink())
    except OSError:
        return []


def _named_logs(folder: Path) -> Iterator[Path]:
    """``folder.glob("*.jsonl")``, one entry at a time (pathlib lists a folder whole first), none
    when ``folder`` is no folder or a link."""
    if not folder.is_dir() or folder.is_symlink():
        return
    try:
        with os.scandir(folder) as entries:
            for entry in entries:
                if entry.name.endswith(".jsonl"):
                    yield Path(entry.path)
    except OSError:
        return


def _json_files(root: Path, skip: Path) -> Iterator[Path]:
    """``root.rglob("*.json*")``'s files named ``*.json`` or ``*.jsonl``, without the
    files directly in ``skip`` (its folders are still searched), one entry at a time; folders
    reached by a link are not searched, as rglob does not."""
    try:
        with os.scandir(root) as entries:
            for entry in entries:
                path = Path(entry.path)
                if entry.is_dir() and not entry.is_symlink():
                    yield from _json_files(path, skip)
                if root != skip and path.suffix in (".json", ".jsonl"):
                    yield path
    except OSError:
        return


def sealed_parts(root: Path) -> set[str] | None:
    """The relative paths of the files a run's manifest seals (run.json, the index, results,
    summaries), or None when the directory holds no manifest. The manifest is read as verify
    reads it; a malformed one seals nothing (verify exits 2 on it)."""
    if not (root / mf.MANIFEST).is_file():
        return None
    try:
        doc = mf.load(root, streamed=True)  # not its sealed pairs
        mf.close(doc)
        return set(doc["files"])
    except InputError:
        return set()


def log_path(root: Path, index_dir: Path, record: dict[str, Any]) -> Path:
    """Where an index line's log is: its ``log`` field, relative to the run directory (or to the
    index's own folder, for a workload's index that names logs so), else
    ``<index folder>/episodes/<episode id>.jsonl``."""
    named = record.get("log")
    if isinstance(named, str) and named:
        if not Path(named).is_absolute() and not (root / named).exists() and (index_dir / named).exists():
            return index_dir / named
        return root / named
    return index_dir / EPISODES / f"{record['episode_id']}.jsonl"


def leads_out(path: Path, root: Path) -> bool:
    """Whether ``path`` (a log the run names) is, or passes through, a link out of ``root``: the
    run does not hold that log (a copy of the run loses it, an edit outside changes it), and the
    viewer never shows it, so verify names it (session 20's probe: it verified)."""
    return not Path(os.path.realpath(path)).is_relative_to(os.path.realpath(root))


def team_members(path: Path) -> list[dict[str, Any]]:
    """A team manifest's (CoCoder's unit) member entries: ``log`` (relative to it), ``digest``.
    A malformed manifest raises InputError naming it."""
    members: list[dict[str, Any]] = read_json(path, what="team manifest", schema=TEAM_MANIFEST_SCHEMA)["agents"]
    return members


def member_logs(root: Path, records: Iterable[Mapping[str, Any]]) -> set[Path]:
    """The member logs of the team units these index lines name (a malformed team manifest is
    reported where its unit is checked, and ties no log here)."""
    out: set[Path] = set()
    for record in records:
        named = str(record.get("log", ""))
        if named.endswith(TEAM_SUFFIX) and (root / named).is_file():
            try:
                out |= {(root / named).parent / m["log"] for m in team_members(root / named)}
            except InputError:
                continue
    return out


def record_from_log(log: list[dict[str, Any]], rel: str) -> dict[str, Any] | None:
    """An index-like record rebuilt from a log's header and footer, for logs no index lists
    (workloads that write ``<suite>/episodes/`` without an index). None if there is no header."""
    if not log or log[0].get("type") != "header" or not isinstance(log[0].get("episode_id"), str):
        return None
    header, footer = log[0], (log[-1] if log[-1].get("type") == "footer" else {})
    agent: dict[str, Any] = header["agent"] if isinstance(header.get("agent"), dict) else {}
    return {"episode_id": header["episode_id"], "suite": header.get("suite", ""), "task": header.get("task", ""),
            "agent": header.get("agent_id") or agent.get("name", ""), "seed": header.get("seed"),
            "status": footer.get("status", "incomplete"), "success": bool(footer.get("success")),
            "total_reward": footer.get("total_reward"), "steps": footer.get("steps"),
            "virtual_seconds": footer.get("virtual_seconds"), "tokens": footer.get("tokens"),
            "metrics": footer.get("metrics") or {}, "labels": footer.get("labels") or [],
            "options": header.get("options") or {}, "log": rel, "digest": "", "error": footer.get("error") or ""}


@dataclass(frozen=True)
class RunDirectory:
    """What a run directory holds, and which of it is the run's (see the module's docstring)."""

    root: Path
    sealed: frozenset[str] | None  # the files the manifest seals; None: no manifest (an unsealed folder)
    folders: tuple[Path, ...]  # its folders, not ``episodes/``, no links

    def rel(self, path: Path) -> str:
        try:
            return path.relative_to(self.root).as_posix()
        except ValueError:
            return str(path)

    def indexes(self) -> list[Path]:
        """The indexes whose episodes are the run's: of a sealed run its own; else every one."""
        found = [self.root / INDEX] + ([] if self.sealed is not None else [f / INDEX for f in self.folders])
        return [p for p in found if p.is_file()]

    def summaries(self) -> dict[str, Path]:
        """Workload -> its summary.json, of those that are the run's (sealed, in a sealed run)."""
        return {f.name: f / SUMMARY for f in self.folders
                if (f / SUMMARY).is_file() and (self.sealed is None or self.rel(f / SUMMARY) in self.sealed)}

    def episode_logs(self, *, ordered: bool = True) -> list[Path] | Iterator[Path]:
        """The files named like logs in the run's ``episodes/`` folder, sorted (or, ``ordered=False``,
        one at a time as the folder lists them: a caller that keeps few of 100,000 sorts those)."""
        found = _named_logs(self.root / EPISODES)
        return sorted(found) if ordered else found

    def loose_logs(self, known: Container[Path]) -> list[Path]:
        """Logs under ``episodes/`` and ``<folder>/episodes/`` that no index line names
        (``known``: resolved paths of those that one does), links left out; sorted, and only
        those kept (a run of 100,000 logs is listed one entry at a time)."""
        folders = [self.root / EPISODES, *(f / EPISODES for f in self.folders)]
        return [log for folder in folders
                for log in sorted(p for p in _named_logs(folder) if not p.is_symlink() and p.resolve() not in known)]

    def unsealed_files(self) -> list[Path]:
        """JSON and JSONL files of a sealed run its manifest does not seal, outside ``episodes/``
        (logs are matched with the index there) and the folders later verbs write."""
        if self.sealed is None:
            return []
        # filtered, then sorted: the logs under episodes/ are never listed (see _json_files)
        return sorted(p for p in _json_files(self.root, self.root / EPISODES) if p.is_file()
                      and self.rel(p) not in self.sealed | {mf.MANIFEST}
                      and not OUTPUT_DIRS & set(p.relative_to(self.root).parts[:-1]))

    def unsealed(self, known: Container[Path]) -> list[tuple[str, str]]:
        """(relative path, why) of everything in the directory a reader must show apart from the
        run: links (never followed), and of a sealed run any index, summary or log it does not
        seal (``known``: the resolved logs the run's index names). Sorted, each once."""
        out = {self.rel(p): LINK for p in _links(self.root) + _links(self.root / EPISODES)}
        if self.sealed is not None:
            for f in self.folders:
                out.update({self.rel(p): UNSEALED for p in (f / INDEX, f / SUMMARY)
                            if p.is_file() and self.rel(p) not in self.sealed})
            out.update({self.rel(p): UNSEALED for p in self.loose_logs(known)})
        return sorted(out.items())


def read_run(root: str | os.PathLike[str], manifest: Mapping[str, Any] | None = None) -> RunDirectory:
    """The layout of the run directory ``root`` (cheap: reads its manifest and lists folders;
    ``manifest``: that manifest, already read and validated, so it is not read again)."""
    path = Path(root)
    sealed = set(manifest["files"]) if manifest is not None else sealed_parts(path)
    return RunDirectory(path, None if sealed is None else frozenset(sealed), tuple(subdirs(path)))
