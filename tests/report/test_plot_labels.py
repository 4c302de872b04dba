"""No two labels of a chart overprint: every ``<text>`` of the shared plot module's SVGs gets a box
from its font size and number of characters (0.6 em a character, 0.8 em above the baseline and
0.2 below, turned with the text's rotation), and no two boxes may overlap.

Checked on the charts the demo report holds, drawn by the workloads' own figure code with the
demo's attack, defense, dataset and controller names (the intervals are fixture numbers: the
layout depends on the names and their number, not on the values), and on the whole rendered
report: every ``svg.plot`` in it. A last test shows the check catches the old rotated x-labels.
"""

from __future__ import annotations

import math
import re
import xml.etree.ElementTree as ET
from itertools import combinations
from pathlib import Path
from typing import Any

import pytest

from agentbed.report import render_report
from agentbed.report.plots import BarRow, interval_bars
from agentbed.runner import EpisodeRecord
from agentbed.summary import table, write_summary
from controllers.oversight.report import figures as oversight_figures
from controllers.oversight.scalar import SCALAR_ONLY
from environments.contracts.tasks import TASKS as CONTRACT_TASKS
from suites.graphrag.demo import REAL_ATTACKS, REAL_DEFENSES, WORLD_ATTACKS, WORLD_DEFENSES
from suites.graphrag.report import Cell
from suites.graphrag.report import figure as graphrag_figure

CHAR_EM, ASCENT, DESCENT = 0.6, 0.8, 0.2
_NUM = r"[-+]?\d*\.?\d+"
Box = list[tuple[float, float]]


def _text_of(el: ET.Element) -> str:
    """The drawn text: the element's own text and what follows a ``<title>`` child (the tooltip is not drawn)."""
    parts = [el.text or ""]
    for child in el:
        parts.append(child.tail or "")
    return "".join(parts).strip()


def label_boxes(svg: str) -> list[tuple[str, Box]]:
    root = ET.fromstring(svg)
    base = float(root.get("font-size", "11"))
    out = []
    for el in root.iter():
        if el.tag.rsplit("}", 1)[-1] != "text":
            continue
        text = _text_of(el)
        if not text:
            continue
        size = float(el.get("font-size", base))
        x, y, angle = float(el.get("x", 0)), float(el.get("y", 0)), 0.0
        transform = el.get("transform", "")
        if (moved := re.search(rf"translate\(\s*({_NUM})[ ,]+({_NUM})\s*\)", transform)):
            x, y = x + float(moved.group(1)), y + float(moved.group(2))
        if (turned := re.search(rf"rotate\(\s*({_NUM})\s*\)", transform)):
            angle = math.radians(float(turned.group(1)))
        w = len(text) * CHAR_EM * size
        x0 = {"end": -w, "middle": -w / 2}.get(el.get("text-anchor", "start"), 0.0)
        corners = [(x0, -ASCENT * size), (x0 + w, -ASCENT * size), (x0 + w, DESCENT * size), (x0, DESCENT * size)]
        c, s = math.cos(angle), math.sin(angle)
        out.append((text, [(x + cx * c - cy * s, y + cx * s + cy * c) for cx, cy in corners]))
    return out


def _overlap(a: Box, b: Box, slack: float = 0.25) -> bool:
    """Separating-axis test for two convex quadrilaterals; touching (within ``slack`` px) is not overlap."""
    for poly in (a, b):
        for (x1, y1), (x2, y2) in zip(poly, poly[1:] + poly[:1], strict=True):
            nx, ny = y1 - y2, x2 - x1
            norm = math.hypot(nx, ny) or 1.0
            pa = [(px * nx + py * ny) / norm for px, py in a]
            pb = [(px * nx + py * ny) / norm for px, py in b]
            if max(pa) <= min(pb) + slack or max(pb) <= min(pa) + slack:
                return False
    return True


def overprints(svg: str) -> list[tuple[str, str]]:
    boxes = label_boxes(svg)
    return [(ta, tb) for (ta, a), (tb, b) in combinations(boxes, 2) if _overlap(a, b)]


def _record(success: bool, world: int) -> EpisodeRecord:
    return EpisodeRecord(f"e{world}{success}", "graphrag", f"world-{world}-q", "reader", world, "ok", success,
                         float(success), 3, 1.0, 0, metrics={"attack_success": success, "correct": not success})


def _cells(dataset: str, attacks: tuple[str, ...], defenses: tuple[str, ...]) -> list[Cell]:
    cells = []
    for i, a in enumerate(attacks):
        for j, d in enumerate(defenses):
            records = [_record((i + j + k) % 3 == 0, k % 4) for k in range(12)]
            cells.append(Cell(dataset, a, d, records))
    return cells


def demo_graphrag_figure() -> dict[str, Any]:
    """The demo's figure (suites/graphrag/demo.py): generated worlds and the real graph, its attacks and defenses."""
    return graphrag_figure({"world": _cells("world", WORLD_ATTACKS, WORLD_DEFENSES),
                            "nations": _cells("nations", REAL_ATTACKS, REAL_DEFENSES)}, WORLD_DEFENSES)


def oversight_result() -> dict[str, Any]:
    """An evaluation result with every controller the evaluation reports (its regret chart's rows)."""
    names = ["action-conditioned", "always-continue", "always-intervene", "oracle", *SCALAR_ONLY]
    controllers = {n: {"regret": {"estimate": 0.1 + 0.02 * k, "low": 0.05 + 0.02 * k, "high": 0.2 + 0.02 * k}}
                   for k, n in enumerate(names)}
    return {"benchmark": "alfworld", "controllers": controllers, "cost_sweep": [], "advantage_per_checkpoint": {},
            "primary_intervention": "expert"}


def test_graphrag_demo_chart_labels_do_not_overprint() -> None:
    svg = demo_graphrag_figure()["svg"]
    texts = [t for t, _ in label_boxes(svg)]
    assert {*WORLD_ATTACKS} - {"none"} <= set(texts)  # 'none' has no attack success, so no row
    assert {*WORLD_DEFENSES} <= set(texts) and {"world", "nations"} <= set(texts)
    assert overprints(svg) == []


def test_oversight_regret_chart_labels_do_not_overprint() -> None:
    result = oversight_result()
    svg = oversight_figures(result)[0]["svg"]
    assert set(result["controllers"]) <= {t for t, _ in label_boxes(svg)}
    assert overprints(svg) == []


@pytest.mark.parametrize("series", [1, 3, 9])
def test_interval_bars_with_many_long_labels_and_series(series: int) -> None:
    names = [f"series-with-a-long-name-{k}" for k in range(series)]
    rows = [BarRow(f"a row label that is much longer than the label column {i}",
                   tuple((n, 0.5, 0.4, 0.6) for n in names), group=f"group {i // 4}") for i in range(10)]
    assert overprints(interval_bars(rows, axis_label="share")) == []


def test_every_chart_in_the_report_keeps_its_labels_apart(run_dir: Path, summaries: dict[str, Any]) -> None:
    graphrag = {**summaries["graphrag"], "figures": [*summaries["graphrag"]["figures"], demo_graphrag_figure()]}
    oversight = {**summaries["oversight"], "figures": [*summaries["oversight"]["figures"],
                                                       *oversight_figures(oversight_result())]}
    tasks = [t.id for t in CONTRACT_TASKS]  # the contracts demo's per-task table: drawn as a heat-map
    per_task = table("Passed per task", ["task", "oracle", "naive", "model:local"],
                     [[t, "3/3", f"{k % 4}/3", "-" if k % 2 else "0/1"] for k, t in enumerate(tasks)])
    contracts = {**summaries["contracts"], "tables": [*summaries["contracts"]["tables"], per_task]}
    write_summary(contracts, run_dir / "contracts" / "summary.json")
    write_summary(graphrag, run_dir / "graphrag" / "summary.json")
    write_summary(oversight, run_dir / "oversight" / "summary.json")
    page = render_report(run_dir).read_text(encoding="utf-8")
    charts = re.findall(r'<svg[^>]*class="plot[^"]*"[^>]*>.*?</svg>', page, flags=re.S)
    kinds = {re.search(r'class="plot ([^"]+)"', c).group(1) for c in charts}
    assert {"forest", "heatmap", "bars"} <= kinds, kinds
    assert len(charts) >= 5  # the forest plot, two heat-maps, graphrag's and oversight's bars
    for chart in charts:
        assert overprints(chart) == [], chart[:200]


def test_the_check_catches_crowded_labels_rotated_or_not() -> None:
    """Attack names under grouped bars, 30 px apart: horizontal, or turned by 20 degrees, they
    overprint (30 px x sin 20 degrees is less than the 11 px of a line); turned upright they do not."""
    names = ["poisonedrag", "gragpoison", "community", "kepo", "tkpa"]

    def chart(rotation: str) -> str:
        texts = "".join(f'<text transform="translate({40 + 30 * k},200) {rotation}" text-anchor="end">{n}</text>'
                        for k, n in enumerate(names))
        return f'<svg xmlns="http://www.w3.org/2000/svg" font-size="11">{texts}</svg>'

    assert overprints(chart(""))
    assert overprints(chart("rotate(-20)"))
    assert not overprints(chart("rotate(-90)"))
