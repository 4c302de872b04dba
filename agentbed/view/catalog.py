"""What the viewer knows of a folder of runs, kept up to date as the runs grow.

Read-only: nothing here writes a byte under a run directory. Every file goes through
:mod:`agentbed.validate` (index lines and run.json against their schemas) or
:mod:`agentbed.log` (trajectory records against the trajectory schema, the hash chain). A file
that fails becomes a problem naming it, shown in the page; the server never raises for one.

Following a run as it grows (as inspect's viewer follows an eval log being written): the run
index is append-only, so only the bytes after the last complete line already read are parsed on
the next look, and a torn last line (the writer is mid-``write``) waits for its newline. A log
in ``episodes/`` that no index line lists yet is an episode still running; its header names it.
Each file is re-read only when its (size, mtime) changes.

Every file is opened through :func:`agentbed.validate.open_regular` with the run directory as
its bound: a FIFO or a device named like a log is refused (never waited on), a link that leads
out of the run is not followed, and folders are listed without following links.
"""

from __future__ import annotations

import hashlib
import os
import threading
from collections.abc import Callable, Container, Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from agentbed.cost import PriceTable, episode_cost, load_prices
from agentbed.files import resolved
from agentbed.jsonstream import StreamedItems, read_folded, read_streamed
from agentbed.manifest import PLAN_SEEDS
from agentbed.problems import is_errored, last_line
from agentbed.rundir import read_run, subdirs
from agentbed.schemas import INDEX_RECORD_SCHEMA, RUN_META_SCHEMA, record_schema
from agentbed.scores import outcome_scores
from agentbed.seal import log_key
from agentbed.seal_verdict import SealStatus, seal_status
from agentbed.validate import MAX_LINE_BYTES, InputError, check, open_regular, parse_json, read_json
from agentbed.view.fastcheck import compile_simple
from agentbed.view.tally import IndexedRows, Known

INDEX = "index.jsonl"
MANIFEST = "manifest.json"
READ_CHUNK = 1 << 20  # bytes of the index read at a time
RUNNING = "running"
_INDEX_VALID = compile_simple(INDEX_RECORD_SCHEMA) or (lambda record: False)


def _stat(path: Path) -> tuple[int, int] | None:
    try:
        st = path.stat()
    except OSError:
        return None
    return (st.st_size, st.st_mtime_ns)


def is_run(path: Path) -> bool:
    return path.is_dir() and any((path / name).exists() for name in ("run.json", INDEX, "episodes"))


@dataclass
class IndexTail:
    """The run index read so far: records of complete lines up to ``offset``."""

    offset: int = 0
    records: list[dict[str, Any]] = field(default_factory=list)
    problems: list[str] = field(default_factory=list)
    inode: int | None = None
    lines: int = 0  # lines read so far, to name a bad line by its number
    fold: Callable[[dict[str, Any]], None] | None = None  # given: each record is passed to it, not kept
    starts: int = 0  # times the index was read from its start (a fold starts over with it)

    def follow(self, path: Path, inside: Path | None = None) -> None:
        try:
            st = path.stat()
        except OSError:
            return
        if st.st_ino != self.inode or st.st_size < self.offset:  # replaced or cut (``--resume``): start over
            self.offset, self.records, self.problems, self.inode, self.lines = 0, [], [], st.st_ino, 0
            self.starts += 1
        if st.st_size == self.offset:
            return
        try:
            with open_regular(path, what="run index", inside=inside) as fh:
                fh.seek(self.offset)
                left, torn = st.st_size - self.offset, b""
                while left > 0 and (chunk := fh.read(min(READ_CHUNK, left))):  # 100,000 lines are never held
                    left -= len(chunk)
                    data = torn + chunk
                    end = data.rfind(b"\n") + 1  # the last complete line; a torn one waits for its newline
                    self._lines(data[:end])
                    torn = data[end:]
        except InputError as exc:
            self.problems = [str(exc).removeprefix(f"{path}: ")]
        except OSError as exc:
            self.problems.append(f"cannot read ({exc.strerror or exc})")

    def _lines(self, data: bytes) -> None:
        """Complete lines read after ``offset``: each record kept (or folded), each bad line a problem."""
        line_no = self.lines
        for raw in data.split(b"\n")[:-1]:
            line_no += 1
            if not raw.strip():
                continue
            if len(raw) > MAX_LINE_BYTES:
                self.problems.append(f"line {line_no} is longer than {MAX_LINE_BYTES} bytes; episode left out")
                continue
            try:
                record = parse_json(raw, f"line {line_no}")
                if not _INDEX_VALID(record):  # the fast path said "not sure": the full check decides
                    check(record, INDEX_RECORD_SCHEMA, f"line {line_no}")
            except InputError as exc:
                self.problems.append(f"{exc}; episode left out")
                continue
            if self.fold is not None:
                self.fold(record)
            else:
                self.records.append(record)
        self.offset += len(data)
        self.lines = line_no


def episode_row(record: dict[str, Any], prices: PriceTable) -> dict[str, Any]:
    """One row of the episode table, from an index record (or a running episode's header)."""
    usage = record.get("usage") if isinstance(record.get("usage"), dict) else {}
    cost = episode_cost(usage, prices) if usage else None
    error = record.get("error") or ""
    return {"id": record["episode_id"], "suite": record.get("suite", ""), "task": record.get("task", ""),
            "agent": record.get("agent", ""), "seed": record.get("seed"), "status": record.get("status", ""),
            "success": bool(record.get("success")), "scores": outcome_scores(record.get("metrics")),
            "labels": list(record.get("labels") or []),
            "steps": record.get("steps"), "tokens": record.get("tokens"),
            "virtual_seconds": record.get("virtual_seconds"), "reward": record.get("total_reward"),
            "cost": cost, "error": last_line(error)[:200] if error.strip() else "",
            "errored": is_errored(record),  # not scored (agentbed.problems): the run's one definition
            "log": record.get("log") or f"episodes/{record['episode_id']}.jsonl"}


class RunView:
    """One run directory as the viewer sees it now."""

    def __init__(self, root: Path, rel: str, prices: PriceTable) -> None:
        self.root, self.rel, self.prices = root, rel, prices
        self.index = IndexTail()
        self._json: dict[str, tuple[Any, Any, str]] = {}  # rel -> (stat, value, problem)
        self._running: dict[str, tuple[Any, dict[str, Any] | None]] = {}  # log name -> (stat, header row)
        self._rows: list[dict[str, Any]] = []  # episode_row of index.records, extended as the index grows
        self._listing: tuple[Any, list[str]] = (None, [])  # (episodes/ stat, its .jsonl names)
        self._lock = threading.Lock()
        self._seal: tuple[Any, SealStatus] | None = None  # (what it was computed from, verify's verdict)
        self.counted = IndexTail(fold=self._fold)  # the index as the runs list reads it: rows folded, not kept
        self._indexed: tuple[int, IndexedRows] | None = None  # (counted.starts it began at, the fold)

    def seal(self) -> SealStatus:
        """``agentbed verify``'s verdict on this run (with the key when set), the very same check:
        computed again only when a file it reads changed (size or mtime)."""
        signature = (log_key(), self._signature())
        if self._seal is None or self._seal[0] != signature:
            self._seal = (signature, seal_status(self.root, signature[0]))
        return self._seal[1]

    def _signature(self) -> str:
        """A digest of the (size, mtime) of every file the seal reads, taken one entry at a time
        (the logs of 100,000 episodes are not kept to compare)."""
        digest = hashlib.sha256()
        for name in ("run.json", "manifest.json", INDEX, "results.json", "events.jsonl"):
            digest.update(repr((name, _stat(self.root / name))).encode("utf-8", "surrogatepass"))
        try:
            for entry in sorted(os.scandir(self.root), key=lambda e: e.name):
                if entry.is_dir(follow_symlinks=False):
                    part: Any = (entry.name, _stat(Path(entry.path) / "summary.json"), _stat(Path(entry.path)))
                    digest.update(repr(part).encode("utf-8", "surrogatepass"))
                    if entry.name == "episodes":
                        with os.scandir(entry.path) as logs:
                            for e in logs:
                                digest.update(repr((e.name, _stat(Path(e.path)))).encode("utf-8", "surrogatepass"))
                else:
                    digest.update(repr((entry.name, _stat(Path(entry.path)))).encode("utf-8", "surrogatepass"))
        except OSError:
            pass
        return digest.hexdigest()

    def _read(self, rel: str, schema: dict[str, Any] | None = None) -> tuple[Any, str]:
        path = self.root / rel
        stat = _stat(path)
        cached = self._json.get(rel)
        if cached is not None and cached[0] == stat:
            return cached[1], cached[2]
        value, problem = None, ""
        if stat is not None:
            try:
                with open_regular(path, inside=self.root):  # a link out of the run, a FIFO: refused
                    pass
                value = (_manifest(path) if rel == MANIFEST else read_folded(path, what="JSON file", schema=schema)
                         if rel == "run.json" else read_json(path, schema=schema))  # seeds held as a range
            except InputError as exc:
                problem = str(exc).removeprefix(f"{path}: ")
        self._json[rel] = (stat, value, problem)
        return value, problem

    def refresh(self) -> dict[str, Any]:
        """Everything the runs list and the run page need, read from what changed since last time."""
        with self._lock:
            return self._refresh()

    def _refresh(self) -> dict[str, Any]:
        problems: list[dict[str, str]] = []
        meta = self._meta(problems)
        self.index.follow(self.root / INDEX, self.root)
        problems += [{"file": INDEX, "message": p} for p in self.index.problems]
        if len(self._rows) > len(self.index.records) or (self._rows and self._rows[0]["id"] !=
                                                          self.index.records[0]["episode_id"]):
            self._rows = []  # the index was read again from the start
        self._rows += [episode_row(r, self.prices) for r in self.index.records[len(self._rows):]]
        rows = list(self._rows)
        manifest, running = self._live({r["id"] for r in rows}, problems, listed=True)
        known = {resolved(self.root / r["log"]) for r in rows + running}
        summaries = self._around(known, problems)
        return {"meta": meta, "rows": rows + running, "summaries": summaries, "manifest": manifest,
                "problems": problems}

    def listing(self) -> dict[str, Any]:
        """What the runs list needs: :meth:`refresh`'s state with, instead of the rows, their
        :class:`~agentbed.view.tally.RowTally` (the index is read as it grows, its rows folded)."""
        with self._lock:
            problems: list[dict[str, str]] = []
            meta = self._meta(problems)
            self.counted.follow(self.root / INDEX, self.root)
            problems += [{"file": INDEX, "message": p} for p in self.counted.problems]
            if self._indexed is None or self._indexed[0] != self.counted.starts:
                self._indexed = (self.counted.starts, IndexedRows(self.root))  # nothing indexed yet
            indexed = self._indexed[1]
            manifest, running = self._live(indexed.ids, problems, listed=False)
            summaries = self._around(Known(indexed, running), problems)
            return {"meta": meta, "tally": indexed.tally.plus(running), "summaries": summaries,
                    "manifest": manifest, "problems": problems}

    def _fold(self, record: dict[str, Any]) -> None:
        if self._indexed is None or self._indexed[0] != self.counted.starts:  # read again from its start
            self._indexed = (self.counted.starts, IndexedRows(self.root))
        self._indexed[1].add(episode_row(record, self.prices))

    def _meta(self, problems: list[dict[str, str]]) -> dict[str, Any] | None:
        meta, problem = self._read("run.json", RUN_META_SCHEMA)
        if problem:
            problems.append({"file": "run.json", "message": problem})
        return meta if isinstance(meta, dict) else None

    def _live(self, done: Container[str], problems: list[dict[str, str]], *, listed: bool,
              ) -> tuple[dict[str, Any] | None, list[dict[str, Any]]]:
        """The manifest and the rows of episodes still running (none once it is final)."""
        manifest, problem = self._read("manifest.json")
        if problem:
            problems.append({"file": "manifest.json", "message": problem})
        running = self._running_rows(done, problems, listed=listed)
        if isinstance(manifest, dict) and manifest.get("final"):
            running = []  # the run ended: nothing is running, unindexed logs are strays (shown apart)
        return (manifest if isinstance(manifest, dict) else None), running

    def _around(self, known: Container[Path], problems: list[dict[str, str]]) -> dict[str, Any]:
        """The run's summaries; what it holds that it does not seal goes to ``problems``."""
        layout = read_run(self.root)  # of a sealed run, only what its manifest seals is the run's
        problems += [{"file": rel, "message": why} for rel, why in layout.unsealed(known)]
        summaries: dict[str, Any] = {}
        for sub, path in layout.summaries().items():
            value, problem = self._read(layout.rel(path))
            if problem:
                problems.append({"file": layout.rel(path), "message": problem})
            elif isinstance(value, dict):
                summaries[sub] = value
        return summaries

    def _running_rows(self, done: Container[str], problems: list[dict[str, str]], *, listed: bool = True,
                      ) -> list[dict[str, Any]]:
        """Logs in ``episodes/`` that the index does not list: episodes being written (or left by a
        crash, which ``--resume`` re-runs). Each is named by its header line. ``listed``: keep the
        folder's names between looks (else it is read one entry at a time, each look)."""
        folder = self.root / "episodes"
        out: list[dict[str, Any]] = []
        stat = _stat(folder)
        if stat is None or folder.is_symlink():
            return out
        if listed and self._listing[0] != stat:  # a log was added or removed: list the folder again
            try:
                self._listing = (stat, [e.name for e in os.scandir(folder) if e.name.endswith(".jsonl")])
            except OSError:
                return out
        names = self._listing[1] if listed else _log_names(folder)
        if names is None:
            return out
        for name in names:
            if name[:-6] in done:
                continue
            try:
                st = os.stat(folder / name)
            except OSError:
                continue
            now = (st.st_size, st.st_mtime_ns)
            cached = self._running.get(name)
            if cached is None or cached[0] != now:
                cached = self._running[name] = (now, self._running_row(folder / name, problems))
            if cached[1] is not None:
                out.append(cached[1])
        return out

    def _running_row(self, path: Path, problems: list[dict[str, str]]) -> dict[str, Any] | None:
        rel = f"episodes/{path.name}"
        try:
            with open_regular(path, what="trajectory log", inside=self.root) as fh:
                first = fh.readline(MAX_LINE_BYTES + 1)
                steps = sum(1 for line in fh if line.startswith(b'{"type":"step"'))
        except InputError as exc:
            problems.append({"file": rel, "message": str(exc).removeprefix(f"{path}: ")})
            return None
        except OSError as exc:
            problems.append({"file": rel, "message": f"cannot read ({exc.strerror or exc})"})
            return None
        if not first.endswith(b"\n"):
            return None  # the header is being written
        try:
            header = parse_json(first, "line 1")
            check(header, record_schema("header"), "line 1 (header)")
        except InputError as exc:
            problems.append({"file": rel, "message": str(exc)})
            return None
        row = episode_row({**header, "agent": header.get("agent_id"), "status": RUNNING, "success": False,
                           "steps": steps, "log": rel}, self.prices)
        return row


def _manifest(path: Path) -> Any:
    """The manifest as ``read_json`` reads it, but for its sealed pairs: read one at a time and not
    kept (the viewer asks only whether it is final)."""
    doc = read_streamed(path, "episodes", what="JSON file", schema={}, item_ok=lambda item: True, fold=PLAN_SEEDS)
    if isinstance(doc, dict) and isinstance(doc.get("episodes"), StreamedItems):
        doc["episodes"].close()
        doc["episodes"] = None
    return doc


def _log_names(folder: Path) -> Iterator[str] | None:
    """The names of the logs in ``folder``, one entry at a time; None if it cannot be listed."""
    try:
        entries = os.scandir(folder)
    except OSError:
        return None

    def names() -> Iterator[str]:
        with entries:
            yield from (e.name for e in entries if e.name.endswith(".jsonl"))
    return names()


class Catalog:
    """The runs under a folder (or the one run it is)."""

    def __init__(self, root: str | os.PathLike[str]) -> None:
        self.root = Path(root)
        self.prices = load_prices()
        self._runs: dict[str, RunView] = {}
        self._lock = threading.Lock()

    def run_paths(self) -> dict[str, Path]:
        if is_run(self.root):
            return {".": self.root}
        found: dict[str, Path] = {}
        for child in subdirs(self.root):
            if is_run(child):
                found[child.name] = child
            else:
                for grandchild in subdirs(child):
                    if is_run(grandchild):
                        found[f"{child.name}/{grandchild.name}"] = grandchild
        return found

    def runs(self) -> dict[str, RunView]:
        paths = self.run_paths()
        with self._lock:
            for rel, path in paths.items():
                if rel not in self._runs:
                    self._runs[rel] = RunView(path, rel, self.prices)
            for gone in set(self._runs) - set(paths):
                del self._runs[gone]
            return dict(self._runs)

    def run(self, rel: str) -> RunView | None:
        return self.runs().get(rel)
