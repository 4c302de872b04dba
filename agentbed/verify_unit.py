"""What ``agentbed verify`` checks of one unit of a run beyond its log's hash chain: that an
episode's log is the episode its index line lists, that a team manifest (CoCoder's unit) and
its members' logs are whole and of this run, and whether a team member's log without its
manifest is a unit cut short. :func:`agentbed.verify_run.check_run` asks these of every unit;
the report's run reader checks a team with :func:`check_team`.
"""

from __future__ import annotations

import json
import re
from pathlib import Path
from typing import Any

from agentbed import manifest as mf
from agentbed import rundir
from agentbed.binding import mismatch
from agentbed.log import verify_and_read
from agentbed.rundir import team_members
from agentbed.validate import MAX_LINE_BYTES, InputError, open_regular


def another_episode(header: dict[str, Any], eid: str, record: dict[str, Any]) -> str:
    """Why an authentic log of this run is not the episode ``eid`` it is listed as ("" when it is):
    its header names another episode, or another suite, task, agent or seed than its index line
    (session 17's probe: a crashed run's own log copied under a missing episode's name, its index
    line edited to match, was sealed by an honest resume and verified)."""
    if header.get("episode_id") != eid:
        return (f"the log of episode {str(header.get('episode_id'))[:200]}, listed as {eid} "
                "(a log copied under another episode's name)")
    for name, in_header in (("suite", "suite"), ("task", "task"), ("agent", "agent_id"), ("seed", "seed")):
        if name in record and in_header in header and record[name] != header[in_header]:
            return (f"its header's {name} is {header[in_header]!r}, its index line's {record[name]!r} "
                    "(an index line edited to list another episode)")
    return ""


def check_team(path: Path, digest: str | None, key: bytes | None, meta: dict[str, Any] | None = None) -> list[str]:
    """A team manifest (CoCoder's unit): its own digest as recorded, then every member's log,
    and (given run.json) each member header's run binding, as a single agent's log is checked.
    A malformed manifest or member log raises (bad input)."""
    if digest and mf.file_digest(path) != digest:
        return [f"{path}: differs from the digest the index and manifest recorded for it"]
    problems = []
    for member in team_members(path):
        log = path.parent / member["log"]
        if rundir.leads_out(log, path.parent.parent):
            problems.append(f"{log}: a link out of the run directory; not followed (a member of {path.name})")
            continue
        if not log.is_file():
            problems.append(f"{path}: member log {member['log']} is missing")
            continue
        result, records = verify_and_read(log, member.get("digest"), key)
        foreign = mismatch(records[0], meta) if result.ok and meta is not None and "run_id" in meta else ""
        if not result.ok or foreign:  # a member log of another run (or other settings) is named like one
            problems.append(result.message(str(log)) if not result.ok else f"{log}: {foreign} (a member of {path.name})")
    return problems


def unit_in_progress(path: Path, run_id: str) -> bool:
    """A team member's log (``<unit>.w<N>[.repair<M>].jsonl``) whose header names this run: the
    unit was cut short before its team manifest and index line were written (--resume re-runs it)."""
    if not run_id or not re.search(r"\.w\d+(\.repair\d+)?$", path.stem):
        return False
    try:
        with open_regular(path, what="trajectory log", inside=path.parent.parent) as fh:
            header = json.loads(fh.readline(MAX_LINE_BYTES))
    except (InputError, OSError, ValueError):
        return False
    bound = header.get("run") if isinstance(header, dict) else None
    return isinstance(bound, dict) and bound.get("id") == run_id
