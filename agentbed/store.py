"""A run directory: trajectory logs plus an append-only index of finished episodes.

Layout::

    RUN_DIR/run.json                 what was run (the plan, so --resume can finish it)
    RUN_DIR/index.jsonl              one EpisodeRecord per finished episode
    RUN_DIR/episodes/<id>.jsonl      one chained trajectory log per episode
    RUN_DIR/manifest.json            the seal: plan, Merkle root over (id, digest), files (agentbed/manifest.py)
    RUN_DIR/.lock                    the writer's lock (holds its pid)
    RUN_DIR/retried/<id>.<n>.jsonl.retried   logs of errored episodes that --resume --retry-errors re-ran

The index line of an episode is appended only after its log is closed, and it carries the log's
final digest. During a run lines are group-committed (:meth:`RunStore.group_commit`,
:mod:`agentbed.groupcommit`: a ``syncfs`` that puts the batch's logs on disk, then one ``write``
and one fsync per batch of at most 64 lines or 5 ms; otherwise each line is committed as it
comes), and an episode counts as finished, for the seal
and for the ``on_finished`` callback a run reports progress from, only once its line is on
disk. An episode is finished exactly when the index lists it. A run killed at any point leaves finished
episodes, possibly some logs without an index line (complete or cut short), and perhaps a
torn last index line: resuming cuts the torn line and re-runs every episode not in the index,
overwriting its log, so no episode is lost or counted twice.

One writer: :meth:`RunStore.create` and :meth:`RunStore.open_existing` take an exclusive
``flock`` on ``RUN_DIR/.lock`` for as long as the store is open (the kernel drops it when the
process ends, however it ends), so a second run or ``--resume`` on the same directory is
refused instead of interleaving its index lines with the first one's.

For executors whose workers cannot write the run directory (Ray on a cluster), the driver
calls :meth:`RunStore.write_log` with the log's bytes, then :meth:`RunStore.append`.
"""

from __future__ import annotations

import fcntl
import json
import os
import uuid
from collections.abc import Callable, Iterable, Iterator, Mapping
from pathlib import Path
from typing import TYPE_CHECKING, Any

from agentbed.diskmap import DiskMap
from agentbed.errors import UsageError
from agentbed.files import resolved, write_atomic
from agentbed.groupcommit import GroupCommit
from agentbed.jsonstream import iter_streamed, read_folded
from agentbed.manifest import ManifestWriter, plan_of
from agentbed.schemas import INDEX_RECORD_SCHEMA, RUN_META_SCHEMA
from agentbed.seal import log_key
from agentbed.validate import InputError, bounded_lines, check_line, open_regular, parse_json, parse_own_json

if TYPE_CHECKING:  # the runner imports gymnasium (and numpy): the readers of a run (verify, report, gate) need neither
    from agentbed.runner import EpisodeRecord

INDEX = "index.jsonl"
RUN_META = "run.json"
LOCK = ".lock"
RETRIED = "retried"  # logs of episodes --retry-errors ran again, kept beside the run


class RunStore:
    def __init__(self, run_dir: str | os.PathLike[str]) -> None:
        self.root = Path(run_dir)
        self.episodes = self.root / "episodes"
        self._lock_fd: int | None = None
        self._seal: ManifestWriter | None = None
        self.run_id = ""
        # each line at once, until group_commit(); the logs its lines name are flushed before them
        self._index = GroupCommit(self.root / INDEX, max_seconds=0, sync_first=True)
        # Where this process's own index lines begin: under the writer lock nobody else appends,
        # and each of them was made from a record here, so re-reading them skips the schema check
        # (it cost more than a trivial episode's whole run when a run re-read its own index).
        self._own_from: int | None = None
        # runs once an episode's line is durable (in the group commit's committer thread, or the caller's)
        self.on_finished: Callable[[EpisodeRecord | dict[str, Any]], None] | None = None

    # -- one writer ------------------------------------------------------------------------
    def lock(self) -> None:
        """Take the writer lock; a second writer gets a UsageError naming the holder's pid."""
        if self._lock_fd is not None:
            return
        try:
            fd = os.open(self.root / LOCK, os.O_RDWR | os.O_CREAT, 0o644)
        except OSError as exc:
            raise UsageError(f"--out {self.root}: cannot write there ({exc.strerror})") from None
        try:
            fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except BlockingIOError:
            holder = os.pread(fd, 32, 0).decode("ascii", "replace").strip() or "?"
            os.close(fd)
            raise UsageError(f"--out {self.root}: another agentbed process (pid {holder}) is writing this run "
                             "directory; wait for it to end") from None
        os.ftruncate(fd, 0)
        os.pwrite(fd, f"{os.getpid()}\n".encode(), 0)
        self._lock_fd = fd

    def unlock(self) -> None:
        if self._lock_fd is not None:
            self._index.close()  # the lines queued under the lock land before another writer can take it
            os.close(self._lock_fd)  # closing the descriptor releases the flock
            self._lock_fd = None

    def __enter__(self) -> RunStore:
        return self

    def __exit__(self, *exc: object) -> None:
        self.unlock()

    # -- plan ------------------------------------------------------------------------------
    def exists(self) -> bool:
        return (self.root / RUN_META).exists()

    def create(self, meta: dict[str, Any]) -> dict[str, Any]:
        """Record a new run's plan, holding the writer lock; return what run.json holds (its
        seeds may be a ``range``, written as the list of its integers)."""
        if self.root.exists() and not self.root.is_dir():
            raise UsageError(f"--out {self.root}: exists and is not a directory")
        if self.exists():
            raise UsageError(f"--out {self.root}: a run is already recorded there; use --resume to finish it "
                             "or choose another directory")
        try:
            self.episodes.mkdir(parents=True, exist_ok=True)
        except OSError as exc:
            raise UsageError(f"--out {self.root}: cannot create the run directory ({exc.strerror})") from None
        self.lock()
        if self.exists():  # another writer recorded its plan between our check and our lock
            self.unlock()
            raise UsageError(f"--out {self.root}: a run is already recorded there; use --resume to finish it")
        self.run_id = uuid.uuid4().hex  # what binds the manifest to this run, not another of the same plan
        meta = {**meta, "run_id": self.run_id}
        # json.dumps(meta, indent=1, sort_keys=True), with a range of seeds as the list of its integers
        write_atomic(self.root / RUN_META, "".join(iter_streamed(meta, indent=1)).encode("utf-8"))
        plan = plan_of(meta)
        if plan is not None:
            self._seal = ManifestWriter(self.root, plan, self.run_id, {}, log_key())
            self._seal.write(complete=False)
        return meta

    def meta(self) -> dict[str, Any]:
        """run.json, validated: a missing, malformed or mistyped field is a one-line error."""
        path = self.root / RUN_META
        if not path.exists():
            if self.root.exists() and not self.root.is_dir():
                raise UsageError(f"--out {self.root}: not a run directory")
            raise UsageError(f"{path}: no run recorded here (missing {RUN_META})")
        return read_folded(path, what="run.json", schema=RUN_META_SCHEMA)  # dict[str, Any]: the schema's object

    def open_existing(self, sealed: Mapping[str, str] | Iterable[tuple[str, str]] | None = None) -> dict[str, Any]:
        """Take the writer lock of a recorded run and return its plan; with ``sealed`` (the
        finished episodes and their digests, as :func:`agentbed.seal_verdict.open_for_resume`
        verified them: the only way the CLI resumes), go on extending the run's seal."""
        self.lock()
        meta = self.meta()
        plan = plan_of(meta)
        if plan is not None and sealed is not None:
            self.run_id = meta["run_id"]
            self._seal = ManifestWriter(self.root, plan, self.run_id, sealed, log_key())
            self._seal.write(complete=False)  # no longer final: this resume's episodes are not sealed yet
        return meta

    def set_aside(self, episode_ids: set[str]) -> list[str]:
        """``--resume --retry-errors``: take these finished episodes out of the run so they run
        again. Their index lines are dropped (the index rewritten atomically) and their logs kept
        beside the run as ``retried/<id>.<n>.jsonl.retried`` (never overwritten, never counted),
        and the seal goes on from the episodes that stay. Needs the writer lock
        (:meth:`open_existing`). Returns the ids set aside."""
        if self._lock_fd is None:
            raise RuntimeError("set_aside needs the writer lock (open_existing first)")
        lines = [(number, record) for number, record in iter_index(self.root / INDEX)]
        chosen = sorted({r["episode_id"] for _, r in lines} & set(episode_ids))
        if not chosen:
            return []
        aside = self.root / RETRIED
        aside.mkdir(exist_ok=True)
        for eid in chosen:
            log = self.root / next(r.get("log") or f"episodes/{eid}.jsonl" for _, r in lines if r["episode_id"] == eid)
            n = sum(1 for p in aside.glob(f"{eid}.*.jsonl.retried")) + 1
            if log.exists():
                os.replace(log, aside / f"{eid}.{n}.jsonl.retried")
        kept = [r for _, r in lines if r["episode_id"] not in set(chosen)]
        data = b"".join((json.dumps(r, ensure_ascii=False, sort_keys=True, default=str) + "\n").encode("utf-8")
                        for r in kept)
        write_atomic(self.root / INDEX, data)
        if self._seal is not None:
            self._seal.drop(chosen)
            self._seal.write(complete=False)
        return chosen

    def finish(self, files: list[str]) -> bool:
        """Seal the run with the digests of ``files`` (relative paths); True when complete."""
        self.flush()
        return self._seal.finish(files) if self._seal is not None else False

    # -- episodes --------------------------------------------------------------------------
    def log_path(self, episode_id: str) -> Path:
        return self.episodes / f"{episode_id}.jsonl"

    def write_log(self, episode_id: str, data: bytes) -> Path:
        """Put a finished log's bytes (as a worker sent them) in place atomically: a kill
        leaves the old file or the new one, never half. Then :meth:`append` its record."""
        path = self.log_path(episode_id)
        write_atomic(path, data)
        return path

    def discard_partial(self) -> int:
        """Cut a torn last index line (a kill during its write) so that new lines start on a
        line of their own, and delete ``.part``/``.tmp`` files a kill left; return how many
        were deleted. Logs of unlisted episodes are overwritten when they are re-run."""
        index = self.root / INDEX
        for _ in scan_index(index, None):  # a malformed index is refused before anything is cut from it
            pass
        if index.exists():
            data = index.read_bytes()
            if data and not data.endswith(b"\n") and _torn(data[data.rfind(b"\n") + 1:]):
                with open(index, "r+b") as fh:
                    fh.truncate(data.rfind(b"\n") + 1)
        count = 0
        for part in [*self.episodes.glob("*.part"), *self.episodes.glob("*.tmp")]:
            part.unlink()
            count += 1
        return count

    def write_files(self, files: Mapping[str, bytes]) -> None:
        """Store the files an episode wrote on another node (paths relative to the run directory)
        durably, each as :meth:`write_log` does, then fsync their directories: an index line
        appended afterwards never names a file the disk could still lose."""
        dirs: set[Path] = set()
        for rel, data in files.items():
            path = resolved(self.root / rel)
            if Path(rel).is_absolute() or not path.is_relative_to(self.root.resolve()):
                raise ValueError(f"{rel!r}: an episode's file must stay inside the run directory")
            path.parent.mkdir(parents=True, exist_ok=True)
            write_atomic(path, data)
            dirs.add(path.parent)
        for directory in dirs:
            fd = os.open(directory, os.O_RDONLY)
            try:
                os.fsync(fd)
            finally:
                os.close(fd)

    def append(self, record: EpisodeRecord | dict[str, Any]) -> None:
        """Queue the episode's index line; it is finished once the line's batch is on disk."""
        if self._own_from is None:
            self._own_from = self._index.path.stat().st_size if self._index.path.exists() else 0
        data = record if isinstance(record, dict) else record.to_dict()
        line = (_INDEX_ENCODER.encode(data) + "\n").encode("utf-8")
        self._index.add(line, lambda: self._finished(record, data))

    def _finished(self, record: EpisodeRecord | dict[str, Any], data: dict[str, Any]) -> None:
        if self._seal is not None:
            self._seal.add(data["episode_id"], data.get("digest", ""))
        if self.on_finished is not None:
            self.on_finished(record)

    def group_commit(self, max_lines: int = 64, max_seconds: float = 0.005) -> None:
        """From now on, commit index lines in batches (a run's loop does; see the module docstring)."""
        self._index.max_lines, self._index.max_seconds = max_lines, max_seconds

    def flush(self) -> None:
        """Put every queued index line on disk now."""
        self._index.flush()

    def records(self) -> list[dict[str, Any]]:
        """Finished episodes, first record per id, sorted by id; a torn last line is ignored."""
        self.flush()
        return read_index(self.root / INDEX, own_from=self._own_from)

    def stream_records(self) -> Iterator[dict[str, Any]]:
        """:meth:`records` one at a time, in the same order (:func:`stream_index`)."""
        self.flush()
        return stream_index(self.root / INDEX, own_from=self._own_from)

    def finished_ids(self) -> set[str]:
        self.flush()
        return {r["episode_id"] for _, _, _, r in scan_index(self.root / INDEX, self._own_from)}


_LINE_START = b'{"agent": '  # every index line starts so (sorted keys; see append)
# json.dumps with these options builds an encoder per call; one shared encoder writes the same bytes
_INDEX_ENCODER = json.JSONEncoder(ensure_ascii=False, sort_keys=True, default=str)


def _torn(line: bytes) -> bool:
    """A last line cut short by a kill during its write: the start of a line append() writes,
    without its newline. Anything else without a newline is damage, and is reported."""
    return not line.endswith(b"\n") and (line.startswith(_LINE_START) or _LINE_START.startswith(line))


def iter_index(path: str | os.PathLike[str], *, own_from: int | None = None) -> list[tuple[int, dict[str, Any]]]:
    """Every line of an index with its number, each validated; a torn last line (a kill during
    its write) is left out. A bad line raises :class:`InputError` naming the line and field.
    Lines from byte ``own_from`` on are the reading store's own (see :class:`RunStore`): parsed
    and checked for non-finite numbers and depth, not against the schema again."""
    return [(number, record) for number, _, _, record in scan_index(path, own_from)]


def scan_index(path: str | os.PathLike[str], own_from: int | None) -> Iterator[tuple[int, int, int, dict[str, Any]]]:
    """:func:`iter_index`'s lines one at a time (number, byte offset, length, record): a reader
    that keeps only what it needs of each holds no list of the run's records."""
    path = Path(path)
    if not path.exists():
        return
    fh = open_regular(path, what="run index")  # a FIFO or a device: refused, never waited on
    offset = 0
    with fh:
        for number, line in bounded_lines(fh, path):
            start, offset = offset, offset + len(line)
            if own_from is not None and start >= own_from and line.endswith(b"\n"):
                yield number, start, len(line), parse_own_json(line, f"{path}: line {number}")  # finite, depth
                continue
            if not line.strip():
                continue
            at = f"{path}: line {number}"
            try:
                record = parse_json(line, at)
            except InputError as exc:
                if _torn(line) and not fh.read(1):
                    continue  # the last line, torn by a kill during its write
                if "not valid JSON" in str(exc):
                    raise InputError(f"{at} is not JSON") from None
                raise
            check_line(line, record, INDEX_RECORD_SCHEMA, at)
            yield number, start, len(line), record


def read_index(path: str | os.PathLike[str], *, own_from: int | None = None) -> list[dict[str, Any]]:
    """Finished episodes, first record per id, sorted by episode id: whatever is computed from
    them (summaries, intervals, results) does not depend on the order episodes finished in."""
    seen: dict[str, dict[str, Any]] = {}
    for _, record in iter_index(path, own_from=own_from):
        seen.setdefault(record["episode_id"], record)
    return [seen[k] for k in sorted(seen)]


def stream_index(path: str | os.PathLike[str], *, own_from: int | None = None) -> Iterator[dict[str, Any]]:
    """:func:`read_index`'s records in its order, one at a time: a first pass validates every line
    and keeps each id's first byte range in a :class:`DiskMap` (on disk, sorted by id), a second
    reads the lines back in id order. A summary folds a 100,000-episode run so without holding its
    records (about 2.5 KiB each as dicts) or its ids."""
    with DiskMap(2) as first:
        for _, start, length, record in scan_index(path, own_from):
            first.add(record["episode_id"], start, length)
        if not len(first):
            return
        with open_regular(Path(path), what="run index") as fh:
            for _, start, length in first.items():
                fh.seek(start)
                yield json.loads(fh.read(length))  # validated by the first pass
