"""A resume goes on with what the run was: the code that started it (or a mix, allowed by name and
then said everywhere) and the way it was run (-j, --max-connections, --executor).

Session 19's reviewers: a resume under other code kept the first run's provenance in results.json
while the resumed episodes' logs named the new code, and a resume dropped -j and --max-connections.
"""

from __future__ import annotations

import io
import json
from contextlib import redirect_stderr, redirect_stdout
from pathlib import Path

import pytest

import agentbed.cli_run
import agentbed.provenance
from agentbed.cli import main
from agentbed.code_versions import CodeTally, results_disagree

PLAN = ["run", "vault", "--agent", "oracle,naive", "--task", "open-fast", "--seeds", "3", "--executor", "serial"]


def cli(*argv: str) -> tuple[int, str, str]:
    out, err = io.StringIO(), io.StringIO()
    with redirect_stdout(out), redirect_stderr(err):
        status = main(list(argv))
    return status, out.getvalue(), err.getvalue()


def crash_after(monkeypatch, n: int) -> None:
    """The next run stops (as Ctrl-C stops it) once ``n`` episodes are recorded."""
    real = agentbed.cli_run.execute

    def stopping(*args, **kw):
        for i, record in enumerate(real(*args, **kw)):
            if i == n:
                raise KeyboardInterrupt
            yield record

    monkeypatch.setattr(agentbed.cli_run, "execute", stopping)


def other_code(monkeypatch) -> None:
    """From now on this process is another commit of agentbed (for run.json's check and every header)."""
    made = {**agentbed.provenance.code(), "commit": "f" * 40, "dirty": False}
    made.pop("diff_sha256", None)
    monkeypatch.setattr(agentbed.provenance, "code", lambda: dict(made))


def headers(run: Path) -> list[dict]:
    return [json.loads(p.read_text().splitlines()[0]) for p in sorted((run / "episodes").glob("*.jsonl"))]


@pytest.fixture
def crashed(tmp_path, monkeypatch):
    run = tmp_path / "run dir ü"  # a space and a non-ASCII letter in the path, on purpose
    with monkeypatch.context() as m:
        crash_after(m, 2)
        assert cli(*PLAN, "--out", str(run), "--quiet")[0] == 130
    return run


def test_a_resume_under_other_code_is_refused_unless_allowed_and_then_said_everywhere(crashed, monkeypatch):
    before = {p.name: p.read_bytes() for p in crashed.rglob("*") if p.is_file() and p.name != ".lock"}
    other_code(monkeypatch)
    status, _, err = cli(*PLAN, "--out", str(crashed), "--resume", "--quiet")
    assert status == 2, err
    line = err.strip().splitlines()[-1]
    assert "run.json: field 'provenance'" in line and "--allow-mixed-code" in line and "f" * 12 in line
    after = {p.name: p.read_bytes() for p in crashed.rglob("*") if p.is_file() and p.name != ".lock"}
    assert after == before  # refused before anything was written

    status, _, err = cli(*PLAN, "--out", str(crashed), "--resume", "--quiet", "--allow-mixed-code")
    assert status == 0, err
    assert "MIXED CODE: 2 code version(s)" in err
    commits = sorted(h["provenance"]["commit"] for h in headers(crashed))
    assert commits.count("f" * 40) == 4 and len(commits) == 6
    results = json.loads((crashed / "results.json").read_text())
    mixed = results["provenance"]["mixed"]
    assert [v["episodes"] for v in mixed] == [4, 2] and mixed[0]["commit"] == "f" * 40
    summary = json.loads((crashed / "vault" / "summary.json").read_text())
    assert any("MIXED CODE" in note for note in summary["console_notes"])

    status, out, _ = cli("verify", str(crashed))
    assert status == 0 and "MIXED CODE: 2 code version(s) wrote its episodes (4 by agentbed" in out
    status, out, _ = cli("gate", str(crashed), "--baseline", str(crashed / "results.json"), "--allow-underpowered")
    assert status == 0 and "MIXED CODE" in out


def test_a_resume_under_the_same_code_needs_no_flag_and_records_no_mix(crashed):
    status, _, err = cli(*PLAN, "--out", str(crashed), "--resume", "--quiet")
    assert status == 0 and "MIXED" not in err
    assert "mixed" not in json.loads((crashed / "results.json").read_text())["provenance"]
    status, out, _ = cli("verify", str(crashed))
    assert status == 0 and "MIXED" not in out


def test_a_run_none_of_whose_episodes_the_starting_code_finished_is_mixed_too(tmp_path, monkeypatch):
    run = tmp_path / "run"
    with monkeypatch.context() as m:
        crash_after(m, 0)
        assert cli(*PLAN, "--out", str(run), "--quiet")[0] == 130
    other_code(monkeypatch)
    assert cli(*PLAN, "--out", str(run), "--resume", "--quiet", "--allow-mixed-code")[0] == 0
    results = json.loads((run / "results.json").read_text())["provenance"]
    assert results["commit"] != "f" * 40  # run.json's: the code that started the run
    assert [(v["commit"], v["episodes"]) for v in results["mixed"]] == [("f" * 40, 6)]
    assert "MIXED CODE: 1 code version(s)" in cli("verify", str(run))[1]


def test_a_refused_resume_lets_go_of_the_run(crashed):
    """In one process (a notebook, agentbed.testing.cli_in_process), a resume refused for damage
    used to keep the writer lock: the next resume named this very process as another writer."""
    log = sorted((crashed / "episodes").glob("*.jsonl"))[0]
    data = log.read_bytes()
    log.write_bytes(data.replace(b'"steps"', b'"stepz"', 1))
    status, _, err = cli(*PLAN, "--out", str(crashed), "--resume", "--quiet")
    assert status == 2 and "not resuming" in err
    log.write_bytes(data)
    status, _, err = cli(*PLAN, "--out", str(crashed), "--resume", "--quiet")
    assert status == 0, err


def test_the_flag_is_refused_without_resume(tmp_path):
    status, _, err = cli(*PLAN, "--out", str(tmp_path / "r"), "--allow-mixed-code")
    assert status == 2 and "--allow-mixed-code needs --resume" in err and not (tmp_path / "r").exists()


def test_results_that_do_not_say_what_the_logs_say_are_named():
    one, two = CodeTally(), CodeTally()
    for tally, commits in ((one, "aa"), (two, "ab")):
        for c in commits:
            tally.add({"commit": c * 20, "agentbed": "1"})
    assert results_disagree({"provenance": {"commit": "a" * 40}}, one, "r.json") == ""
    assert "but its episodes' logs name 2 other or more" in results_disagree(
        {"provenance": {"commit": "a" * 40}}, two, "r.json")
    assert results_disagree({"provenance": {"mixed": two.versions()}}, two, "r.json") == ""
    assert "the logs the starting one" in results_disagree({"provenance": {"mixed": two.versions()}}, one, "r.json")


def test_a_resume_keeps_the_recorded_jobs_connections_and_executor_unless_given(tmp_path, monkeypatch):
    run = tmp_path / "run"
    plan = ["run", "vault", "--agent", "oracle", "--task", "open-fast", "--seeds", "4", "--quiet"]
    with monkeypatch.context() as m:
        crash_after(m, 1)
        assert cli(*plan, "--out", str(run), "-j", "3", "--max-connections", "7", "--executor", "serial")[0] == 130
    recorded = json.loads((run / "run.json").read_text())
    assert (recorded["jobs"], recorded["max_connections"], recorded["executor"]) == (3, 7, "serial")
    seen: list[tuple] = []
    real_runtime, real_execute = agentbed.cli_run.model_runtime, agentbed.cli_run.execute

    def runtime(args, *rest, **kw):
        seen.append((args.jobs, args.max_connections))
        return real_runtime(args, *rest, **kw)

    def execute(*args, **kw):
        seen.append((kw["executor"], kw["jobs"]))
        return real_execute(*args, **kw)

    monkeypatch.setattr(agentbed.cli_run, "model_runtime", runtime)
    monkeypatch.setattr(agentbed.cli_run, "execute", execute)
    with monkeypatch.context() as m:  # not given: as recorded
        crash_after(m, 1)
        assert cli(*plan, "--out", str(run), "--resume")[0] == 130
    assert seen == [(3, 7), ("serial", 3)]
    seen.clear()
    assert cli(*plan, "--out", str(run), "--resume", "-j", "2", "--max-connections", "5",
               "--executor", "process")[0] == 0  # given: as given now
    assert seen == [(2, 5), ("process", 2)]
    assert json.loads((run / "run.json").read_text()) == recorded  # run.json (sealed) is never rewritten
    assert cli("verify", str(run))[0] == 0
