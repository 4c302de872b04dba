"""A control run in the viewer and the report: its safety-usefulness Pareto plot per audit budget
(drawn from numbers by agentbed.report.scatter) and its protocols table; hostile protocol and
setting names stay text, in the API's SVG, in the report and in a real browser."""

from __future__ import annotations

import json
import shutil
import xml.etree.ElementTree as ET
from pathlib import Path
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from agentbed.cli import main
from agentbed.report import render_report
from agentbed.report.scatter import BadScatter, Point, points_of, scatter_plot
from controllers.control.measures import AUDIT_BUDGETS
from tests.report.test_plot_labels import overprints

from .conftest import serve

SUBRUN = "tm_scripted_"
DRAWN = {"svg", "rect", "line", "text", "title", "g", "circle"}  # all a scatter may hold
HOSTILE = ['<script>window.__pwned=1</script>', '"><img src=x onerror="window.__pwned=1">',
           "]]><svg onload=window.__pwned=1>", "</text><foreignObject><iframe src=javascript:1>",
           "&lt;b&gt; \x00\x1b[31m"]


@pytest.fixture(scope="module")
def control_root(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A real, small control run: scripted policies on one contracts task under tm and dtt."""
    out = tmp_path_factory.mktemp("view-control") / "ctl"
    assert main(["control", "--out", str(out), "--settings", "contracts", "--tasks", "1", "--protocols", "tm,dtt",
                 "--defer", "0.3", "--counterfactual", "0", "--resamples", "50", "--executor", "serial"]) == 0
    return out


def _tags(svg: str) -> set[str]:
    return {el.tag.rsplit("}", 1)[-1] for el in ET.fromstring(svg).iter()}


def _attributes(svg: str) -> set[str]:
    return {name.rsplit("}", 1)[-1].lower() for el in ET.fromstring(svg).iter() for name in el.attrib}


def test_a_control_runs_page_shows_its_pareto_plots_and_protocols_table(control_root: Path) -> None:
    summary = json.loads((control_root / SUBRUN / "control" / "summary.json").read_text())
    protocols = sorted({r["protocol"] for r in summary["control"]["rows"]})
    assert protocols == ["dtt@0.3[scripted]", "tm[scripted]"]
    for client in serve(control_root):
        code, doc = client.get(f"/api/run?run={SUBRUN}")
        assert code == 200
        shown = doc["workloads"]["control"]
        assert shown["problems"] == []
        figures = shown["figures"]
        assert len(figures) == len(AUDIT_BUDGETS) and "1% audit budget" in figures[0]["title"]
        for figure in figures:
            svg = figure["svg"]
            assert _tags(svg) <= DRAWN and svg.count("<circle") == len(protocols)
            assert all(f"{n}. {p}" in svg for n, p in enumerate(protocols, 1))
            assert overprints(svg) == []
        table = shown["tables"][0]
        assert table["columns"][:4] == ["protocol", "audit budget %", "safety", "usefulness"]
        assert {r[0] for r in table["rows"]} == set(protocols)
        assert len(table["rows"]) == len(protocols) * len(AUDIT_BUDGETS)
    page = render_report(control_root / SUBRUN).read_text()  # the report draws the same plots
    assert page.count('class="plot scatter"') == len(AUDIT_BUDGETS)


def hostile_copy(control_root: Path, root: Path) -> Path:
    """The sub-run with every protocol name (plot labels, table cells) and the titles made hostile."""
    run = root / SUBRUN
    shutil.copytree(control_root / SUBRUN, run)
    path = run / "control" / "summary.json"
    summary = json.loads(path.read_text())
    for figure in summary["figures"]:
        figure["title"] = HOSTILE[0]
        figure["scatter"]["x_label"] = HOSTILE[1]
        for k, point in enumerate(figure["scatter"]["points"]):
            point["label"] = HOSTILE[k % len(HOSTILE)] + f" setting {HOSTILE[(k + 2) % len(HOSTILE)]}"
    for table in summary["tables"]:
        table["title"] = HOSTILE[1]
        for k, row in enumerate(table["rows"]):
            row[0] = HOSTILE[k % len(HOSTILE)]
    summary["title"] = HOSTILE[2]
    path.write_text(json.dumps(summary))
    return root


def test_hostile_names_in_a_control_summary_stay_text(control_root: Path, tmp_path: Path) -> None:
    root = hostile_copy(control_root, tmp_path / "runs")
    for client in serve(root):
        _, doc = client.get(f"/api/run?run={SUBRUN}")
    figures = doc["workloads"]["control"]["figures"]
    assert len(figures) == len(AUDIT_BUDGETS)
    for figure in figures:
        svg = figure["svg"]
        tree = ET.fromstring(svg)  # well-formed: nothing a label held closed an element
        assert _tags(svg) <= DRAWN and not any(a.startswith("on") or "href" in a for a in _attributes(svg))
        texts = "".join(tree.itertext())
        assert "<script>window.__pwned=1</script>" in texts and 'onerror="window.__pwned=1"' in texts
        assert "\x00" not in svg and "\x1b" not in svg
    page = render_report(root / SUBRUN).read_text()
    assert "<script>window" not in page and "<img src=x" not in page and "<svg onload" not in page


@pytest.mark.chromium
def test_hostile_names_never_run_in_the_browser(control_root: Path, tmp_path: Path) -> None:
    from agentbed.testing import chromium_browser

    root = hostile_copy(control_root, tmp_path / "runs")
    with chromium_browser() as browser:
        page = browser.new_context(viewport={"width": 1280, "height": 900}, bypass_csp=True).new_page()
        for client in serve(root):
            page.goto(client.base + f"/#/run/{SUBRUN}")
            page.wait_for_selector("#workloads svg.scatter circle", timeout=10_000)
            assert page.locator("#workloads svg.scatter").count() == len(AUDIT_BUDGETS)
            cells = page.locator("#workloads table tbody tr td:first-child").all_inner_texts()
            assert HOSTILE[0] in cells and HOSTILE[1] in cells
            page.wait_for_timeout(300)
            assert page.evaluate("window.__pwned") is None
            assert page.locator("#workloads img, #workloads script, #workloads iframe, "
                                "#workloads foreignObject").count() == 0


_share = st.floats(0, 1)
_labels = st.text(st.characters(), max_size=60) | st.sampled_from([*HOSTILE, "lone \ud800 surrogate"])


@st.composite
def _points(draw: Any) -> list[Point]:
    out = []
    for _ in range(draw(st.integers(1, 25))):
        x, y = draw(_share), draw(_share)
        dx, dy = draw(st.floats(0, 0.5)), draw(st.floats(0, 0.5))
        out.append(Point(draw(_labels), x, x - dx, x + dx, y, y - dy, y + dy, front=draw(st.booleans())))
    return out


@settings(max_examples=60, deadline=None)
@given(_points(), _labels)
def test_any_points_and_labels_draw_a_well_formed_inert_plot_without_overprinting(points: list[Point],
                                                                                    axis: str) -> None:
    svg = scatter_plot(points, x_label=axis, y_label=axis)
    assert _tags(svg) <= DRAWN and not any(a.startswith("on") for a in _attributes(svg))
    assert svg.count("<circle") == len(points)
    assert overprints(svg) == []


@pytest.mark.parametrize(("points", "field"), [
    ("x", "scatter.points is not a list"),
    ([{"label": "a", "x": float("nan"), "y": 0.5}], "scatter.points[0].x"),
    ([{"label": "a", "x": 0.5, "y": {"estimate": "0.5"}}], "scatter.points[0].y.estimate"),
    ([{"label": "a", "x": 0.5, "y": {"estimate": 0.5, "low": 1e300}}], "scatter.points[0].y.low"),
    ([{"label": "a", "x": True, "y": 0.5}], "scatter.points[0].x"),
    ([7], "scatter.points[0] is not an object"),
])
def test_malformed_scatter_data_names_its_field(points: Any, field: str) -> None:
    with pytest.raises(BadScatter, match=field.replace("[", r"\[").replace("]", r"\]")):
        points_of({"points": points})
