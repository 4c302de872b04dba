"""Read a run directory for the report: run.json, episode indexes, workload summaries.

Nothing here raises for bad content: an unreadable or malformed file becomes a
:class:`Problem` naming the file (relative to the run directory) and what is wrong, and the
report shows it where the missing part would have been.
"""

from __future__ import annotations

import os
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, BinaryIO

from agentbed.decisions import Decision, decisions
from agentbed.jsonstream import read_folded
from agentbed.log import LogFormatError, read_log, verify_and_read
from agentbed.report.tally import Episode, EpisodeTally
from agentbed.rundir import SUMMARY as SUMMARY_NAME
from agentbed.rundir import TEAM_SUFFIX, RunDirectory, log_path, read_run, record_from_log
from agentbed.schemas import INDEX_RECORD_SCHEMA
from agentbed.validate import MAX_JSON_BYTES, InputError, check_line, open_regular, parse_json, read_json
from agentbed.verify_unit import check_team


@dataclass(frozen=True)
class Problem:
    file: str  # relative to the run directory
    message: str
    malformed: bool = False  # the file is unreadable or not what it should be (the CLI exits 2)


UNINDEXED = "(no index)"


@dataclass
class RunContents:
    root: Path
    run_info: dict[str, Any] | None
    episodes: EpisodeTally  # every episode read, folded (agentbed.report.tally)
    summaries: dict[str, Any]  # suite -> parsed summary.json (any JSON value; validated when rendered)
    expected_suites: list[str]  # named by run.json or by an indexed episode
    named_suites: list[str] = field(default_factory=list)  # named by run.json, in its order
    problems: list[Problem] = field(default_factory=list)

    def rel(self, path: Path) -> str:
        try:
            return str(path.relative_to(self.root))
        except ValueError:
            return str(path)


def _read_json(path: Path, rel: str, problems: list[Problem], *, folded: bool = False) -> Any:
    """``path``'s JSON, or None with a problem; ``folded``: its seeds as the range they are (run.json)."""
    try:
        return read_folded(path, what="JSON file") if folded else read_json(path)
    except InputError as exc:
        problems.append(Problem(rel, str(exc).removeprefix(f"{path}: "), malformed=True))
        return None


def _suites_named(run_info: dict[str, Any] | None) -> list[str]:
    if not run_info:
        return []
    named = run_info.get("suites", run_info.get("suite", []))
    if isinstance(named, str):
        named = [named]
    if isinstance(named, dict):
        named = list(named)
    return [s for s in named if isinstance(s, str)] if isinstance(named, list) else []


def _read_index(run: RunContents, path: Path, key: bytes | None) -> None:
    """The episodes of one of the run's indexes, each with its log checked."""
    rel = run.rel(path)
    limit = MAX_JSON_BYTES * 16
    try:
        fh = open_regular(path, what="run index")
    except InputError as exc:
        run.problems.append(Problem(rel, str(exc).removeprefix(f"{path}: "), malformed=True))
        return
    with fh:  # a line at a time: the index of 100,000 episodes is never held
        if os.fstat(fh.fileno()).st_size > limit:  # as read_bytes refuses it
            run.problems.append(Problem(rel, f"larger than {limit} bytes; not a run index", malformed=True))
            return
        try:
            _read_lines(run, path, rel, fh, key)
        except OSError as exc:
            run.problems.append(Problem(rel, f"cannot read ({exc.strerror or exc})", malformed=True))


def _read_lines(run: RunContents, path: Path, rel: str, fh: BinaryIO, key: bytes | None) -> None:
    for number, raw in enumerate(fh, start=1):
        line = raw[:-1] if raw.endswith(b"\n") else raw
        if not line.strip():
            continue
        try:
            record = parse_json(line, f"line {number}")
            check_line(line, record, INDEX_RECORD_SCHEMA, f"line {number}")
        except InputError as exc:
            if "not valid JSON" in str(exc):
                exc = InputError(f"line {number} is not JSON ({str(exc).split('(', 1)[-1].rstrip(')')})")
            run.problems.append(Problem(rel, f"{exc}; episode left out", malformed=True))
            continue
        log, check_text, decided = _check_log(run.root, path.parent, record, key)
        if check_text.startswith(NOT_A_LOG) or check_text.startswith(MALFORMED):
            run.problems.append(Problem(run.rel(log) if log else rel, check_text, malformed=True))
        run.episodes.add(Episode(record, rel, run.rel(log) if log else "", check_text, decided))


def _check_log(root: Path, index_dir: Path, record: dict[str, Any], key: bytes | None,
               ) -> tuple[Path | None, str, list[Decision]]:
    log = log_path(root, index_dir, record)
    if not log.exists():
        return (log if record.get("log") else None), "missing", []
    digest = record.get("digest") if isinstance(record.get("digest"), str) and record.get("digest") else None
    decided: list[Decision] = []
    return log, check_log(log, digest, record, key, decided), decided


NOT_A_LOG = "not a trajectory log"
MALFORMED = "malformed log"


def check_log(log: Path, digest: str | None, record: dict[str, Any] | None = None, key: bytes | None = None,
              decided: list[Decision] | None = None) -> str:
    """"verified", or why not: the chain, the digest, the records' schema, and (given the
    index record) that the index says what the footer says. A verified log's oversight
    decisions are added to ``decided``."""
    return _checked(log, digest, record, key, decided)[0]


def _checked(log: Path, digest: str | None, record: dict[str, Any] | None, key: bytes | None,
             decided: list[Decision] | None) -> tuple[str, list[dict[str, Any]]]:
    """:func:`check_log`'s word, and the records it read (checked against the schema) when the
    chain holds: empty otherwise, and for a multi-agent unit's manifest."""
    try:
        if log.name.endswith(TEAM_SUFFIX):  # a multi-agent unit: the manifest of its members' logs
            problems = check_team(log, digest, key)
            return (problems[0] if problems else "verified"), []
        result, records = verify_and_read(log, digest, key)
        if not result.ok:
            return f"record {result.first_bad} changed: {result.reason}", records
    except (LogFormatError, InputError) as exc:
        text = str(exc)
        return (f"{NOT_A_LOG}: {text}" if "not an agentbed trajectory log" in text else f"{MALFORMED}: {text}"), []
    footer = records[-1]
    if decided is not None:
        decided.extend(decisions(records))
    for name in ("status", "success", "steps"):
        if record is not None and name in record and record[name] != footer.get(name):
            return (f"index differs from the log's footer: {name} is {record[name]!r} in the index, "
                    f"{footer.get(name)!r} in the log"), records
    return "verified", records


def _read_unindexed(run: RunContents, layout: RunDirectory, key: bytes | None) -> None:
    for path in layout.loose_logs(run.episodes.known):
        rel = run.rel(path)
        decided: list[Decision] = []
        checked, records = _checked(path, None, None, key, decided)  # each log read once where its chain holds
        try:
            record = record_from_log(records or read_log(path), rel)
        except LogFormatError as exc:
            run.problems.append(Problem(rel, f"unreadable log ({exc}); episode left out", malformed=True))
            continue
        if record is None:
            run.problems.append(Problem(rel, "log has no header; episode left out", malformed=True))
            continue
        run.episodes.add(Episode(record, f"{run.rel(path.parent)} {UNINDEXED}", rel, checked, decided))


def load_run(run_dir: str | Path, key: bytes | None = None) -> RunContents:
    """What the report shows of a run directory; with ``key``, each log's HMAC is checked too."""
    root = Path(run_dir)
    run = RunContents(root, None, EpisodeTally(root), {}, [])
    info_path = root / "run.json"
    if info_path.exists():
        before = len(run.problems)
        info = _read_json(info_path, "run.json", run.problems, folded=True)
        if len(run.problems) == before and not isinstance(info, dict):
            run.problems.append(Problem("run.json", f"is a JSON {type(info).__name__}, expected an object",
                                        malformed=True))
        run.run_info = info if isinstance(info, dict) else None
    else:
        run.problems.append(Problem("run.json", "not found: what was run is taken from the workloads' summaries"))
    layout = read_run(root)  # of a sealed run, only what its manifest seals is the run's
    for index in layout.indexes():
        _read_index(run, index, key)
    # Only `agentbed run` episodes (the top-level index) name a workload that owes a summary.
    indexed_suites = list(run.episodes.indexed_suites)
    if layout.sealed is None:
        _read_unindexed(run, layout, key)
    run.problems += [Problem(rel, why) for rel, why in layout.unsealed(run.episodes.known)]
    for suite, path in layout.summaries().items():
        run.summaries[suite] = _read_json(path, run.rel(path), run.problems)
    for suite, summary in sorted(run.summaries.items()):
        run.problems.extend(_episode_problems(suite, summary))
    run.named_suites = _suites_named(run.run_info)
    expected = run.named_suites + indexed_suites
    run.expected_suites = list(dict.fromkeys(s for s in expected if isinstance(s, str) and s))
    for suite in run.expected_suites:
        if suite not in run.summaries:
            run.problems.append(Problem(f"{suite}/{SUMMARY_NAME}",
                                        f"not found: workload {suite!r} ran but left no summary"))
    return run


def _episode_problems(suite: str, summary: Any) -> list[Problem]:
    """The run's errored episodes, as its summary lists them (agentbed.run_summary): one problem
    per kind of failure, with its count and what to check."""
    errors = summary.get("errors") if isinstance(summary, dict) else None
    problems = errors.get("problems") if isinstance(errors, dict) else None
    out = []
    for p in problems if isinstance(problems, list) else []:
        if not isinstance(p, dict):
            continue
        counted = "excluded from every rate" if p.get("excluded", True) else "counted as failed attempts"
        out.append(Problem(f"{suite}/{SUMMARY_NAME}",
                           f"{p.get('count')} episodes errored: {p.get('kind')} ({counted}): {p.get('title')}; "
                           f"check {p.get('check')}; e.g. {p.get('example_log') or p.get('example_episode')}: "
                           f"{p.get('example_error')}"))
    return out
