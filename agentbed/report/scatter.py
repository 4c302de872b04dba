"""A scatter of estimates with an interval on both axes (a safety-usefulness Pareto plot), drawn
as inline SVG from numbers only.

A summary offers it as a figure holding data, not markup::

    {"title": ..., "scatter": {"x_label": ..., "y_label": ..., "points": [
        {"label": ..., "x": {"estimate", "low", "high"}, "y": {...}, "front": true}]}}

so the report and the viewer draw it the same way and nothing a workload (or a model it ran)
wrote reaches the page as markup: every coordinate goes through ``float`` and is printed with a
fixed format; a label is escaped text, shown in a legend beside the plot (one line per point,
numbered, never overprinting) and the point carries only its number.
"""

from __future__ import annotations

import html
import math
import re
from dataclasses import dataclass
from typing import Any

from agentbed.report.plots import _CHAR_W, _cut

MAX_POINTS = 200  # a grid of protocols is tens; more would not be read as a plot
_NOT_XML = re.compile("[\x00-\x08\x0b\x0c\x0e-\x1f\ud800-\udfff\ufffe\uffff]")


def escape(text: str) -> str:
    """Text for SVG: HTML-escaped, and characters XML cannot hold replaced (the figure stays a
    well-formed document wherever it is parsed)."""
    return html.escape(_NOT_XML.sub("\ufffd", text), quote=True)


@dataclass(frozen=True)
class Point:
    label: str
    x: float
    x_low: float
    x_high: float
    y: float
    y_low: float
    y_high: float
    front: bool = False  # on the Pareto front: drawn filled and red


class BadScatter(ValueError):
    """A scatter figure whose data is not what :func:`points_of` reads; the message names the field."""


def _number(value: Any, where: str) -> float:
    if isinstance(value, bool) or not isinstance(value, int | float) or not math.isfinite(value) \
            or abs(value) > 1e6:
        raise BadScatter(f"{where} is not a finite number (at most 1e6 in size)")
    return float(value)


def _interval(value: Any, where: str) -> tuple[float, float, float]:
    if isinstance(value, int | float) and not isinstance(value, bool):
        v = _number(value, where)
        return v, v, v
    if not isinstance(value, dict):
        raise BadScatter(f"{where} needs estimate, low and high")
    est = _number(value.get("estimate"), f"{where}.estimate")
    low = _number(value.get("low", est), f"{where}.low")
    high = _number(value.get("high", est), f"{where}.high")
    return est, min(low, est), max(high, est)


def points_of(spec: Any) -> list[Point]:
    """The points of a figure's ``scatter`` part; :class:`BadScatter` names the first bad field."""
    points = spec.get("points") if isinstance(spec, dict) else None
    if not isinstance(points, list):
        raise BadScatter("scatter.points is not a list")
    if len(points) > MAX_POINTS:
        raise BadScatter(f"scatter.points has {len(points)} points (at most {MAX_POINTS})")
    out = []
    for i, p in enumerate(points):
        if not isinstance(p, dict):
            raise BadScatter(f"scatter.points[{i}] is not an object")
        x = _interval(p.get("x"), f"scatter.points[{i}].x")
        y = _interval(p.get("y"), f"scatter.points[{i}].y")
        out.append(Point(str(p.get("label", "")), *x, *y, front=p.get("front") is True))
    return out


def _ticks(lo: float, hi: float) -> list[float]:
    step = (hi - lo) / 5 or 1.0
    return [lo + i * step for i in range(6)]


def _free_spot(x: float, y: float, w: float, h: float, area: tuple[float, float, float, float],
               placed: list[tuple[float, float, float, float]]) -> tuple[float, float] | None:
    """The baseline of a ``w`` x ``h`` label near (x, y), inside ``area``, overlapping no box in
    ``placed`` (which it joins); None when every candidate spot is taken."""
    for d in (5.0, 10.0, 16.0, 24.0):
        for bx, by in ((x + d, y - d), (x - d - w, y - d), (x + d, y + d + h), (x - d - w, y + d + h)):
            bx = min(max(bx, area[0] + 1), area[2] - w - 1)
            by = min(max(by, area[1] + h + 1), area[3] - 3)
            box = (bx, by - h, bx + w, by + 2)
            if all(box[2] <= o[0] or o[2] <= box[0] or box[3] <= o[1] or o[3] <= box[1] for o in placed):
                placed.append(box)
                return bx, by
    return None


def scatter_plot(points: list[Point], *, x_label: str, y_label: str, width: int = 720,
                 label_chars: int = 40) -> str:
    """Points with their intervals as whiskers on a shared [0, 1] scale (wider when the data are);
    a numbered legend on the right gives each label with its two values."""
    if not points:
        return ""
    legend_w = min(label_chars + 26, max(len(p.label) for p in points) + 26) * _CHAR_W
    size = max(240.0, min(420.0, width - legend_w - 70))
    left, top = 52.0, 14.0
    # a share's [0, 1], widened to the next tenth when the data go beyond it
    x_lo, x_hi = min(0.0, math.floor(min(p.x_low for p in points) * 10) / 10), \
        max(1.0, math.ceil(max(p.x_high for p in points) * 10) / 10)
    y_lo, y_hi = min(0.0, math.floor(min(p.y_low for p in points) * 10) / 10), \
        max(1.0, math.ceil(max(p.y_high for p in points) * 10) / 10)

    def px(v: float) -> float:
        return left + (v - x_lo) / (x_hi - x_lo) * size

    def py(v: float) -> float:
        return top + size - (v - y_lo) / (y_hi - y_lo) * size

    row_h = 16
    height = int(max(top + size + 44, top + row_h * (len(points) + 1) + 8))
    total_w = int(left + size + 24 + legend_w)
    parts = [f'<svg xmlns="http://www.w3.org/2000/svg" class="plot scatter" width="{total_w}" height="{height}" '
             f'viewBox="0 0 {total_w} {height}" role="img" font-family="sans-serif" font-size="11">',
             f'<rect x="{left:.1f}" y="{top:.1f}" width="{size:.1f}" height="{size:.1f}" fill="#fbfcfd" '
             f'stroke="#ccc"/>']
    for t in _ticks(x_lo, x_hi):
        parts.append(f'<line x1="{px(t):.1f}" x2="{px(t):.1f}" y1="{top:.1f}" y2="{top + size:.1f}" stroke="#eee"/>'
                     f'<text x="{px(t):.1f}" y="{top + size + 13:.1f}" text-anchor="middle" font-size="9" '
                     f'fill="#666">{t:.3g}</text>')
    for t in _ticks(y_lo, y_hi):
        parts.append(f'<line x1="{left:.1f}" x2="{left + size:.1f}" y1="{py(t):.1f}" y2="{py(t):.1f}" stroke="#eee"/>'
                     f'<text x="{left - 4:.1f}" y="{py(t) + 3:.1f}" text-anchor="end" font-size="9" '
                     f'fill="#666">{t:.3g}</text>')
    parts.append(f'<text x="{left + size / 2:.1f}" y="{top + size + 30:.1f}" text-anchor="middle">'
                 f'{escape(_cut(x_label, int(size / _CHAR_W)))}</text>')
    parts.append(f'<text transform="translate(12,{top + size / 2:.1f}) rotate(-90)" text-anchor="middle">'
                 f'{escape(_cut(y_label, int(size / _CHAR_W)))}</text>')
    # coincident points share one number label: "1,3" instead of two overprinted digits
    numbers: dict[tuple[int, int], list[int]] = {}
    for n, p in enumerate(points, 1):
        numbers.setdefault((round(px(p.x)), round(py(p.y))), []).append(n)
    for n, p in enumerate(points, 1):
        color = "#c0392b" if p.front else "#4a7ab5"
        x, y = px(p.x), py(p.y)
        parts.append(f'<g class="point{" front" if p.front else ""}" stroke="{color}">'
                     f'<line x1="{px(p.x_low):.1f}" x2="{px(p.x_high):.1f}" y1="{y:.1f}" y2="{y:.1f}"/>'
                     f'<line x1="{x:.1f}" x2="{x:.1f}" y1="{py(p.y_low):.1f}" y2="{py(p.y_high):.1f}"/>'
                     f'<circle cx="{x:.1f}" cy="{y:.1f}" r="4" fill="{color if p.front else "#ffffff"}">'
                     f'<title>{n}. {escape(p.label)}: {escape(x_label)} {p.x:.3f} '
                     f'[{p.x_low:.3f}, {p.x_high:.3f}], {escape(y_label)} {p.y:.3f} [{p.y_low:.3f}, '
                     f'{p.y_high:.3f}]</title></circle></g>')
    placed: list[tuple[float, float, float, float]] = []
    for (x, y), ns in numbers.items():
        text = ",".join(map(str, ns))
        spot = _free_spot(x, y, len(text) * 0.6 * 9, 9.0, (left, top, left + size, top + size), placed)
        if spot is not None:  # else the point's tooltip still names it
            parts.append(f'<text x="{spot[0]:.1f}" y="{spot[1]:.1f}" font-size="9" fill="#333">{text}</text>')
    lx = left + size + 24
    parts.append(f'<text x="{lx:.1f}" y="{top + 8:.1f}" fill="#555">red, filled: on the Pareto front</text>')
    for n, p in enumerate(points, 1):
        text = f"{n}. {p.label}"
        values = f"  ({p.x:.2f}, {p.y:.2f})"
        parts.append(f'<text x="{lx:.1f}" y="{top + 8 + row_h * n:.1f}" fill="{"#c0392b" if p.front else "#222"}">'
                     f'<title>{escape(text)}</title>{escape(_cut(text, label_chars))}{values}</text>')
    parts.append("</svg>")
    return "".join(parts)


def scatter_figure_svg(item: dict[str, Any]) -> str:
    """The SVG of a summary figure whose ``scatter`` part holds the data; :class:`BadScatter` if it
    is malformed."""
    spec = item.get("scatter")
    points = points_of(spec)
    assert isinstance(spec, dict)  # points_of checked it
    return scatter_plot(points, x_label=str(spec.get("x_label", "")), y_label=str(spec.get("y_label", "")))
