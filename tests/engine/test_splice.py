"""An episode belongs to one run (issue 46): the splices that an honest ``--resume`` used to seal.

A keyed run is interrupted (the crash is the run's own code path stopped after k episodes, as a
kill leaves it: index lines for those, the manifest not final), then its missing episodes are
filled with authentic logs of another run of the same key, plan and seeds: one made without
``--degrade``, or another crashed run of identical settings. A rolled-back run (its own earlier,
authentic manifest and index put back) is filled the same way. verify must exit 1 naming a
foreign log, resume 2 (nothing sealed), gate and report 1; the same runs resumed honestly verify.
"""

from __future__ import annotations

import io
import json
import shutil
from contextlib import redirect_stderr, redirect_stdout
from pathlib import Path

import pytest
from corruptions import log_from_resealed

import agentbed.cli_run
from agentbed.binding import binding, mismatch
from agentbed.cli import main
from agentbed.log import read_log
from agentbed.rundir import TEAM_SUFFIX, team_members

KEY = "splice-test-key-long-enough"
PLAN = ["run", "vault", "--agent", "oracle,naive", "--task", "open-fast", "--task", "open-after-chores",
        "--seeds", "2", "--executor", "serial", "--quiet"]


def cli(*argv: str) -> tuple[int, str]:
    out, err = io.StringIO(), io.StringIO()
    with redirect_stdout(out), redirect_stderr(err):
        status = main(list(argv))
    return status, out.getvalue() + err.getvalue()


def crashed(out: Path, after: int, *extra: str, monkeypatch, plan: list[str] = PLAN) -> Path:
    """A run stopped after ``after`` episodes, as a kill leaves it."""
    real = agentbed.cli_run.execute

    def stopping(*args, **kw):
        for n, record in enumerate(real(*args, **kw)):
            if n == after:
                raise KeyboardInterrupt  # the process dies here: no more index lines, no final seal
            yield record

    with monkeypatch.context() as m:
        m.setattr(agentbed.cli_run, "execute", stopping)
        status, _ = cli(*plan, *extra, "--out", str(out))
    assert status != 0
    manifest = json.loads((out / "manifest.json").read_text())
    assert not manifest["final"] and len(index_lines(out)) == after
    return out


def index_lines(run: Path) -> list[str]:
    return [line for line in (run / "index.jsonl").read_text().splitlines() if line]


def fill_from(run: Path, donor: Path) -> list[str]:
    """Copy the donor's logs and index lines for every episode ``run`` has not finished."""
    have = {json.loads(line)["episode_id"] for line in index_lines(run)}
    added = []
    with open(run / "index.jsonl", "a", encoding="utf-8") as fh:
        for line in index_lines(donor):
            record = json.loads(line)
            if record["episode_id"] not in have:
                shutil.copy(donor / record["log"], run / record["log"])
                if record["log"].endswith(TEAM_SUFFIX):  # a team's unit: its members' logs too
                    for member in team_members(donor / record["log"]):
                        shutil.copy(donor / "episodes" / member["log"], run / "episodes" / member["log"])
                fh.write(line + "\n")
                added.append(record["episode_id"])
    return added


def refused_everywhere(run: Path, baseline: Path, tmp_path: Path, plan: list[str] = PLAN) -> str:
    status, said = cli("verify", str(run))
    assert status == 1 and "a log of another run" in said, said
    resumed, why = cli(*plan, "--out", str(run), "--resume")
    assert resumed == 2 and "a log of another run" in why and "not resuming" in why, why
    assert json.loads((run / "manifest.json").read_text())["final"] is False  # nothing was sealed
    assert cli("gate", str(run), "--baseline", str(baseline))[0] == 1
    assert cli("report", str(run), "--out", str(tmp_path / "r.html"))[0] == 1
    return said


@pytest.fixture
def keyed(monkeypatch):
    monkeypatch.setenv("AGENTBED_LOG_KEY", KEY)
    monkeypatch.delenv("AGENTBED_LOG_KEY_FILE", raising=False)


def test_a_crashed_degraded_run_filled_from_a_clean_run_is_refused(keyed, tmp_path, monkeypatch):
    run = crashed(tmp_path / "degraded", 2, "--degrade", "1.0", monkeypatch=monkeypatch)
    clean = tmp_path / "clean"
    assert cli(*PLAN, "--out", str(clean))[0] == 0
    added = fill_from(run, clean)
    said = refused_everywhere(run, clean / "results.json", tmp_path)
    assert all(eid in said for eid in added)  # each foreign log is named


def test_a_rolled_back_run_filled_from_a_clean_run_is_refused(keyed, tmp_path, monkeypatch):
    run = crashed(tmp_path / "degraded", 1, "--degrade", "1.0", monkeypatch=monkeypatch)
    earlier = {name: (run / name).read_bytes() for name in ("manifest.json", "index.jsonl")}
    assert cli(*PLAN, "--out", str(run), "--resume")[0] in (0, 4)  # finished honestly (its episodes fail)
    assert cli("verify", str(run))[0] == 0
    for name, data in earlier.items():  # the forger puts its own earlier, authentic seal back
        (run / name).write_bytes(data)
    clean = tmp_path / "clean"
    assert cli(*PLAN, "--out", str(clean))[0] == 0
    fill_from(run, clean)
    refused_everywhere(run, clean / "results.json", tmp_path)


def test_two_crashed_runs_of_identical_settings_cannot_be_spliced(keyed, tmp_path, monkeypatch):
    first = crashed(tmp_path / "first", 2, monkeypatch=monkeypatch)
    second = crashed(tmp_path / "second", 5, monkeypatch=monkeypatch)
    fill_from(first, second)
    clean = tmp_path / "clean"
    assert cli(*PLAN, "--out", str(clean))[0] == 0
    refused_everywhere(first, clean / "results.json", tmp_path)


def test_a_crashed_run_resumed_honestly_verifies_and_every_log_names_it(keyed, tmp_path, monkeypatch):
    run = crashed(tmp_path / "run", 3, "--degrade", "0.5", monkeypatch=monkeypatch)
    assert cli(*PLAN, "--out", str(run), "--resume")[0] in (0, 4)
    status, said = cli("verify", str(run))
    assert status == 0, said
    meta = json.loads((run / "run.json").read_text())
    for log in (run / "episodes").glob("*.jsonl"):
        header = read_log(log)[0]
        assert header["run"] == binding(meta) and header["run"]["settings"]["degrade"] == 0.5


TEAM_PLAN = ["run", "cocoder", "--task", "synth-2", "--seeds", "2", "--executor", "serial", "--quiet"]


def test_a_team_run_filled_with_another_runs_member_logs_is_refused(keyed, tmp_path, monkeypatch):
    """CoCoder's unit is a team manifest and its members' logs: each member's header names the
    run as a single agent's log does, so authentic members of another run of the same key (their
    team manifest and index line copied along) are named by verify and refused by resume."""
    run = crashed(tmp_path / "run", 1, plan=TEAM_PLAN, monkeypatch=monkeypatch)
    honest = tmp_path / "honest"
    shutil.copytree(run, honest, ignore=shutil.ignore_patterns(".lock"))
    donor = tmp_path / "donor"
    assert cli(*TEAM_PLAN, "--out", str(donor))[0] == 0
    fill_from(run, donor)
    said = refused_everywhere(run, donor / "results.json", tmp_path, plan=TEAM_PLAN)
    members = [line for line in said.splitlines() if "a log of another run" in line]
    assert members and all(".w0.jsonl" in line and "a member of" in line for line in members), said
    status, said = cli(*TEAM_PLAN, "--out", str(honest), "--resume")
    assert status in (0, 4), said  # the same run finished honestly
    status, said = cli("verify", str(honest))
    assert status == 0, said
    meta = json.loads((honest / "run.json").read_text())
    logs = sorted((honest / "episodes").glob("*.w*.jsonl"))
    assert len(logs) >= 2 and all(read_log(log)[0]["run"] == binding(meta) for log in logs)


def test_a_log_under_other_settings_is_named_with_the_setting():
    meta = {"run_id": "a" * 32, "degrade": 0.0, "generation": {"temperature": 0.0}}
    assert mismatch({"run": binding(meta)}, meta) == ""
    other = {"run": {"id": "a" * 32, "settings": {"degrade": 0.0, "generation": {"temperature": 1.0}}}}
    assert "'generation'" in mismatch(other, meta)
    assert "another run" in mismatch({"run": binding({**meta, "run_id": "b" * 32})}, meta)
    assert "names no run" in mismatch({}, meta)


def test_without_a_key_a_log_of_another_run_is_named_by_its_header(tmp_path, monkeypatch):
    """A keyless forger copies in another run's log and fixes the index and the manifest (no
    HMAC to stop them): the log's header still names the other run."""
    monkeypatch.delenv("AGENTBED_LOG_KEY", raising=False)
    monkeypatch.delenv("AGENTBED_LOG_KEY_FILE", raising=False)
    run, other = tmp_path / "run", tmp_path / "other"
    for out in (run, other):
        assert cli(*PLAN, "--out", str(out))[0] == 0
    log_from_resealed(other)(run)
    status, said = cli("verify", str(run))
    assert status == 1 and "a log of another run" in said, said
    assert "differs from" not in said, said  # the index and the manifest agree with it: only its header tells


def test_missing_is_failure_under_a_key(keyed, tmp_path):
    run = tmp_path / "run"
    assert cli(*PLAN, "--out", str(run))[0] == 0
    for name in ("manifest.json", "index.jsonl", "run.json"):
        (run / name).unlink()
    status, said = cli("verify", str(run))
    assert status == 1 and "no manifest.json" in said and "episodes/" in said, said
    bare = tmp_path / "bare"  # only the logs and results left, in a folder of their own
    (bare / "episodes").mkdir(parents=True)
    for log in (run / "episodes").glob("*.jsonl"):
        shutil.copy(log, bare / "episodes" / log.name)
    assert cli("verify", str(bare))[0] == 1
    folder_of_logs = tmp_path / "logs"  # a plain folder of logs, no run's files: still verifies
    shutil.copytree(run / "episodes", folder_of_logs)
    assert cli("verify", str(folder_of_logs))[0] == 0


ASKED_PLAN = ["run", "vault", "--agent", "oracle", "--task", "open-fast", "--seeds", "3", "--executor", "serial",
              "--quiet"]
ASKED = ["--approver", "human", "--approval-timeout", "0.05", "--approval-timeout-policy", "approve"]


def test_a_resume_asks_the_recorded_approver_and_refuses_other_settings(keyed, tmp_path, monkeypatch):
    """A run recorded with a human approver and resumed without ``--approver`` ran its last episodes
    unasked while their headers (bound, under the HMAC) named the approver, and verify passed; a run
    recorded without one took ``--approver`` or ``--timeout`` on resume, unrecorded (session 16's
    probe). The resume now asks the recorded human and refuses another policy or timeout."""
    run = crashed(tmp_path / "asked", 1, *ASKED, monkeypatch=monkeypatch, plan=ASKED_PLAN)
    status, said = cli(*ASKED_PLAN, "--out", str(run), "--resume", "--approver", "human", "--approval-timeout", "9")
    assert status == 2 and "field 'approver.timeout' is 0.05" in said, said
    assert cli(*ASKED_PLAN, "--out", str(run), "--resume")[0] == 0
    assert cli("verify", str(run))[0] == 0
    for log in (run / "episodes").glob("*.jsonl"):  # every episode's calls went to the human (the timeout policy)
        steps = [r for r in read_log(log) if r.get("type") == "step"]
        assert steps and all('"by": "human"' in json.dumps(r) for r in steps), log.name

    plain = crashed(tmp_path / "plain", 1, monkeypatch=monkeypatch, plan=ASKED_PLAN)
    for extra, field in ((["--approver", "human"], "field 'approver' is not set"),
                         (["--timeout", "5"], "field 'timeout' is not set")):
        status, said = cli(*ASKED_PLAN, "--out", str(plain), "--resume", *extra)
        assert status == 2 and field in said, said
    assert len(index_lines(plain)) == 1  # nothing ran


def test_a_log_copied_under_a_missing_episodes_name_is_refused(keyed, tmp_path, monkeypatch):
    """Session 17's probe: a crashed run's own authentic log copied to a missing episode's log name,
    its index line copied with that episode's id, task, agent, seed and log; the header is this
    run's, so verify named only the missing seal, an honest resume sealed it and verify then passed
    ("8 of 8 logs verified") with one episode counted twice. The header names its episode."""
    run = crashed(tmp_path / "run", 3, monkeypatch=monkeypatch)
    clean = tmp_path / "clean"
    assert cli(*PLAN, "--out", str(clean))[0] == 0
    have = {json.loads(line)["episode_id"] for line in index_lines(run)}
    missing = next(json.loads(line) for line in index_lines(clean) if json.loads(line)["episode_id"] not in have)
    source = json.loads(index_lines(run)[0])
    shutil.copy(run / source["log"], run / missing["log"])
    with open(run / "index.jsonl", "a", encoding="utf-8") as fh:
        fh.write(json.dumps({**source, **{k: missing[k] for k in ("episode_id", "log", "task", "agent", "seed")}})
                 + "\n")
    status, said = cli("verify", str(run))
    copied = f"the log of episode {source['episode_id']}, listed as {missing['episode_id']}"
    assert status == 1 and copied in said, said
    resumed, why = cli(*PLAN, "--out", str(run), "--resume")
    assert resumed == 2 and copied in why and "not resuming" in why, why
    assert json.loads((run / "manifest.json").read_text())["final"] is False
