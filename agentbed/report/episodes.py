"""The report's episodes section: per workload a heat-map, per agent the aggregates, and a table of
episodes: every one for a small run, else the ones to read first (a failed chain check, an error,
a stopped or budget-cut episode, then failures), at most ``TOP_EPISODES``, with a pointer to
``agentbed view`` and the index files for the full list.

A row costs about 300 bytes of HTML, so a listing of every episode made the report grow with the
run (a contracts run at demo size: 497 KB, 64% of it that table); the summary grows with agents
and tasks, not with seeds.
"""

from __future__ import annotations

import shlex
from collections import Counter
from typing import Any

from agentbed.report.html import Markup, el, fmt_cell, slug
from agentbed.report.plots import success_heatmap
from agentbed.report.rundir import Episode, RunContents
from agentbed.scores import scores_text

FULL_LIST = 100  # up to this many episodes, the table lists every one
TOP_EPISODES = 40  # beyond it, at most this many: the ones to read first
TOP_LABELS = 3
COLUMNS = ("episode", "suite", "task", "agent", "seed", "status", "success", "reward", "steps", "virtual s",
           "tokens", "labels", "log (chain check)")


def _episode_row(n: int, ep: Episode) -> Markup:
    """One compact row: numbers right-aligned by the table's CSS, the log named only when it is
    not ``episodes/<id>.jsonl``."""
    r = ep.record
    status = str(r.get("status", "?"))
    labels: list[Any] = r["labels"] if isinstance(r.get("labels"), list) else []
    standard = ep.log == f"episodes/{r['episode_id']}.jsonl"
    log = "" if standard else (ep.log + " " if ep.log else "– ")
    return el("tr",
              el("td", r["episode_id"]), el("td", r.get("suite", "")), el("td", r.get("task", "")),
              el("td", r.get("agent", "")), el("td", fmt_cell(r.get("seed"))),
              el("td", status, class_=f"status-{slug(status)}"),
              el("td", " ".join(filter(None, ("yes" if r.get("success") else "no", scores_text(r.get("metrics")))))),
              el("td", fmt_cell(r.get("total_reward"))), el("td", fmt_cell(r.get("steps"))),
              el("td", fmt_cell(r.get("virtual_seconds"))), el("td", fmt_cell(r.get("tokens"))),
              el("td", ", ".join(str(x) for x in labels)), el("td", log + ep.log_check),
              id=f"episode-{n}", data_status=status)


def priority(ep: Episode) -> int:
    """0 = read first: a log that does not verify; then errors; then stopped or budget-cut; then failed."""
    status = ep.record.get("status")
    if ep.log_check != "verified":
        return 0
    if status == "error":
        return 1
    if status in ("stopped", "budget"):
        return 2
    return 3 if not ep.record.get("success") else 4


def top_episodes(episodes: list[Episode], n: int = TOP_EPISODES) -> list[Episode]:
    """The ``n`` episodes to read first, most urgent class first; within a class, round-robin over
    (suite, agent) so each failing agent shows, and within an agent each task once before any
    task's second seed (otherwise index order)."""
    chosen: list[Episode] = []
    for level in range(4):
        queues: dict[tuple[str, str], list[Episode]] = {}
        for ep in episodes:
            if priority(ep) == level:
                queues.setdefault((str(ep.record.get("suite", "")), str(ep.record.get("agent", ""))), []).append(ep)
        for key, queue in queues.items():
            seen: Counter[str] = Counter()
            ranked = []
            for ep in queue:
                task = str(ep.record.get("task", ""))
                ranked.append((seen[task], ep))
                seen[task] += 1
            queues[key] = [ep for _, ep in sorted(ranked, key=lambda pair: pair[0])]  # stable: index order
        while queues and len(chosen) < n:
            for key in list(queues):
                chosen.append(queues[key].pop(0))
                if not queues[key]:
                    del queues[key]
                if len(chosen) == n:
                    break
    return chosen


def _aggregates(episodes: list[Episode]) -> Markup:
    """One row per (suite, agent): episodes, by status, succeeded, mean steps, tokens, logs that
    do not verify, and its most frequent labels."""
    groups: dict[tuple[str, str], list[Episode]] = {}
    for ep in episodes:
        groups.setdefault((str(ep.record.get("suite", "?")), str(ep.record.get("agent", "?"))), []).append(ep)
    rows = []
    for (suite, agent), eps in sorted(groups.items()):
        status = Counter(str(e.record.get("status", "?")) for e in eps)
        labels = Counter(str(x) for e in eps for x in (e.record.get("labels") or []))
        steps = [e.record["steps"] for e in eps if isinstance(e.record.get("steps"), int | float)]
        tokens = sum(e.record["tokens"] for e in eps if isinstance(e.record.get("tokens"), int | float))
        succeeded = sum(bool(e.record.get("success")) for e in eps)
        rows.append(el("tr", el("td", suite), el("td", agent), el("td", len(eps), class_="num"),
                       el("td", ", ".join(f"{k} {v}" for k, v in sorted(status.items()))),
                       el("td", f"{succeeded} ({succeeded / len(eps):.0%})", class_="num"),
                       el("td", fmt_cell(sum(steps) / len(steps)) if steps else "–", class_="num"),
                       el("td", tokens, class_="num"),
                       el("td", sum(e.log_check != "verified" for e in eps), class_="num"),
                       el("td", ", ".join(f"{k} {v}" for k, v in labels.most_common(TOP_LABELS)))))
    head = ("suite", "agent", "episodes", "by status", "succeeded", "mean steps", "tokens", "logs not verified",
            f"top {TOP_LABELS} labels")
    return el("table", el("thead", el("tr", *(el("th", c) for c in head))), el("tbody", *rows),
              id="episodes-by-agent")


def _clipped(text: str | None, limit: int = 200) -> str:
    text = text or ""
    return text if len(text) <= limit else text[:limit] + f"... ({len(text)} chars)"


def oversight_table(episodes: list[Episode], limit: int = TOP_EPISODES) -> Markup | None:
    """Every action an overseer blocked, replaced or handed over (and approvals it recorded): the
    episode, the step, who decided, why, what was proposed and what ran instead; the first
    ``limit`` rows, with the counts of all."""
    found = [(ep, d) for ep in episodes for d in ep.decisions]
    if not found:
        return None
    counts = Counter(d.verb for _, d in found)
    rows = [el("tr", el("td", ep.record.get("episode_id", "")), el("td", d.step, class_="num"), el("td", d.verb),
               el("td", d.by), el("td", _clipped(d.reason, 400)), el("td", el("code", _clipped(d.proposed))),
               el("td", el("code", _clipped(d.executed)) if d.executed is not None and d.executed != d.proposed
                  else ("nothing ran" if d.executed is None else "")))
            for ep, d in found[:limit]]
    head = ("episode", "step", "decision", "by", "why", "proposed", "ran instead")
    more = f"; the first {limit} shown (agentbed replay LOG shows each)" if len(found) > limit else ""
    return el("div", el("h3", "Oversight decisions"),
              el("p", f"{len(found)} decisions in {len({id(ep) for ep, _ in found})} episodes: "
                 + ", ".join(f"{verb} {n}" for verb, n in sorted(counts.items())) + more, class_="facts"),
              el("div", el("table", el("thead", el("tr", *(el("th", c) for c in head))), el("tbody", *rows)),
                 class_="scroll"), id="oversight")


def episodes_section(run: RunContents) -> Markup:
    every = len(run.episodes) <= FULL_LIST
    shown = run.episodes if every else top_episodes(run.episodes)
    sources = sorted({ep.index for ep in run.episodes})
    by_suite: dict[str, list[dict[str, Any]]] = {}
    for ep in run.episodes:
        by_suite.setdefault(str(ep.record.get("suite", "?")), []).append(ep.record)
    maps = [el("figure", el("figcaption", f"{suite}: success rate per agent and task"), Markup(svg),
               class_="figure", id=f"episodes-heatmap-{slug(suite)}")
            for suite, records in sorted(by_suite.items()) if (svg := success_heatmap(records))]
    flagged = sum(priority(ep) < 4 for ep in run.episodes)
    view = f"agentbed view {shlex.quote(str(run.root))}"
    if every:
        caption, note = f"Every episode ({len(shown)} rows)", None
    else:
        caption = f"Episodes to read first ({len(shown)} of {flagged} that failed or were flagged)"
        note = el("p", f"{len(run.episodes)} episodes, {flagged} of them failed, cut short, errored or with a log "
                       f"that does not verify; the table shows {len(shown)}: logs that do not verify first, then "
                       f"errors, stopped or budget-cut episodes, then failures, taking each agent in turn. Every "
                       "episode, filtered and searchable, with its transcript: ", el("code", view),
                  "; or the index files (" + ", ".join(sources) + ").", class_="facts", id="episodes-pointer")
    return el("section",
              el("h2", f"Episodes ({len(run.episodes)})"),
              el("p", "From " + (", ".join(sources) or "no index file") + ". Logs are in episodes/ unless the row "
                 "names another place; `agentbed view` filters and searches them and shows each transcript.",
                 class_="facts"),
              *maps,
              _aggregates(run.episodes) if run.episodes else None,
              oversight_table(run.episodes),
              note,
              el("details", el("summary", caption),
                 el("div", el("table", el("thead", el("tr", *(el("th", c) for c in COLUMNS))),
                              el("tbody", *(_episode_row(n, ep) for n, ep in enumerate(shown, 1))),
                              id="episodes-table", data_rows=len(shown), data_episodes=len(run.episodes)),
                    class_="scroll"), open=not every or None),
              id="episodes", class_="episodes")
