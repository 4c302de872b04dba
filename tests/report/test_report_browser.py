"""The report as Debian's headless Chromium lays it out: every section and figure is there and
has size. A probe script is appended to a copy of the report (the report itself has no
scripts); it measures the laid-out page and writes the numbers into the DOM that
``--dump-dom`` prints. The report's Content-Security-Policy forbids script, so the probe's copy
drops it (tests/report/test_report_hostile.py shows that the report itself runs none)."""

from __future__ import annotations

import html
import json
import re
import shutil
import subprocess
from pathlib import Path

import pytest

from agentbed.report import render_report
from agentbed.testing import require

pytestmark = pytest.mark.chromium

CHROMIUM_FLAGS = ("--headless", "--no-sandbox", "--disable-gpu", "--disable-quic", "--no-first-run",
                  "--disable-background-networking", "--disable-component-update", "--disable-sync",
                  "--host-resolver-rules=MAP * ~NOTFOUND", "--window-size=1280,2000")

PROBE = """
<script>
(function () {
  const box = (el) => { const r = el.getBoundingClientRect(); return {w: r.width, h: r.height}; };
  const out = {sections: {}, tables: {}, figures: {}};
  for (const s of document.querySelectorAll("section[id]")) {
    out.sections[s.id] = {...box(s), text: s.innerText.trim().length};
  }
  for (const t of document.querySelectorAll(".summary-table[id], .headline[id]")) {
    out.tables[t.id] = {...box(t), rows: t.querySelectorAll("tbody tr").length};
  }
  for (const f of document.querySelectorAll("figure.figure[id]")) {
    const svg = f.querySelector("svg");
    const drawn = svg ? svg.querySelectorAll("path, line, rect, circle, use, text").length : 0;
    const bb = svg ? svg.getBBox() : {width: 0, height: 0};
    const images = svg ? [...svg.querySelectorAll("image")].filter((i) => i.getBBox().width > 0).length : 0;
    out.figures[f.id] = {...(svg ? box(svg) : {w: 0, h: 0}), bbox_w: bb.width, bbox_h: bb.height, drawn: drawn,
                         images: images};
  }
  const pre = document.createElement("pre");
  pre.id = "probe-result";
  pre.textContent = JSON.stringify(out);
  document.body.appendChild(pre);
})();
</script>
"""


def chromium() -> str | None:
    return shutil.which("chromium")


def laid_out(report: Path, tmp_path: Path) -> dict:
    probe = tmp_path / "probe.html"
    page = re.sub(r'<meta http-equiv="Content-Security-Policy"[^>]*>', "", report.read_text(encoding="utf-8"))
    probe.write_text(page.replace("</body>", PROBE + "</body>"), encoding="utf-8")
    profile = tmp_path / "chromium-profile"
    profile.mkdir()
    result = subprocess.run([chromium(), *CHROMIUM_FLAGS, f"--user-data-dir={profile}", "--dump-dom",
                             probe.as_uri()], capture_output=True, text=True, timeout=120)
    found = re.search(r'<pre id="probe-result">(.*?)</pre>', result.stdout, re.S)
    assert found, f"chromium printed no probe result (exit {result.returncode}): {result.stderr[-2000:]}"
    return json.loads(html.unescape(found.group(1)))


def test_chromium_renders_every_section_and_figure(run_dir, summaries, tmp_path):
    require(chromium() is not None, "Debian's chromium (headless browser for the report test)",
            "run scripts/setup-chromium as root, or: apt-get update && apt-get install -y chromium")
    page = laid_out(render_report(run_dir), tmp_path)
    for section in ("overview", "episodes", "workload-vault", *(f"workload-{s}" for s in summaries)):
        got = page["sections"][section]
        assert got["w"] > 300 and got["h"] > 50 and got["text"] > 40, (section, got)
    for suite, summary in summaries.items():
        assert page["tables"][f"workload-{suite}-headline"]["rows"] == len(summary["headline"])
        for i, tbl in enumerate(summary["tables"], start=1):
            got = page["tables"][f"workload-{suite}-table-{i}"]
            assert got["rows"] == len(tbl["rows"]) and got["h"] > 20, (suite, i, got)
        for i in range(1, len(summary["figures"]) + 1):
            got = page["figures"][f"workload-{suite}-figure-{i}"]
            assert got["w"] > 100 and got["h"] > 100, (suite, i, got)
            assert got["bbox_w"] > 50 and got["bbox_h"] > 50 and got["drawn"] > 5, (suite, i, got)
    assert page["figures"]["workload-graphrag-figure-1"]["images"] == 1  # imshow's inline raster survives
    assert page["tables"]["workload-vault-table-1"]["rows"] == 2  # oracle and naive
