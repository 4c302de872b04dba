"""The plots the report and the viewer share, drawn as plain inline SVG (no scripts, no fonts
to fetch): a forest plot of estimates with their intervals, a heat-map of a value per (row,
column) cell, and horizontal interval bars (one or several series per row, with a legend).

Labels never overprint: row labels sit left of the plot area, one per row, cut to a width with the
full text in a ``<title>`` (a tooltip); heat-map column labels are drawn at 45 degrees in a band
sized for the longest cut label; a legend wraps to the width. ``tests/report/test_plot_labels.py``
checks every label's box against every other's.
"""

from __future__ import annotations

import math
import re
from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from html import escape
from typing import Any

_CHAR_W = 6.6  # width of one character at font-size 11, for sizing label bands
NOT_SCORED = "#f4cccc"  # a heat-map cell whose every episode errored
_NUMBER = r"[-+]?\d+(?:\.\d+)?(?:[eE][-+]?\d+)?"
_VALUE = re.compile(rf"^\s*({_NUMBER})\s*\[\s*({_NUMBER})\s*,\s*({_NUMBER})\s*\]")
_PAPER = re.compile(rf"({_NUMBER})")


@dataclass(frozen=True)
class ForestRow:
    label: str
    estimate: float
    low: float
    high: float
    paper: float | None = None  # the paper's figure for the same quantity, drawn as a diamond
    paper_text: str = ""  # what the paper says, shown beside the row
    group: str = ""  # e.g. the workload; rows of one group share one scale


def parse_interval(text: str) -> tuple[float, float, float] | None:
    """``"0.31 [0.20, 0.45]"`` -> (0.31, 0.20, 0.45); None when the text is no such value."""
    found = _VALUE.match(text or "")
    if not found:
        return None
    values = tuple(float(v) for v in found.groups())
    return values if all(math.isfinite(v) for v in values) else None  # type: ignore[return-value]


def paper_number(text: str | None) -> float | None:
    """The first number of a paper's figure (``"0.35 (Table 2)"`` -> 0.35), None without one."""
    found = _PAPER.search(text or "")
    return float(found.group(1)) if found else None


def _cut(text: str, chars: int) -> str:
    return text if len(text) <= chars else text[:max(chars - 1, 1)] + "\u2026"


def _fmt(value: float) -> str:
    return f"{value:.3g}" if abs(value) < 1000 else f"{value:.0f}"


def forest_plot(rows: list[ForestRow], *, label_chars: int = 38, width: int = 720) -> str:
    """One line per row: the interval as a bar, the estimate as a dot, the paper's figure as a
    diamond; each row is scaled to its group's range (groups are measured in different units)."""
    if not rows:
        return ""
    row_h, top = 22, 24
    label_w = min(label_chars, max(len(r.label) for r in rows)) * _CHAR_W + 12
    text_w = 150
    plot_x0, plot_x1 = label_w, width - text_w
    height = top + row_h * len(rows) + 8
    ranges: dict[str, tuple[float, float]] = {}
    for r in rows:
        values = [r.low, r.high, r.estimate] + ([r.paper] if r.paper is not None else [])
        lo, hi = ranges.get(r.group, (min(values), max(values)))
        ranges[r.group] = (min(lo, *values), max(hi, *values))
    parts = [f'<svg xmlns="http://www.w3.org/2000/svg" class="plot forest" width="{width}" height="{height}" '
             f'viewBox="0 0 {width} {height}" role="img" font-family="sans-serif" font-size="11">',
             f'<text x="{plot_x0}" y="14" fill="#555">estimate \u2022 with 95% interval; '
             f'\u25c6 the paper\'s figure</text>']
    for n, r in enumerate(rows):
        y = top + n * row_h + row_h / 2
        shown_lo, shown_hi = ranges[r.group]
        if 0.0 <= shown_lo and shown_hi <= 1.0:  # a share: the whole [0, 1] scale, comparable across rows
            shown_lo, shown_hi = 0.0, 1.0
        pad = (shown_hi - shown_lo) * 0.04 or max(abs(shown_hi), 1.0) * 0.1
        lo, hi = shown_lo - pad, shown_hi + pad

        def x(v: float, lo: float = lo, hi: float = hi) -> float:
            return plot_x0 + (v - lo) / (hi - lo) * (plot_x1 - plot_x0)

        shade = "#f4f6f8" if n % 2 == 0 else "#ffffff"
        parts.append(f'<rect x="0" y="{y - row_h / 2:.1f}" width="{width}" height="{row_h}" fill="{shade}"/>')
        parts.append(f'<text x="{label_w - 8}" y="{y + 4:.1f}" text-anchor="end"><title>{escape(r.label)}</title>'
                     f'{escape(_cut(r.label, label_chars))}</text>')
        parts.append(f'<line x1="{x(shown_lo):.1f}" x2="{x(shown_hi):.1f}" y1="{y:.1f}" y2="{y:.1f}" '
                     f'stroke="#d5d9de"/><text x="{x(shown_lo):.1f}" y="{y + 10:.1f}" font-size="8" fill="#888" '
                     f'text-anchor="middle">{_fmt(shown_lo)}</text><text x="{x(shown_hi):.1f}" y="{y + 10:.1f}" '
                     f'font-size="8" fill="#888" text-anchor="middle">{_fmt(shown_hi)}</text>')
        parts.append(f'<line x1="{x(r.low):.1f}" x2="{x(r.high):.1f}" y1="{y:.1f}" y2="{y:.1f}" stroke="#1f5fa8" '
                     f'stroke-width="2.5"/>')
        parts.append(f'<circle cx="{x(r.estimate):.1f}" cy="{y:.1f}" r="4" fill="#1f5fa8"><title>'
                     f'{escape(r.label)}: {_fmt(r.estimate)} [{_fmt(r.low)}, {_fmt(r.high)}]</title></circle>')
        if r.paper is not None:
            px = x(r.paper)
            parts.append(f'<path d="M{px:.1f},{y - 6:.1f} l5,6 l-5,6 l-5,-6 z" fill="#c0392b"><title>paper: '
                         f'{escape(r.paper_text or _fmt(r.paper))}</title></path>')
        beside = f"{_fmt(r.estimate)} [{_fmt(r.low)}, {_fmt(r.high)}]"
        if r.paper_text:
            beside += f" | paper {r.paper_text}"
        parts.append(f'<text x="{plot_x1 + 8}" y="{y + 4:.1f}"><title>{escape(beside)}</title>'
                     f'{escape(_cut(beside, int(text_w / _CHAR_W) + 4))}</text>')
    parts.append("</svg>")
    return "".join(parts)


def _color(share: float) -> str:
    """White (0) to a saturated blue (1)."""
    share = min(max(share, 0.0), 1.0)
    r, g, b = (int(255 + (c - 255) * share) for c in (31, 95, 168))
    return f"#{r:02x}{g:02x}{b:02x}"


def heatmap(rows: list[str], columns: list[str], cells: dict[tuple[str, str], tuple[float | None, str]], *,
            label_chars: int = 28, cell: int = 26, title: str = "") -> str:
    """A grid of ``rows`` x ``columns``; ``cells[(row, column)] = (share in [0, 1], tooltip)``.
    A missing cell is drawn grey (not run); a share of None pink (run, but nothing scored)."""
    if not rows or not columns:
        return ""
    row_label_w = min(label_chars, max(len(r) for r in rows)) * _CHAR_W + 10
    col_band = min(label_chars, max(len(c) for c in columns)) * _CHAR_W * 0.72 + 14
    top = col_band + (18 if title else 0)
    width = int(max(row_label_w + cell * len(columns) + col_band * 0.72 + 10, len(title) * _CHAR_W + 10))
    height = int(top + cell * len(rows) + 6)
    parts = [f'<svg xmlns="http://www.w3.org/2000/svg" class="plot heatmap" width="{width}" height="{height}" '
             f'viewBox="0 0 {width} {height}" role="img" font-family="sans-serif" font-size="11">']
    if title:
        parts.append(f'<text x="2" y="13" fill="#555">{escape(title)}</text>')
    for j, column in enumerate(columns):
        cx = row_label_w + j * cell + cell / 2
        parts.append(f'<text transform="translate({cx + 3:.1f},{top - 4:.1f}) rotate(-45)"><title>{escape(column)}'
                     f'</title>{escape(_cut(column, label_chars))}</text>')
    for i, row in enumerate(rows):
        y = top + i * cell
        parts.append(f'<text x="{row_label_w - 6}" y="{y + cell / 2 + 4:.1f}" text-anchor="end"><title>'
                     f'{escape(row)}</title>{escape(_cut(row, label_chars))}</text>')
        for j, column in enumerate(columns):
            x = row_label_w + j * cell
            found = cells.get((row, column))
            if found is None:
                parts.append(f'<rect x="{x}" y="{y}" width="{cell - 2}" height="{cell - 2}" fill="#e6e6e6">'
                             f'<title>{escape(row)} x {escape(column)}: not run</title></rect>')
                continue
            share, tip = found
            if share is None:
                parts.append(f'<rect class="cell not-scored" x="{x}" y="{y}" width="{cell - 2}" height="{cell - 2}" '
                             f'fill="{NOT_SCORED}" stroke="#ccc" stroke-width="0.5"><title>{escape(row)} x '
                             f'{escape(column)}: not scored: {escape(tip)}</title></rect>')
                continue
            parts.append(f'<rect class="cell" x="{x}" y="{y}" width="{cell - 2}" height="{cell - 2}" '
                         f'fill="{_color(share)}" stroke="#ccc" stroke-width="0.5"><title>{escape(row)} x '
                         f'{escape(column)}: {escape(tip)}</title></rect>')
    parts.append("</svg>")
    return "".join(parts)


def success_heatmap(records: Iterable[Mapping[str, Any]], *, running: str = "running") -> str:
    """Success rate per agent x task over the scored episodes (index records or viewer rows); the
    errored ones (:func:`agentbed.problems.is_errored`) are not scored: counted in the tooltip, and
    a cell with no scored episode is drawn as "not scored", never as a failure. The report's and the
    viewer's per-task picture."""
    cells = SuccessCells(running=running)
    for r in records:
        cells.add(r)
    return cells.svg()


class SuccessCells:
    """:func:`success_heatmap` folded one record at a time: per (agent, task) the scored episodes,
    those that succeeded and the errored ones, so a run of 100,000 episodes is drawn from counts."""

    def __init__(self, *, running: str = "running") -> None:
        self.running = running
        self.scored: dict[tuple[str, str], list[int]] = {}  # cell -> [succeeded, scored]
        self.errors: dict[tuple[str, str], int] = {}

    def add(self, r: Mapping[str, Any]) -> None:
        from agentbed.problems import is_errored

        if r.get("status") == self.running:
            return
        key = (str(r.get("agent", "")), str(r.get("task", "")))
        cell = self.scored.setdefault(key, [0, 0])
        if r["errored"] if "errored" in r else is_errored(r):  # a viewer row says so; an index record is read
            self.errors[key] = self.errors.get(key, 0) + 1
        else:
            cell[0] += bool(r.get("success"))
            cell[1] += 1

    def svg(self) -> str:
        agents = sorted({a for a, _ in self.scored})
        tasks = sorted({t for _, t in self.scored})
        cells: dict[tuple[str, str], tuple[float | None, str]] = {}
        for key, (won, n) in self.scored.items():
            errored = f"{self.errors[key]} errored (not scored)" if self.errors.get(key) else ""
            cells[key] = (won / n, f"{won}/{n} scored succeeded" + (f", {errored}" if errored else "")) \
                if n else (None, errored)
        return heatmap(agents, tasks, cells, title="success rate, agent x task (white 0, blue 1; grey: not run; "
                                                   "pink: not scored, every episode errored)")


_FRACTION = re.compile(r"^\s*(\d+)\s*/\s*(\d+)\s*$")
LONG_TABLE = 20  # rows beyond which a per-task table of k/n cells is drawn as a heat-map


def fraction_table_heatmap(columns: list[Any], rows: list[Any]) -> str:
    """A long per-task table of ``k/n`` cells as a heat-map (tasks x the other columns), or "" when
    the table is no such table: either ``[task, A, B, ...]`` with a cell per column, or
    ``[agent, task, passed]`` with one row per (agent, task)."""
    names = [str(c) for c in columns]
    if len(rows) <= LONG_TABLE or "task" not in names or not all(isinstance(r, list) and len(r) == len(names)
                                                                 for r in rows):
        return ""
    cells: dict[tuple[str, str], tuple[float | None, str]] = {}
    t = names.index("task")
    if "agent" in names and len(names) == 3:
        a = names.index("agent")
        v = 3 - a - t
        entries = [(str(r[t]), str(r[a]), r[v]) for r in rows]
    else:
        entries = [(str(r[t]), names[j], r[j]) for r in rows for j in range(len(names)) if j != t]
    for task, column, value in entries:
        found = _FRACTION.match(str(value))
        if found is None:
            if str(value).strip() in ("-", "–", ""):
                continue
            return ""
        k, n = int(found.group(1)), int(found.group(2))
        if n == 0:
            continue
        cells[(task, column)] = (k / n, f"{k}/{n}")
    tasks = list(dict.fromkeys(task for task, _ in cells))
    others = list(dict.fromkeys(column for _, column in cells))
    return heatmap(tasks, others, cells, title="share passed (white 0, blue 1; grey: not run)", cell=16) \
        if cells else ""


@dataclass(frozen=True)
class BarRow:
    """One label on the vertical axis with a bar per series: ``bars = ((series, estimate, low, high), ...)``.
    Consecutive rows of one ``group`` sit under a heading row (e.g. the dataset)."""
    label: str
    bars: tuple[tuple[str, float, float, float], ...]
    group: str = ""


_SERIES_COLORS = ("#4c72b0", "#dd8452", "#55a868", "#c44e52", "#8172b3", "#937860", "#da8bc3", "#8c8c8c")


def _ticks(lo: float, hi: float, count: int = 5) -> list[float]:
    step = (hi - lo) / (count - 1)
    return [lo + k * step for k in range(count)]


def interval_bars(rows: list[BarRow], *, axis_label: str, lo: float | None = None, hi: float | None = None,
                  label_chars: int = 28, width: int = 640, bar_h: int = 9) -> str:
    """Horizontal bars at their estimates with the 95% interval as a whisker; row labels on the
    vertical axis, one per row (a row with several series is a cluster of thin bars in the
    series' colours, named by a legend above), so no label overprints another however many rows
    or series there are. The scale is [lo, hi], by default the data's range and 0."""
    if not rows:
        return ""
    series = list(dict.fromkeys(s for r in rows for s, *_ in r.bars))
    colors = {s: _SERIES_COLORS[k % len(_SERIES_COLORS)] for k, s in enumerate(series)}
    values = [v for r in rows for _, *vs in r.bars for v in vs]
    lo = min(0.0, *values) if lo is None else lo
    hi = max(0.0, *values) if hi is None else hi
    hi = hi if hi > lo else lo + 1.0
    label_w = min(label_chars, max(len(r.label) for r in rows)) * _CHAR_W + 12
    plot_x0, plot_x1 = label_w, width - 24

    def x(v: float) -> float:
        return plot_x0 + (min(max(v, lo), hi) - lo) / (hi - lo) * (plot_x1 - plot_x0)

    parts: list[str] = []
    y = 6.0
    if len(series) > 1 or series[0]:  # the legend, wrapped to the width
        lx = plot_x0
        for s in series:
            w = 14 + len(_cut(s, label_chars)) * _CHAR_W + 12
            if lx + w > width and lx > plot_x0:
                lx, y = plot_x0, y + 16
            parts.append(f'<rect x="{lx:.1f}" y="{y + 2:.1f}" width="10" height="10" fill="{colors[s]}"/>'
                         f'<text x="{lx + 14:.1f}" y="{y + 11:.1f}"><title>{escape(s)}</title>'
                         f'{escape(_cut(s, label_chars))}</text>')
            lx += w
        y += 20
    top, group, legend_end = y, None, len(parts)
    for r in rows:
        if r.group and r.group != group:
            group = r.group
            parts.append(f'<text x="4" y="{y + 13:.1f}" font-weight="bold"><title>{escape(r.group)}</title>'
                         f'{escape(_cut(r.group, int((width - 8) / _CHAR_W)))}</text>')
            y += 18
        cluster = max(bar_h * len(r.bars), 14)
        parts.append(f'<text x="{label_w - 8:.1f}" y="{y + cluster / 2 + 4:.1f}" text-anchor="end"><title>'
                     f'{escape(r.label)}</title>{escape(_cut(r.label, label_chars))}</text>')
        for k, (s, est, low, high) in enumerate(r.bars):
            by = y + (cluster - bar_h * len(r.bars)) / 2 + k * bar_h
            tip = f"{r.label}{' / ' + s if s else ''}: {_fmt(est)} [{_fmt(low)}, {_fmt(high)}]"
            x0, xe = sorted((x(0.0 if lo <= 0.0 <= hi else lo), x(est)))
            parts.append(f'<rect class="bar" x="{x0:.1f}" y="{by + 1:.1f}" width="{max(xe - x0, 0.5):.1f}" '
                         f'height="{bar_h - 2}" fill="{colors[s]}"><title>{escape(tip)}</title></rect>'
                         f'<line x1="{x(low):.1f}" x2="{x(high):.1f}" y1="{by + bar_h / 2:.1f}" '
                         f'y2="{by + bar_h / 2:.1f}" stroke="#222" stroke-width="1"/>')
        y += cluster + 4
    bottom = y
    parts.append(f'<line x1="{plot_x0}" x2="{plot_x1}" y1="{bottom:.1f}" y2="{bottom:.1f}" stroke="#888"/>')
    for t in _ticks(lo, hi):  # grid lines under the bars, tick labels under the axis
        parts.insert(legend_end, f'<line x1="{x(t):.1f}" x2="{x(t):.1f}" y1="{top:.1f}" y2="{bottom + 3:.1f}" '
                                 f'stroke="#e3e6ea"/>')
        parts.append(f'<text x="{x(t):.1f}" y="{bottom + 14:.1f}" text-anchor="middle" font-size="10">'
                     f'{_fmt(round(t, 6))}</text>')
    parts.append(f'<text x="{(plot_x0 + plot_x1) / 2:.1f}" y="{bottom + 30:.1f}" text-anchor="middle" fill="#555">'
                 f'{escape(axis_label)}</text>')
    height = int(bottom + 38)
    return (f'<svg xmlns="http://www.w3.org/2000/svg" class="plot bars" width="{width}" height="{height}" '
            f'viewBox="0 0 {width} {height}" role="img" font-family="sans-serif" font-size="11">'
            + "".join(parts) + "</svg>")
