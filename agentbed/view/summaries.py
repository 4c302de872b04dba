"""A workload summary's tables and plots for the viewer's run page (e.g. the control run's
protocols table and its safety-usefulness Pareto plots).

What reaches the page is JSON text the page inserts as text nodes (table cells, titles, notes)
and SVG that :mod:`agentbed.report.scatter` drew from numbers only. A figure that carries its
own markup (a matplotlib SVG) is not shown here: ``agentbed report`` shows it, sanitised; the
viewer names it instead, so no markup a workload wrote is ever inserted into the live page.
"""

from __future__ import annotations

from typing import Any

from agentbed.report.scatter import BadScatter, scatter_figure_svg

MAX_TABLES = 20
MAX_ROWS = 300  # per table; the rest is counted, and in ``agentbed report``
MAX_CELL = 2000  # characters of one cell


def _cell(value: Any) -> str:
    text = value if isinstance(value, str) else f"{value:.4g}" if isinstance(value, float) else str(value)
    return text[:MAX_CELL]


def _table(item: Any, i: int, problems: list[str]) -> dict[str, Any] | None:
    columns, rows = (item.get("columns"), item.get("rows")) if isinstance(item, dict) else (None, None)
    if not isinstance(columns, list) or not isinstance(rows, list):
        problems.append(f"tables[{i}] needs a list 'columns' and a list 'rows'")
        return None
    body = [[_cell(v) for v in row] for row in rows[:MAX_ROWS] if isinstance(row, list)]
    return {"title": _cell(item.get("title") or f"Table {i + 1}"), "columns": [_cell(c) for c in columns],
            "rows": body, "total_rows": len(rows), "note": _cell(item.get("note") or "")}


def _figure(item: Any, i: int, problems: list[str]) -> dict[str, Any] | None:
    if not isinstance(item, dict):
        problems.append(f"figures[{i}] is not an object")
        return None
    title = _cell(item.get("title") or f"Figure {i + 1}")
    if "scatter" not in item:
        return {"title": title, "svg": None, "note": "drawn in `agentbed report` only (its SVG is markup)"}
    try:
        svg = scatter_figure_svg(item)
    except BadScatter as exc:
        problems.append(f"figures[{i}]: {exc}")
        return None
    return {"title": title, "svg": svg, "note": _cell(item.get("note") or "")}


def workload_document(summary: Any) -> dict[str, Any]:
    """One summary's title, tables and figures, ready for the page; malformed parts are named in
    ``problems`` and left out."""
    if not isinstance(summary, dict):
        return {"title": "", "tables": [], "figures": [], "problems": ["the summary is not a JSON object"]}
    problems: list[str] = []
    tables, figures = (value if isinstance(value := summary.get(key), list) else [] for key in ("tables", "figures"))
    shown_tables = [t for t in (_table(item, i, problems) for i, item in enumerate(tables[:MAX_TABLES])) if t]
    shown_figures = [f for f in (_figure(item, i, problems) for i, item in enumerate(figures[:MAX_TABLES])) if f]
    return {"title": _cell(summary.get("title") or ""), "tables": shown_tables, "figures": shown_figures,
            "problems": problems}
