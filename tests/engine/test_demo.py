"""``agentbed demo``: the one-screen summary, the report's opening block, --full and --quiet."""

from __future__ import annotations

import json
import os

import pytest

from agentbed import progress
from agentbed.cli import main
from agentbed.stats import Interval
from agentbed.suite import Suite, load_suites
from agentbed.summary import finding, findings_lines


def _summary(name: str, n: int) -> dict:
    return {"suite": name, "title": name, "episodes": 10, "seeds": 2, "tables": [], "figures": [], "headline": [],
            "findings": [finding(f"{name} finding {i}", Interval(0.5, 0.4, 0.6, 10), paper="0.55",
                                 note="scripted agent") for i in range(n)]}


def _fake_suite(name: str, findings: int, *, takes_full: bool = False, fails: bool = False,
                dies: bool = False) -> Suite:
    def demo(out_dir):
        if dies:
            os._exit(9)  # the workload's process itself ends (a crash in native code, the OOM killer)
        with progress.steps(f"{name} grid", 3) as done:
            for cell in range(3):
                done(f"cell {cell}")
        if fails:
            raise RuntimeError(f"{name} broke")
        return _summary(name, findings)

    def demo_full(out_dir, full=False):
        return {**_summary(name, findings), "title": f"{name} full={full}"}

    return Suite(name=name, description=name, tasks=lambda o: [], make_env=lambda t, o: None, agents={},
                 default_agent="", demo=demo_full if takes_full else demo)


@pytest.fixture
def fake_suites(monkeypatch):
    suites = load_suites()
    for name, count, full, fails in (("w1", 5, False, False), ("w2", 9, True, False), ("w3", 2, False, True),
                                     ("w4", 0, False, False)):
        monkeypatch.setitem(suites, name, _fake_suite(name, count, takes_full=full, fails=fails))
    monkeypatch.setitem(suites, "w5", _fake_suite("w5", 1, dies=True))
    return suites


def test_the_summary_fits_one_screen_whatever_the_workloads_report():
    summaries = [_summary(f"w{i}", 9) for i in range(4)]
    lines = findings_lines(summaries)
    assert len(lines) <= 25
    assert sum("more in the report" in line for line in lines) == 4
    assert all("paper 0.55" in line and "(scripted agent)" in line for line in lines if "finding " in line)
    assert "0.500 [0.400, 0.600]" in lines[2]


def test_a_long_finding_label_is_shown_whole():
    label = "safest protocol at 1%: te@0.3[scripted] (safety)"  # 48 characters, longer than the column
    lines = findings_lines([{"suite": "c", "findings": [finding(label, Interval(0.7, 0.3, 0.9, 10))]}])
    assert f"  {label} 0.700 [0.300, 0.900]" in lines


def test_a_summary_without_findings_offers_its_headline_metrics():
    summary = {"suite": "x", "headline": [{"metric": "pass_rate", "agent": "oracle", "estimate": 1.0, "low": 0.9,
                                           "high": 1.0, "n": 4}, {"metric": "broken"}]}
    lines = findings_lines([summary])
    assert lines[1] == "x" and "pass_rate oracle" in lines[2] and "1.000 [0.900, 1.000]" in lines[2]
    assert len(lines) == 3  # the malformed headline is left out, not a crash


def test_demo_prints_one_screen_and_the_report_opens_with_it(fake_suites, tmp_path, capfd):
    rc = main(["demo", "--suites", "w1,w2,w3,w4", "--out", str(tmp_path / "d")])  # side by side: forked processes
    out, err = capfd.readouterr()
    assert rc == 1  # w3 failed, and says so, without hiding the others
    lines = out.strip().splitlines()
    assert len(lines) <= 25, out
    assert "FAILED: RuntimeError: w3 broke" in out and "w1 finding 4" in out and "(+5 more in the report)" in out
    assert "w1 grid: 3/3 cell 2" in err  # one progress line per step when stderr is not a terminal
    html = (tmp_path / "d" / "report.html").read_text()
    assert html.index('id="findings"') < html.index('id="overview"')
    assert "w2 finding 8" in html  # the report keeps every finding


def test_quiet_silences_progress(fake_suites, tmp_path, capsys):
    main(["demo", "--suites", "w1", "--out", str(tmp_path / "d"), "--quiet"])
    out, err = capsys.readouterr()
    assert err == "" and "w1 finding 0" in out
    with progress.steps("after", 1) as done:  # --quiet ends with the verb (CI's progress test ran after one)
        done()
    assert "after: 1/1" in capsys.readouterr().err


def test_full_asks_each_workload_for_its_larger_run(fake_suites, tmp_path, capsys):
    assert main(["demo", "--suites", "w2", "--full", "--out", str(tmp_path / "d")]) == 0
    assert main(["demo", "--suites", "w1", "--full", "--out", str(tmp_path / "e")]) == 2
    err = capsys.readouterr().err
    assert "--full: suite 'w1' has no larger demo" in err


def test_the_summaries_do_not_depend_on_how_many_workloads_run_side_by_side(fake_suites, tmp_path, capfd):
    texts = {}
    for jobs in ("1", "2", "4"):
        out = tmp_path / f"j{jobs}"
        assert main(["demo", "--suites", "w1,w2,w3,w4", "-j", jobs, "--out", str(out), "--quiet"]) == 1
        texts[jobs] = capfd.readouterr().out.splitlines()[:-1]  # the last line gives the wall time
        for name in ("w1", "w2", "w3", "w4"):
            summary = json.loads((out / name / "summary.json").read_text())
            summary.pop("wall_seconds")
            if "error" in summary:  # its traceback names the process
                summary["error"] = summary["error"].strip().splitlines()[-1]
            texts[f"{jobs}/{name}"] = summary
    for jobs in ("2", "4"):
        assert texts[jobs] == texts["1"]
        assert all(texts[f"{jobs}/{n}"] == texts[f"1/{n}"] for n in ("w1", "w2", "w3", "w4"))


def test_a_workload_whose_process_dies_is_reported_and_the_others_still_run(fake_suites, tmp_path, capfd):
    assert main(["demo", "--suites", "w5,w1", "-j", "2", "--out", str(tmp_path / "d"), "--quiet"]) == 1
    out = capfd.readouterr().out
    assert "ended with exit code 9" in out and "w1 finding 0" in out
