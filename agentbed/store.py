"""A run directory: trajectory logs plus an append-only index of finished episodes.

Layout::

    RUN_DIR/run.json                 what was run (the plan, so --resume can finish it)
    RUN_DIR/index.jsonl              one EpisodeRecord per finished episode
    RUN_DIR/episodes/<id>.jsonl      one chained trajectory log per episode

The index line of an episode is appended (one ``write`` on an O_APPEND descriptor, then
fsync) only after its log is closed, and it carries the log's final digest. An episode is
finished exactly when the index lists it. A run killed at any point leaves finished
episodes, possibly some logs without an index line (complete or cut short), and perhaps a
torn last index line: resuming cuts the torn line and re-runs every episode not in the index,
overwriting its log, so no episode is lost or counted twice.
"""

from __future__ import annotations

import json
import os
from pathlib import Path
from typing import Any

from agentbed.errors import UsageError
from agentbed.runner import EpisodeRecord

INDEX = "index.jsonl"
RUN_META = "run.json"


class RunStore:
    def __init__(self, run_dir: str | os.PathLike[str]) -> None:
        self.root = Path(run_dir)
        self.episodes = self.root / "episodes"

    # -- plan ------------------------------------------------------------------------------
    def exists(self) -> bool:
        return (self.root / RUN_META).exists()

    def create(self, meta: dict[str, Any]) -> None:
        if self.exists():
            raise UsageError(f"--out {self.root}: a run is already recorded there; use --resume to finish it "
                             "or choose another directory")
        self.episodes.mkdir(parents=True, exist_ok=True)
        tmp = self.root / (RUN_META + ".tmp")
        tmp.write_text(json.dumps(meta, indent=1, sort_keys=True), encoding="utf-8")
        tmp.replace(self.root / RUN_META)

    def meta(self) -> dict[str, Any]:
        path = self.root / RUN_META
        try:
            return json.loads(path.read_text(encoding="utf-8"))
        except FileNotFoundError:
            raise UsageError(f"{path}: no run recorded here (missing {RUN_META})") from None
        except json.JSONDecodeError as exc:
            raise UsageError(f"{path}: not valid JSON ({exc.msg} at line {exc.lineno})") from None

    # -- episodes --------------------------------------------------------------------------
    def log_path(self, episode_id: str) -> Path:
        return self.episodes / f"{episode_id}.jsonl"

    def discard_partial(self) -> int:
        """Cut a torn last index line (a kill during its write) so that new lines start on a
        line of their own, and delete ``.part`` files that older versions left; return how
        many were deleted. Logs of unlisted episodes are overwritten when they are re-run."""
        index = self.root / INDEX
        if index.exists():
            data = index.read_bytes()
            if data and not data.endswith(b"\n"):
                with open(index, "r+b") as fh:
                    fh.truncate(data.rfind(b"\n") + 1)
        count = 0
        for part in self.episodes.glob("*.part"):
            part.unlink()
            count += 1
        return count

    def append(self, record: EpisodeRecord | dict[str, Any]) -> None:
        data = record.to_dict() if isinstance(record, EpisodeRecord) else record
        line = (json.dumps(data, ensure_ascii=False, sort_keys=True, default=str) + "\n").encode("utf-8")
        fd = os.open(self.root / INDEX, os.O_WRONLY | os.O_APPEND | os.O_CREAT, 0o644)
        try:
            os.write(fd, line)
            os.fsync(fd)
        finally:
            os.close(fd)

    def records(self) -> list[dict[str, Any]]:
        """Finished episodes, first record per id; a torn last line (killed mid-write) is ignored."""
        return read_index(self.root / INDEX)

    def finished_ids(self) -> set[str]:
        return {r["episode_id"] for r in self.records()}


def read_index(path: str | os.PathLike[str]) -> list[dict[str, Any]]:
    path = Path(path)
    if not path.exists():
        return []
    seen: dict[str, dict[str, Any]] = {}
    raw = path.read_bytes()
    lines = raw.split(b"\n")
    for number, line in enumerate(lines, start=1):
        if not line.strip():
            continue
        try:
            record = json.loads(line)
        except json.JSONDecodeError:
            if number == len(lines):  # the last line, without its newline: torn by a kill
                continue
            raise UsageError(f"{path}: line {number} is not JSON") from None
        if not isinstance(record, dict) or "episode_id" not in record:
            raise UsageError(f"{path}: line {number} has no episode_id")
        seen.setdefault(record["episode_id"], record)
    return list(seen.values())
