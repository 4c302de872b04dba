"""An episode's log as the viewer shows it while it may still be written: every complete,
schema-valid record and the state of its hash chain (read-only, bounded to the run directory)."""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import Any

from agentbed.log import verify_lines
from agentbed.schemas import record_schema
from agentbed.validate import MAX_LINE_BYTES, InputError, check, open_regular, parse_json


@dataclass
class EpisodeLog:
    """An episode's log as far as it is written and valid."""

    records: list[dict[str, Any]]
    check: str  # "verified", "running (no footer yet)", or what is wrong
    problems: list[str]


def read_episode(path: Path, digest: str | None = None, inside: Path | None = None) -> EpisodeLog:
    """Every complete, schema-valid record of a log, and the state of its hash chain. A torn last
    line (being written) is left for the next look; the first malformed record ends the list.
    ``inside``: the run directory the log must stay in (links out of it are not followed)."""
    try:
        with open_regular(path, what="trajectory log", inside=inside) as fh:
            data = fh.read(MAX_LINE_BYTES * 4 + 1)
    except InputError as exc:
        why = str(exc).removeprefix(f"{path}: ")
        return EpisodeLog([], why, [why])
    except OSError as exc:
        return EpisodeLog([], f"cannot read ({exc.strerror or exc})", [f"cannot read ({exc.strerror or exc})"])
    end = data.rfind(b"\n") + 1
    lines = data[:end].splitlines(keepends=True)
    records: list[dict[str, Any]] = []
    problems: list[str] = []
    if len(data) > end:
        problems.append("the last line is still being written (or was cut): it is left out")
    for number, line in enumerate(lines, start=1):
        try:
            record = parse_json(line, f"line {number}")
            if not isinstance(record, dict) or record.get("type") not in ("header", "step", "control", "footer"):
                raise InputError(f"line {number}: not a trajectory record (field 'type')")
            check(record, record_schema(record["type"]), f"line {number} ({record['type']})")
        except InputError as exc:
            problems.append(f"{exc}; the records from here on are left out")
            break
        records.append(record)
    if not lines:
        return EpisodeLog([], "empty (being written?)", problems)
    result = verify_lines(lines, digest)
    if result.ok:
        state = "verified"
    elif result.first_bad == len(lines) + 1 and not digest:
        state = "running (no footer yet)"
    else:
        state = f"record {result.first_bad}: {result.reason}"
    return EpisodeLog(records, state, problems)
