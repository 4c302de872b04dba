"""The HTML report: sections per workload, self-containment, graceful degradation."""

from __future__ import annotations

import json
import re
import subprocess
from pathlib import Path

import pytest

from agentbed.errors import UsageError
from agentbed.report import render_report
from agentbed.report.svg import InvalidSvg, sanitize_svg

SUITES = ("vault", "contracts", "oversight", "graphrag", "cocoder")


def test_every_workload_gets_its_tables_figures_and_headline(run_dir, summaries, parse_html):
    page = parse_html(render_report(run_dir).read_text(encoding="utf-8"))
    for suite in SUITES:
        section = page.by_id[f"workload-{suite}"]
        assert section["tag"] == "section" and section["attrs"]["data-suite"] == suite
        assert "workload-unavailable" not in section["attrs"]["class"]
        headline = page.by_id[f"workload-{suite}-headline"]
        assert headline["inner"].count("tr") >= 2  # header + at least one metric
    for suite, summary in summaries.items():
        for i, tbl in enumerate(summary["tables"], start=1):
            node = page.by_id[f"workload-{suite}-table-{i}"]
            assert tbl["title"] in node["text"]
            assert node["attrs"]["data-rows"] == str(len(tbl["rows"]))
            assert summary["command"] in node["text"]
        for i, fig in enumerate(summary["figures"], start=1):
            node = page.by_id[f"workload-{suite}-figure-{i}"]
            assert node["tag"] == "figure" and fig["title"] in node["text"]
            assert "svg" in node["inner"] and node["inner"].count("path") > 3
        assert summary["command"] in page.by_id[f"workload-{suite}-headline"]["text"]
    assert not page.by_id.get("problems")


def test_headline_shows_interval_episodes_and_seeds(run_dir, summaries, parse_html):
    page = parse_html(render_report(run_dir).read_text(encoding="utf-8"))
    head = summaries["oversight"]["headline"][1]
    text = page.by_id["workload-oversight-headline"]["text"]
    assert f"[{head['low']:.3f}, {head['high']:.3f}]" in text
    assert "controller=action-conditioned" in text and "lower is better" in text
    assert "120" in text and "3" in text  # episodes and seeds from the summary


def test_overview_counts_episodes_by_status(run_dir, parse_html):
    records = [json.loads(line) for line in (run_dir / "index.jsonl").read_text().splitlines()]
    page = parse_html(render_report(run_dir).read_text(encoding="utf-8"))
    counts = page.by_id["status-counts"]["text"]
    assert str(len(records)) in counts
    assert "agentbed run vault --agent oracle,naive --seeds 2" in page.by_id["run-info"]["text"]
    assert "report generated" in page.by_id["run-when"]["text"]
    rows = [n for i, n in page.by_id.items() if i.startswith("episode-")]
    assert len(rows) == len(records)
    assert all("verified" in n["text"] for n in rows)
    statuses = {n["attrs"]["data-status"] for n in rows}
    assert statuses == {r["status"] for r in records}


def test_report_is_self_contained(run_dir):
    text = render_report(run_dir).read_text(encoding="utf-8")
    assert "<script" not in text.lower() and "<link" not in text.lower() and "@import" not in text
    assert not re.search(r"\bsrc\s*=", text)
    for ref in re.findall(r'href="([^"]*)"', text):
        assert ref.startswith("#") or ref.startswith("data:image/png;base64,"), ref
    assert "data:image/png;base64," in text  # the heatmap (imshow) keeps its inline raster
    assert not re.search(r"url\((?!#)", text)
    for url in re.findall(r"https?://[^\s\"'<>]+", text):  # only XML namespace names may remain
        assert url in {"http://www.w3.org/2000/svg", "http://www.w3.org/1999/xlink"}, url


def test_missing_and_malformed_summaries_become_notes(tmp_path, summaries, write_json, parse_html):
    root = tmp_path / "run"
    write_json(root / "run.json", {"suites": ["contracts", "oversight", "graphrag", "cocoder"], "command": "x"})
    write_json(root / "contracts" / "summary.json", '{"suite": "contracts", "tables": [')  # truncated
    # oversight: no summary at all
    broken = json.loads(json.dumps(summaries["graphrag"]))
    broken["tables"].append({"title": "bad", "columns": ["a"], "rows": "not a list"})
    broken["tables"][0]["rows"].append("not a row")
    broken["figures"].append({"title": "not svg", "svg": "<svg><g></svg>"})
    broken["headline"].append({"metric": "x"})
    write_json(root / "graphrag" / "summary.json", broken)
    write_json(root / "cocoder" / "summary.json", {"suite": "cocoder", "error": "Traceback...\nValueError: boom",
                                                   "tables": [], "figures": [], "headline": []})
    page = parse_html(render_report(root).read_text(encoding="utf-8"))
    contracts = page.by_id["workload-contracts"]
    assert "contracts/summary.json" in contracts["text"] and "not valid JSON (line 1" in contracts["text"]
    assert "workload-unavailable" in contracts["attrs"]["class"]
    assert "oversight/summary.json" in page.by_id["workload-oversight"]["text"]
    graphrag = page.by_id["workload-graphrag"]["text"]
    assert "tables[1] needs a list 'columns' and a list 'rows'" in graphrag
    assert "tables[0].rows[3] is not a list" in graphrag
    assert "figures[1].svg is not usable SVG" in graphrag
    assert "headline[1] lacks numeric estimate/low/high" in graphrag
    assert "workload-graphrag-table-1" in page.by_id and "workload-graphrag-figure-1" in page.by_id
    assert "the workload failed: ValueError: boom" in page.by_id["workload-cocoder"]["text"]
    problems = page.by_id["problems"]["text"]
    for name in ("contracts/summary.json", "oversight/summary.json", "graphrag/summary.json",
                 "cocoder/summary.json"):
        assert name in problems
    assert "index.jsonl" not in problems  # an empty run is not an error


def test_bad_index_lines_and_tampered_logs_are_reported(run_dir, parse_html):
    index = run_dir / "index.jsonl"
    lines = index.read_text().splitlines()
    first = json.loads(lines[0])
    log = run_dir / first["log"]
    records = log.read_text().splitlines(keepends=True)
    records[1] = records[1].replace('"reward":0.0', '"reward":1.0', 1)
    log.write_text("".join(records))
    with index.open("a") as fh:
        fh.write("{torn\n")
    page = parse_html(render_report(run_dir).read_text(encoding="utf-8"))
    assert f"line {len(lines) + 1} is not JSON" in page.by_id["problems"]["text"]
    row = next(n for i, n in page.by_id.items() if i.startswith("episode-") and first["episode_id"] in n["text"])
    assert "record 2 changed" in row["text"]


def test_hostile_text_is_escaped(tmp_path, write_json):
    root = tmp_path / "run"
    write_json(root / "run.json", {"suite": "x", "command": "<script>alert(1)</script>"})
    write_json(root / "x" / "summary.json", {"title": "<img src=x onerror=alert(1)>", "episodes": 1, "seeds": 1,
                                              "tables": [{"title": "t", "columns": ["<b>"], "rows": [["</td>"]]}]})
    text = render_report(root).read_text(encoding="utf-8")
    assert "<script>" not in text and "<img" not in text and "&lt;/td&gt;" in text


def test_sanitize_svg_removes_active_content_and_prefixes_ids():
    svg = ('<svg xmlns="http://www.w3.org/2000/svg" xmlns:xlink="http://www.w3.org/1999/xlink" onload="x()">'
           '<script>alert(1)</script><defs><clipPath id="p1"><rect width="1" height="1"/></clipPath>'
           '<path id="m0" d="M0 0"/></defs><use xlink:href="#m0"/><image href="https://example.org/a.png"/><image href="data:image/png;base64,iVBORw0KGgo="/>'
           '<image href="data:image/svg+xml;base64,PHN2Zz4="/>'
           '<a href="javascript:alert(1)"><set attributeName="href" to="javascript:alert(2)"/></a>'
           '<g clip-path="url(#p1)" style="fill: url(https://example.org/x)"/></svg>')
    out = sanitize_svg(svg, "fig7")
    assert "script" not in out and "onload" not in out and "example.org" not in out and "<set" not in out
    assert "data:image/png;base64,iVBORw0KGgo=" in out and "svg+xml" not in out
    assert 'id="fig7-p1"' in out and 'url(#fig7-p1)' in out and '"#fig7-m0"' in out
    with pytest.raises(InvalidSvg):
        sanitize_svg("<svg><g></svg>", "f")
    with pytest.raises(InvalidSvg):
        sanitize_svg("no figure here", "f")


def test_figures_with_equal_ids_do_not_collide(run_dir, parse_html):
    page = parse_html(render_report(run_dir).read_text(encoding="utf-8"))
    ids = [i for i in page.by_id if "-f" in i and i.startswith("workload-")]
    assert len(ids) == len(set(ids)) and ids


def test_not_a_directory_is_a_usage_error(tmp_path):
    with pytest.raises(UsageError, match="no-such-run"):
        render_report(tmp_path / "no-such-run")


@pytest.mark.slow
def test_cli_renders_a_real_run(tmp_path, agentbed_cmd):
    run = tmp_path / "run"
    subprocess.run([*agentbed_cmd, "run", "vault", "--agent", "oracle,naive", "--seeds", "2", "--out", str(run),
                    "--quiet"], check=True, capture_output=True, timeout=300)
    result = subprocess.run([*agentbed_cmd, "report", str(run)], capture_output=True, text=True, timeout=300)
    assert result.returncode == 0, result.stderr
    html = Path(result.stdout.strip()).read_text(encoding="utf-8")
    assert 'id="workload-vault"' in html and 'id="workload-vault-table-1"' in html
    missing = subprocess.run([*agentbed_cmd, "report", str(tmp_path / "nope")], capture_output=True, text=True,
                             timeout=300)
    assert missing.returncode == 2 and "nope" in missing.stderr


def test_logs_without_an_index_are_listed_from_their_headers(run_dir, parse_html):
    """Workloads that write ``<suite>/episodes/`` without an index still get their episode rows
    (in a directory no manifest seals, as `agentbed demo` writes; in a sealed run they are apart:
    tests/report/test_report_unsealed.py)."""
    (run_dir / "manifest.json").unlink()
    workload = run_dir / "contracts" / "episodes"
    workload.mkdir(parents=True)
    index = run_dir / "index.jsonl"
    records = [json.loads(line) for line in index.read_text().splitlines()]
    for record in records:
        (run_dir / record["log"]).rename(workload / Path(record["log"]).name)
    index.unlink()
    page = parse_html(render_report(run_dir).read_text(encoding="utf-8"))
    rows = {n["attrs"]["id"]: n for i, n in page.by_id.items() if i.startswith("episode-")}
    assert len(rows) == len(records)
    assert all("verified" in n["text"] and "contracts/episodes/" in n["text"] for n in rows.values())
    assert {n["attrs"]["data-status"] for n in rows.values()} == {r["status"] for r in records}
    assert "contracts/episodes (no index)" in page.by_id["episodes"]["text"]


def test_headlines_from_different_commands_name_each(tmp_path, summaries, write_json, parse_html):
    summary = json.loads(json.dumps(summaries["oversight"]))
    summary["headline"][1]["command"] = "agentbed oversight --controller action-conditioned"
    write_json(tmp_path / "run" / "oversight" / "summary.json", summary)
    page = parse_html(render_report(tmp_path / "run").read_text(encoding="utf-8"))
    node = page.by_id["workload-oversight-headline"]
    assert "agentbed oversight --controller action-conditioned" in node["text"]
    assert summary["command"] in node["text"] and node["inner"].count("th") == 9  # a command column
    write_json(tmp_path / "run2" / "oversight" / "summary.json", summaries["oversight"])  # one command for all
    page = parse_html(render_report(tmp_path / "run2").read_text(encoding="utf-8"))
    shared = page.by_id["workload-oversight-headline"]
    assert shared["inner"].count("th") == 8 and shared["text"].count(summary["command"]) == 1


def test_a_long_per_task_table_is_drawn_as_a_heat_map(tmp_path, write_json, parse_html):
    rows = [[f"task-{i:02d}", f"{i % 3}/2" if i % 3 < 3 else "-", "2/2"] for i in range(30)]
    rows[0][1] = "-"  # not run: a grey cell
    summary = {"suite": "contracts", "title": "t", "episodes": 60, "seeds": 2, "headline": [], "figures": [],
               "tables": [{"title": "Per task: passed / episodes", "columns": ["task", "naive", "oracle"],
                           "rows": rows}]}
    write_json(tmp_path / "run" / "contracts" / "summary.json", summary)
    text = render_report(tmp_path / "run").read_text(encoding="utf-8")
    page = parse_html(text)
    node = page.by_id["workload-contracts-table-1"]
    assert text.count('class="cell"') == 59 and "the table (30 rows)" in node["text"]  # 60 cells, one not run
    assert "task-29 x naive: 2/2" in text  # each cell's tooltip names its task, column and value
