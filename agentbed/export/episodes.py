"""The episodes of a run directory with their trajectory logs, for exporters.

Episodes come from ``RUN_DIR/index.jsonl``, from workloads' own ``RUN_DIR/<suite>/index.jsonl``,
and from logs in ``RUN_DIR/episodes`` or ``RUN_DIR/<suite>/episodes`` that no index lists (some
workloads write logs without an index; their record is rebuilt from the log's header and footer).
Of a run its manifest seals, only the run's own index is read (as report and view read it):
``inspect/``, ``branches/`` and stray logs are not the run's.
Unreadable input is a :class:`~agentbed.errors.UsageError` naming the file; a log that is
missing or unreadable is reported on the episode (``log_error``) so one bad file does not hide
the rest of the run.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import Any

from agentbed.errors import UsageError
from agentbed.files import resolved
from agentbed.log import LogFormatError, read_log
from agentbed.rundir import INDEX, log_path, read_run, record_from_log
from agentbed.store import read_index


@dataclass
class EpisodeLog:
    record: dict[str, Any]  # the index line (agentbed.runner.EpisodeRecord.to_dict())
    log_path: Path | None
    log: list[dict[str, Any]]  # the parsed trajectory records: header, steps/control, footer
    log_error: str = ""

    @property
    def header(self) -> dict[str, Any]:
        return self.log[0] if self.log and self.log[0].get("type") == "header" else {}

    @property
    def footer(self) -> dict[str, Any]:
        return self.log[-1] if self.log and self.log[-1].get("type") == "footer" else {}


def load_episodes(run_dir: str | Path) -> list[EpisodeLog]:
    root = Path(run_dir)
    if not root.is_dir():
        raise UsageError(f"{run_dir}: not a run directory (no such directory)")
    layout = read_run(root)  # of a sealed run, only its own index; other folders are not the run's
    episodes = []
    for index in layout.indexes():
        for record in read_index(index):  # raises UsageError naming the file and line
            path = log_path(root, index.parent, record)
            try:
                episodes.append(EpisodeLog(record, path, read_log(path)))
            except LogFormatError as exc:
                episodes.append(EpisodeLog(record, path if path.exists() else None, [], str(exc)))
    known = {resolved(ep.log_path) for ep in episodes if ep.log_path is not None}
    for path in layout.loose_logs(known) if layout.sealed is None else []:  # a sealed run's strays: verify names them
        rel = str(path.relative_to(root))
        try:
            log = read_log(path)
        except LogFormatError as exc:
            raise UsageError(str(exc)) from None
        loose = record_from_log(log, rel)
        if loose is None:
            raise UsageError(f"{path}: not an agentbed trajectory log (no header)")
        episodes.append(EpisodeLog(loose, path, log))
    if not episodes:
        raise UsageError(f"{run_dir}: no {INDEX} and no episode logs here or in a workload folder: nothing to export")
    return episodes
