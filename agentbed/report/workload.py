"""One workload's section of the report, rendered generically from its summary.json.

The summary format is :mod:`agentbed.summary`. Whatever tables and figures a workload puts
there are shown as they are; each part gets a stable id (``workload-<suite>-table-<n>``,
``workload-<suite>-figure-<n>``, ``workload-<suite>-headline``) so tests and readers can find
it. A malformed part is replaced by a visible note naming the file and the field.
"""

from __future__ import annotations

from typing import Any

from agentbed.report.html import Markup, el, fmt_cell, fmt_number, slug
from agentbed.report.plots import fraction_table_heatmap
from agentbed.report.rundir import Problem
from agentbed.report.scatter import BadScatter, scatter_figure_svg
from agentbed.report.svg import InvalidSvg, sanitize_svg

_HEADLINE_KNOWN = {"metric", "estimate", "low", "high", "n", "higher_is_better", "confidence", "command",
                   "episodes", "seeds"}


def problem_note(problem: Problem) -> Markup:
    return el("div", el("code", problem.file), ": ", problem.message, class_="problem")


def _command(text: Any) -> Markup | None:
    return el("div", text, class_="command") if isinstance(text, str) and text else None


def _headline(summary: dict[str, Any], base: str, where: str, problems: list[Problem]) -> Markup | None:
    items = summary.get("headline", [])
    if not isinstance(items, list):
        problems.append(Problem(where, "headline is not a list"))
        return None
    valid = []
    for i, item in enumerate(items):
        if not isinstance(item, dict) or not all(isinstance(item.get(k), int | float) for k in ("estimate", "low", "high")):
            problems.append(Problem(where, f"headline[{i}] lacks numeric estimate/low/high; left out"))
        else:
            valid.append(item)
    if not valid:
        return None
    commands = [item.get("command") or summary.get("command") or "not stated" for item in valid]
    # One shared command goes under the table; a column only when metrics come from different commands.
    per_row = len(set(commands)) > 1
    rows = []
    for item, command in zip(valid, commands, strict=True):
        group = ", ".join(f"{k}={fmt_cell(v)}" for k, v in item.items() if k not in _HEADLINE_KNOWN)
        directions: dict[object, str] = {True: "higher is better", False: "lower is better"}
        direction = directions.get(item.get("higher_is_better"), "")
        episodes, seeds = item.get("episodes", summary.get("episodes")), item.get("seeds", summary.get("seeds"))
        rows.append(el("tr",
                       el("td", item.get("metric", "(unnamed)")), el("td", group),
                       el("td", fmt_number(item["estimate"]), class_="num estimate"),
                       el("td", f"[{fmt_number(item['low'])}, {fmt_number(item['high'])}]", class_="num interval"),
                       el("td", fmt_cell(item.get("n")), class_="num"),
                       el("td", fmt_cell(episodes) if episodes is not None else "not stated", class_="num"),
                       el("td", fmt_cell(seeds) if seeds is not None else "not stated", class_="num"),
                       el("td", direction),
                       el("td", el("code", command)) if per_row else None,
                       class_="headline-metric"))
    confidence = next((i["confidence"] for i in valid if isinstance(i.get("confidence"), float)), 0.95)
    columns = ["metric", "group", "estimate", f"{confidence * 100:g}% interval", "n", "episodes", "seeds", "direction"]
    head = el("tr", *(el("th", c) for c in columns + (["command"] if per_row else [])))
    return el("div", el("h3", "Headline metrics"),
              el("div", el("table", el("thead", head), el("tbody", *rows)), class_="scroll"),
              None if per_row else el("div", commands[0], class_="command"),
              id=f"{base}-headline", class_="headline")


def _table(item: Any, i: int, summary: dict[str, Any], base: str, where: str,
           problems: list[Problem]) -> Markup | None:
    columns, rows = (item.get("columns"), item.get("rows")) if isinstance(item, dict) else (None, None)
    if not isinstance(columns, list) or not isinstance(rows, list):
        problems.append(Problem(where, f"tables[{i}] needs a list 'columns' and a list 'rows'; left out"))
        return None
    body = []
    for r, row in enumerate(rows):
        if not isinstance(row, list):
            problems.append(Problem(where, f"tables[{i}].rows[{r}] is not a list; row left out"))
            continue
        if len(row) != len(columns):
            problems.append(Problem(where, f"tables[{i}].rows[{r}] has {len(row)} cells for {len(columns)} columns"))
        body.append(el("tr", *(el("td", fmt_cell(v), class_="num" if isinstance(v, int | float) else None)
                               for v in row)))
    note = item.get("note")
    grid = el("table", el("thead", el("tr", *(el("th", fmt_cell(c)) for c in columns))), el("tbody", *body))
    drawn = fraction_table_heatmap(columns, rows)  # a long per-task table reads better as a heat-map
    shown = el("div", el("div", Markup(drawn), class_="scroll heatmap"),
               el("details", el("summary", f"the table ({len(body)} rows)"), el("div", grid, class_="scroll"))) \
        if drawn else el("div", grid, class_="scroll")
    return el("div", el("h3", item.get("title") or f"Table {i + 1}"),
              shown,
              el("p", note, class_="note") if isinstance(note, str) and note else None,
              _command(item.get("command") or summary.get("command")),
              id=f"{base}-table-{i + 1}", class_="summary-table", data_rows=str(len(body)))


def _figure(item: Any, i: int, summary: dict[str, Any], base: str, where: str,
            problems: list[Problem]) -> Markup | None:
    if isinstance(item, dict) and "scatter" in item:  # data, drawn here (agentbed.report.scatter)
        try:
            svg = scatter_figure_svg(item)
        except BadScatter as exc:
            problems.append(Problem(where, f"figures[{i}]: {exc}; left out"))
            return None
    elif not isinstance(item, dict) or not isinstance(item.get("svg"), str):
        problems.append(Problem(where, f"figures[{i}] has no 'svg' text; left out"))
        return None
    else:
        try:
            svg = sanitize_svg(item["svg"], f"{base}-f{i + 1}")
        except InvalidSvg as exc:
            problems.append(Problem(where, f"figures[{i}].svg is not usable SVG ({exc}); left out"))
            return None
    note = item.get("note")
    return el("figure", el("figcaption", item.get("title") or f"Figure {i + 1}"), Markup(svg),
              el("p", note, class_="note") if isinstance(note, str) and note else None,
              _command(item.get("command") or summary.get("command")),
              id=f"{base}-figure-{i + 1}", class_="figure")


def _failure(summary: dict[str, Any], where: str, problems: list[Problem]) -> Markup | None:
    """``agentbed demo`` records a workload that raised as a summary with an ``error`` traceback."""
    error = summary.get("error")
    if not error:
        return None
    text = str(error)
    last = next((line for line in reversed(text.strip().splitlines()) if line.strip()), text)
    problems.append(Problem(where, f"the workload failed: {last.strip()[:300]}"))
    return el("details", el("summary", "traceback"), el("pre", text), class_="failure")


def _parts(summary: dict[str, Any], key: str, where: str, problems: list[Problem]) -> list[Any]:
    value = summary.get(key, [])
    if not isinstance(value, list):
        problems.append(Problem(where, f"'{key}' is not a list; none shown"))
        return []
    return value


def workload_section(suite: str, summary: Any, where: str, run_problems: list[Problem]) -> Markup:
    """The section for one workload; ``where`` is its summary file relative to the run dir.

    Problems found while rendering are appended to ``run_problems`` and shown in the section
    together with those found while loading the file.
    """
    base = f"workload-{slug(suite)}"
    problems: list[Problem] = []
    shown = [p for p in run_problems if p.file == where]
    if not isinstance(summary, dict):
        if summary is not None:
            problems.append(Problem(where, f"is a JSON {type(summary).__name__}, expected an object"))
        run_problems.extend(problems)
        return el("section", el("h2", suite), *(problem_note(p) for p in shown + problems),
                  id=base, class_="workload workload-unavailable", data_suite=suite)
    failure = _failure(summary, where, problems)
    facts = [f"{k}: {fmt_cell(summary[k])}" for k in ("episodes", "seeds", "wall_seconds")
             if summary.get(k) is not None]
    missing = [k for k in ("episodes", "seeds") if summary.get(k) is None]
    if missing:
        problems.append(Problem(where, f"does not state {' or '.join(missing)}"))
    headline = _headline(summary, base, where, problems)
    tables = [_table(t, i, summary, base, where, problems) for i, t in enumerate(_parts(summary, "tables", where, problems))]
    figures = [_figure(f, i, summary, base, where, problems)
               for i, f in enumerate(_parts(summary, "figures", where, problems))]
    title = summary.get("title") if isinstance(summary.get("title"), str) else suite
    run_problems.extend(problems)
    return el("section",
              el("h2", title, " ", el("code", f"({suite})") if title != suite else None),
              el("p", " · ".join(facts + [f"summary: {where}"]), class_="facts"),
              _command(summary.get("command")),
              *(problem_note(p) for p in shown + problems),
              failure,
              headline,
              el("div", *[t for t in tables if t is not None], class_="tables") if any(tables) else None,
              el("div", *[f for f in figures if f is not None], class_="figures") if any(figures) else None,
              id=base, class_="workload", data_suite=suite)
