"""The report's run overview: what was run, when, episode counts (the episodes section: agentbed.report.episodes)."""

from __future__ import annotations

import json
from collections import Counter
from collections.abc import Iterator
from datetime import UTC, datetime
from typing import Any

from agentbed.report.html import Markup, Splices, el, fmt_cell, slug
from agentbed.report.rundir import RunContents
from agentbed.report.workload import problem_note

STATUSES = ("ok", "budget", "stopped", "error")


RANGE_CHUNK = 4096  # seeds made into text at a time


def range_json(seeds: range) -> Iterator[str]:
    """``json.dumps(list(seeds))``, a chunk of seeds at a time: neither the list nor its text is held."""
    yield "["
    for start in range(0, len(seeds), RANGE_CHUNK):
        yield (", " if start else "") + ", ".join(map(str, seeds[start:start + RANGE_CHUNK]))
    yield "]"


def _value(value: Any, splices: Splices) -> Markup:
    if isinstance(value, str):
        return el("code", value) if "\n" not in value else el("pre", value)
    if isinstance(value, range):  # run.json's seeds, folded (agentbed.jsonstream.read_folded)
        return el("code", splices.add(lambda: range_json(value)))
    return el("code", json.dumps(value, ensure_ascii=False, sort_keys=True,
                                 default=lambda v: list(v) if isinstance(v, range) else str(v)))


def _run_info(run: RunContents, splices: Splices) -> Markup | None:
    if not run.run_info:
        return None
    rows = [el("tr", el("th", key), el("td", _value(value, splices))) for key, value in run.run_info.items()]
    return el("table", el("tbody", *rows), id="run-info")


def _workloads(run: RunContents) -> Markup:
    """One row per workload summary: also what was run when run.json is absent (``agentbed demo``)."""
    rows = []
    for suite, summary in run.summaries.items():
        ok = isinstance(summary, dict)
        get = summary.get if ok else (lambda key: None)
        state = "unreadable" if not ok else ("failed" if get("error") else "ok")
        rows.append(el("tr", el("td", el("a", suite, href=f"#workload-{slug(suite)}")),
                       el("td", get("title") if isinstance(get("title"), str) else ""),
                       el("td", fmt_cell(get("episodes")), class_="num"), el("td", fmt_cell(get("seeds")), class_="num"),
                       el("td", fmt_cell(get("wall_seconds")), class_="num"),
                       el("td", el("code", get("command")) if isinstance(get("command"), str) else "–"),
                       el("td", state, class_=f"status-{'ok' if state == 'ok' else 'error'}")))
    if not rows:
        return el("p", "No workload left a summary.json.", id="workloads", class_="facts")
    head = el("tr", *(el("th", c) for c in ("workload", "title", "episodes (summary)", "seeds", "wall s", "command",
                                             "state")))
    return el("table", el("thead", head), el("tbody", *rows), id="workloads")


def _when(run: RunContents) -> Markup:
    """Wall-clock dates belong in the report (never in trajectory logs)."""
    generated = datetime.now(UTC).strftime("%Y-%m-%d %H:%M:%S UTC")
    parts = [f"report generated {generated}"]
    info = run.root / "run.json"
    if info.exists():
        written = datetime.fromtimestamp(info.stat().st_mtime, UTC).strftime("%Y-%m-%d %H:%M:%S UTC")
        parts.append(f"run.json last written {written}")
    return el("p", "; ".join(parts), id="run-when", class_="facts")


def summary_episodes(run: RunContents) -> dict[str, Any]:
    """Each workload's own episode count (its summary's ``episodes``), None when it states none."""
    return {suite: (summary.get("episodes") if isinstance(summary, dict) else None)
            for suite, summary in run.summaries.items()}


def _status_counts(run: RunContents) -> Markup:
    """Per workload, the logs read by status beside the count its summary states, in one table
    with every workload (one that keeps no per-episode logs shows its summary's count and none
    read), so the report's counts cannot silently disagree."""
    by_suite: dict[str, Counter[str]] = {suite: Counter(c) for suite, c in run.episodes.suites.items()}
    stated = summary_episodes(run)
    for suite in stated:
        by_suite.setdefault(suite, Counter())
    extra = sorted({s for c in by_suite.values() for s in c} - set(STATUSES) - {"success", "total"})
    columns = ["suite", "episodes (summary)", "logs read", *STATUSES, *extra, "succeeded"]
    rows = [el("tr", el("td", suite), el("td", fmt_cell(stated.get(suite)) if stated.get(suite) is not None else "–",
                                         class_="num"),
               el("td", c["total"], class_="num"),
               *(el("td", c[s], class_=f"num status-{s}") for s in (*STATUSES, *extra)),
               el("td", c["success"], class_="num"))
            for suite, c in sorted(by_suite.items())]
    if not rows:
        return el("p", "No episodes are indexed in this run directory.", id="status-counts", class_="facts")
    differ = [suite for suite, c in sorted(by_suite.items()) if stated.get(suite) not in (None, c["total"])]
    note = el("p", f"{', '.join(differ)}: the summary counts the episodes its headline is computed over; "
                   "'logs read' counts every episode log in the run directory (a workload may also keep "
                   "logs of sweeps or team members, or no per-episode logs at all).", class_="facts") \
        if differ else None
    return el("div", el("table", el("thead", el("tr", *(el("th", c) for c in columns))), el("tbody", *rows)), note,
              id="status-counts")


def overview_section(run: RunContents, splices: Splices) -> Markup:
    """The section; run.json's seeds are left to ``splices`` (written into the file, not held)."""
    problems = [problem_note(p) for p in run.problems]
    return el("section",
              el("h2", "Run overview"),
              _when(run),
              el("h3", "What was run"),
              _run_info(run, splices) or el("p", "run.json is missing or unreadable (see problems below).", class_="facts"),
              el("h3", "Workloads"),
              _workloads(run),
              el("h3", "Episodes by status"),
              _status_counts(run),
              el("div", el("h3", f"Problems ({len(problems)})"), *problems, id="problems") if problems else None,
              id="overview", class_="overview")
