"""A forger who can write any file of a run directory but lacks the key (issue 31).

Every file of a signed run goes through every forgery a keyless writer can make: delete it,
garble a byte, replace its content with a consistent-looking edit (logs re-chained, JSON still
valid), replay the same file from another signed run of the same plan, and duplicate it (a
copy beside it; for the index, a forged first line for an episode it lists). Each forged
directory is handed to verify, gate, report and resume: with the key every one must refuse it
(exit 1 or 2, never 0, never 70), and resume must leave every recorded log as it was. Without
a key the same walk shows what keyless checking still catches, and the one thing it cannot (a
rewritten manifest whose edit changes nothing it binds) is asserted as such, as docs/cli.md says.
"""

from __future__ import annotations

import contextlib
import io
import json
import shutil
import subprocess
import sys
from pathlib import Path

import pytest
from corruptions import files_of, forgeries

from agentbed.cli import main

ROOT = Path(__file__).resolve().parents[2]
KEY = "forgery-test-key-long-enough"
PLAN = ["run", "vault", "--agent", "oracle", "--task", "open-fast", "--task", "open-after-chores", "--seeds", "2",
        "--executor", "serial", "--quiet"]


def _env(key: str | None) -> dict[str, str]:
    import os

    env = {k: v for k, v in os.environ.items() if k not in ("AGENTBED_LOG_KEY", "AGENTBED_LOG_KEY_FILE")}
    return {**env, "AGENTBED_LOG_KEY": key} if key else env


@pytest.fixture(scope="module")
def runs(tmp_path_factory) -> dict[str, Path]:
    """Two signed runs and two unsigned runs of one plan (so each has a twin to replay from)."""
    base = tmp_path_factory.mktemp("forgery")
    made = {}
    for name, key in (("signed", KEY), ("signed-twin", KEY), ("plain", None), ("plain-twin", None)):
        result = subprocess.run([sys.executable, "-m", "agentbed.cli", *PLAN, "--out", str(base / name)], cwd=ROOT,
                                capture_output=True, text=True, timeout=300, env=_env(key))
        assert result.returncode == 0, result.stderr
        made[name] = base / name
    shutil.copy(made["signed"] / "results.json", base / "baseline.json")  # the run's own results: it passes
    made["baseline"] = base / "baseline.json"
    return made


def cli(argv: list[str], key: str | None, monkeypatch) -> tuple[int, str]:
    monkeypatch.delenv("AGENTBED_LOG_KEY_FILE", raising=False)
    if key:
        monkeypatch.setenv("AGENTBED_LOG_KEY", key)
    else:
        monkeypatch.delenv("AGENTBED_LOG_KEY", raising=False)
    out, err = io.StringIO(), io.StringIO()
    with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
        status = main(argv)
    return status, out.getvalue() + err.getvalue()


def verbs(run: Path, baseline: Path, report: Path) -> dict[str, list[str]]:
    return {"verify": ["verify", str(run)], "gate": ["gate", str(run), "--baseline", str(baseline), "--allow-underpowered"],
            "report": ["report", str(run), "--out", str(report)],
            "resume": ["run", "vault", "--out", str(run), "--resume", "--quiet", "--executor", "serial"]}


def _logs(run: Path) -> dict[str, bytes]:
    return {p.name: p.read_bytes() for p in (run / "episodes").glob("*.jsonl")}


def test_the_intact_runs_pass_every_verb(runs, tmp_path, monkeypatch):
    for name, key in (("signed", KEY), ("plain", None)):
        for verb, argv in verbs(runs[name], runs["baseline"], tmp_path / f"{name}.html").items():
            status, out = cli(argv, key, monkeypatch)
            assert status == 0, (name, verb, out)


def test_with_the_key_every_forgery_of_every_file_is_refused_by_every_verb(runs, tmp_path, monkeypatch):
    count = 0
    for what, forge in forgeries(runs["signed"], runs["signed-twin"]):
        for verb in ("verify", "gate", "report", "resume"):
            run = tmp_path / f"case-{count}"
            shutil.copytree(runs["signed"], run, ignore=shutil.ignore_patterns(".lock"))
            forge(run)
            before = _logs(run)
            status, out = cli(verbs(run, runs["baseline"], tmp_path / f"r{count}.html")[verb], KEY, monkeypatch)
            assert status in (1, 2), f"{what} / {verb}: exit {status}\n{out[-1500:]}"
            if verb == "resume":
                assert _logs(run) == before, f"{what}: resume rewrote a recorded log"
            shutil.rmtree(run)
            count += 1
    assert count > 150  # 9 files x 5 forgeries x 4 verbs, less the replays that change nothing


def test_a_signed_run_resumed_without_the_key_or_under_another_is_refused_and_kept(runs, tmp_path, monkeypatch):
    for key, words in ((None, "set AGENTBED_LOG_KEY"), ("another-key-that-is-long-enough", "another key")):
        run = tmp_path / f"resume-{bool(key)}"
        shutil.copytree(runs["signed"], run, ignore=shutil.ignore_patterns(".lock"))
        before = {rel: (run / rel).read_bytes() for rel in files_of(run)}
        status, out = cli(verbs(run, runs["baseline"], tmp_path / "x.html")["resume"], key, monkeypatch)
        assert status == 2 and words in out, out
        assert {rel: (run / rel).read_bytes() for rel in files_of(run)} == before  # the seal is untouched


def test_a_resume_after_the_index_was_emptied_names_the_damage_and_rewrites_nothing(runs, tmp_path, monkeypatch):
    run = tmp_path / "emptied"
    shutil.copytree(runs["signed"], run, ignore=shutil.ignore_patterns(".lock"))
    (run / "index.jsonl").write_text("")
    before = _logs(run)
    status, out = cli(verbs(run, runs["baseline"], tmp_path / "x.html")["resume"], KEY, monkeypatch)
    assert status == 2 and "which the manifest seals" in out and "not resuming" in out, out
    assert _logs(run) == before


# what a keyless check cannot see: an edit of the manifest that changes nothing it binds
KEYLESS_BLIND = {"replace manifest.json"}


def test_without_a_key_every_forgery_but_a_resealed_manifest_is_still_caught(runs, tmp_path, monkeypatch):
    count = 0
    for what, forge in forgeries(runs["plain"], runs["plain-twin"]):
        run = tmp_path / f"plain-{count}"
        shutil.copytree(runs["plain"], run, ignore=shutil.ignore_patterns(".lock"))
        forge(run)
        for verb in ("verify", "gate", "report"):
            page = tmp_path / f"p{count}.html"
            status, out = cli(verbs(run, runs["baseline"], page)[verb], None, monkeypatch)
            if verb == "report" and page.exists():  # the report states the seal's verdict at the top of its page
                out += page.read_text(encoding="utf-8")
            if what in KEYLESS_BLIND:
                assert status in (0, 1, 2), f"{what} / {verb}: exit {status}"
            elif what.startswith("drop an episode"):
                assert status in (1, 2) and "incomplete" in out, f"{what} / {verb}: exit {status}\n{out[-1500:]}"
            else:
                assert status in (1, 2), f"{what} / {verb}: exit {status}\n{out[-1500:]}"
        shutil.rmtree(run)
        count += 1
    assert count > 40


def test_the_report_shows_the_seal_at_its_top_and_never_calls_a_forgery_verified(runs, tmp_path, monkeypatch):
    run = tmp_path / "forged"
    shutil.copytree(runs["signed"], run, ignore=shutil.ignore_patterns(".lock"))
    (run / "manifest.json").unlink()
    status, out = cli(["report", str(run), "--out", str(tmp_path / "r.html")], KEY, monkeypatch)
    html = (tmp_path / "r.html").read_text()
    assert status == 1, out
    assert html.index('id="seal"') < html.index('id="overview"') and "seal FAILED" in html
    status, out = cli(["report", str(runs["signed"]), "--out", str(tmp_path / "ok.html"), "--json"], KEY, monkeypatch)
    doc = json.loads(out)
    assert status == 0 and doc["seal"]["state"] == "verified" and doc["command"] == "report"
