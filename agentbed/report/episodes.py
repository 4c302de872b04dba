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
from collections.abc import Iterable
from typing import Any

from agentbed.report.html import Markup, el, fmt_cell, slug
from agentbed.report.rundir import RunContents
from agentbed.report.tally import TOP_EPISODES, Episode, EpisodeTally, FirstToRead
from agentbed.scores import scores_text

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


def top_episodes(episodes: Iterable[Episode], n: int = TOP_EPISODES) -> list[Episode]:
    """The ``n`` episodes to read first, most urgent class first; within a class, round-robin over
    (suite, agent) so each failing agent shows, and within an agent each task once before any
    task's second seed (otherwise index order)."""
    first = FirstToRead(n)
    for ep in episodes:
        first.add(ep)
    return first.chosen()


def _aggregates(tally: EpisodeTally) -> Markup:
    """One row per (suite, agent): episodes, by status, succeeded, mean steps, tokens, logs that
    do not verify, and its most frequent labels."""
    rows = []
    for (suite, agent), a in sorted(tally.agents.items()):
        rows.append(el("tr", el("td", suite), el("td", agent), el("td", a.episodes, class_="num"),
                       el("td", ", ".join(f"{k} {v}" for k, v in sorted(a.status.items()))),
                       el("td", f"{a.succeeded} ({a.succeeded / a.episodes:.0%})", class_="num"),
                       el("td", fmt_cell(a.steps / a.with_steps) if a.with_steps else "–", class_="num"),
                       el("td", a.tokens, class_="num"),
                       el("td", a.not_verified, class_="num"),
                       el("td", ", ".join(f"{k} {v}" for k, v in a.labels.most_common(TOP_LABELS)))))
    head = ("suite", "agent", "episodes", "by status", "succeeded", "mean steps", "tokens", "logs not verified",
            f"top {TOP_LABELS} labels")
    return el("table", el("thead", el("tr", *(el("th", c) for c in head))), el("tbody", *rows),
              id="episodes-by-agent")


def _clipped(text: str | None, limit: int = 200) -> str:
    text = text or ""
    return text if len(text) <= limit else text[:limit] + f"... ({len(text)} chars)"


def oversight_table(tally: EpisodeTally, limit: int = TOP_EPISODES) -> Markup | None:
    """Every action an overseer blocked, replaced or handed over (and approvals it recorded): the
    episode, the step, who decided, why, what was proposed and what ran instead; the first
    ``limit`` rows (at most the tally's TOP_EPISODES), with the counts of all."""
    found = tally.decided
    if not found:
        return None
    total = sum(tally.decisions.values())
    rows = [el("tr", el("td", ep.record.get("episode_id", "")), el("td", d.step, class_="num"), el("td", d.verb),
               el("td", d.by), el("td", _clipped(d.reason, 400)), el("td", el("code", _clipped(d.proposed))),
               el("td", el("code", _clipped(d.executed)) if d.executed is not None and d.executed != d.proposed
                  else ("nothing ran" if d.executed is None else "")))
            for ep, d in found[:limit]]
    head = ("episode", "step", "decision", "by", "why", "proposed", "ran instead")
    more = f"; the first {limit} shown (agentbed replay LOG shows each)" if total > limit else ""
    return el("div", el("h3", "Oversight decisions"),
              el("p", f"{total} decisions in {tally.decided_episodes} episodes: "
                 + ", ".join(f"{verb} {n}" for verb, n in sorted(tally.decisions.items())) + more, class_="facts"),
              el("div", el("table", el("thead", el("tr", *(el("th", c) for c in head))), el("tbody", *rows)),
                 class_="scroll"), id="oversight")


def episodes_section(run: RunContents) -> Markup:
    tally = run.episodes
    every = tally.first is not None
    shown = tally.shown()
    sources = sorted(tally.sources)
    maps = [el("figure", el("figcaption", f"{suite}: success rate per agent and task"), Markup(svg),
               class_="figure", id=f"episodes-heatmap-{slug(suite)}")
            for suite, cells in sorted(tally.heatmaps.items()) if (svg := cells.svg())]
    flagged = tally.flagged
    view = f"agentbed view {shlex.quote(str(run.root))}"
    if every:
        caption, note = f"Every episode ({len(shown)} rows)", None
    else:
        caption = f"Episodes to read first ({len(shown)} of {flagged} that failed or were flagged)"
        note = el("p", f"{len(tally)} episodes, {flagged} of them failed, cut short, errored or with a log "
                       f"that does not verify; the table shows {len(shown)}: logs that do not verify first, then "
                       f"errors, stopped or budget-cut episodes, then failures, taking each agent in turn. Every "
                       "episode, filtered and searchable, with its transcript: ", el("code", view),
                  "; or the index files (" + ", ".join(sources) + ").", class_="facts", id="episodes-pointer")
    return el("section",
              el("h2", f"Episodes ({len(tally)})"),
              el("p", "From " + (", ".join(sources) or "no index file") + ". Logs are in episodes/ unless the row "
                 "names another place; `agentbed view` filters and searches them and shows each transcript.",
                 class_="facts"),
              *maps,
              _aggregates(tally) if len(tally) else None,
              oversight_table(tally),
              note,
              el("details", el("summary", caption),
                 el("div", el("table", el("thead", el("tr", *(el("th", c) for c in COLUMNS))),
                              el("tbody", *(_episode_row(n, ep) for n, ep in enumerate(shown, 1))),
                              id="episodes-table", data_rows=len(shown), data_episodes=len(tally)),
                    class_="scroll"), open=not every or None),
              id="episodes", class_="episodes")
