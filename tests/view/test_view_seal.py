"""The viewer's seal column is ``agentbed verify``'s verdict, with the problem named: one check,
not a second reading of the manifest. Every corrupted-run case of the engine's seal tests
(``tests/engine/corruptions.py``: each forgery of each file that ``test_forgery`` tries, and
the hand-made cases of ``test_seal``, ``test_splice`` and this file) is made of a signed run
and given to both, under the key: they must agree on every one (the view says "sealed,
verified" exactly when verify exits 0, and names the problem verify names first)."""

from __future__ import annotations

import io
import json
import shutil
from contextlib import redirect_stderr, redirect_stdout
from pathlib import Path

import pytest
from corruptions import forgeries, named

from agentbed.cli import main

from .conftest import serve

KEY = "view-seal-test-key-long-enough"
PLAN = ["run", "vault", "--agent", "oracle", "--task", "open-fast", "--task", "open-after-chores", "--seeds", "2",
        "--executor", "serial", "--quiet"]


@pytest.fixture(scope="module")
def signed(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Path]:
    """A signed run, its twin (same plan, same key) and one of the same plan under --degrade."""
    base = tmp_path_factory.mktemp("view-seal")
    made = {}
    with pytest.MonkeyPatch.context() as mp:
        mp.setenv("AGENTBED_LOG_KEY", KEY)
        mp.delenv("AGENTBED_LOG_KEY_FILE", raising=False)
        for name, extra in (("run", []), ("twin", []), ("degraded", ["--degrade", "1.0"])):
            with redirect_stdout(io.StringIO()), redirect_stderr(io.StringIO()):
                assert main([*PLAN, *extra, "--out", str(base / name)]) == 0
            made[name] = base / name
    return made


def verify(run: Path) -> tuple[int, str]:
    """verify's exit status and the first problem it names (its error line when it exits 2)."""
    out, err = io.StringIO(), io.StringIO()
    with redirect_stdout(out), redirect_stderr(err):
        status = main(["verify", str(run)])
    lines = out.getvalue().splitlines() if status != 2 else [err.getvalue().removeprefix("agentbed: error: ")]
    return status, lines[0].strip() if lines else ""


def test_view_and_verify_give_the_same_verdict_on_every_corrupted_run(signed, tmp_path, monkeypatch):
    monkeypatch.setenv("AGENTBED_LOG_KEY", KEY)
    monkeypatch.delenv("AGENTBED_LOG_KEY_FILE", raising=False)
    root = tmp_path / "runs"
    root.mkdir()
    cases = [("intact", lambda d: None), *forgeries(signed["run"], signed["twin"]),
             *named(signed["twin"], signed["degraded"])]
    names = {}
    for number, (what, corrupt) in enumerate(cases):
        run = root / f"case-{number:03d}"
        shutil.copytree(signed["run"], run, ignore=shutil.ignore_patterns(".lock"))
        corrupt(run)
        names[run.name] = what
    verdicts = {name: verify(root / name) for name in names}
    for client in serve(root):
        _, doc = client.get("/api/runs")
        seals = {r["id"]: r for r in doc["runs"]}
    assert len(cases) > 50 and set(seals) == set(names), sorted(set(names) - set(seals))
    assert verdicts["case-000"][0] == 0 and seals["case-000"]["seal"].startswith("sealed, verified")
    disagree = []
    for name, what in names.items():
        status, first = verdicts[name]
        seal = seals[name]
        same = (seal["seal_state"] == "verified") == (status == 0)
        if status != 0:
            same = same and seal["seal"] != "sealed, verified" and bool(seal["seal_problems"]) \
                and seal["seal_problems"][0] == first and first in seal["seal"]
            if status == 1 and seal["seal_state"] != "incomplete":
                same = same and seal["seal"].startswith("seal FAILED")
        if not same:
            disagree.append(f"{what}: verify exit {status} ({first}); view: {seal['seal']}")
    assert not disagree, "\n".join(disagree)
    refused = sum(1 for status, _ in verdicts.values() if status != 0)
    assert refused == len(cases) - 1  # under the key, every corruption is refused by both


def test_a_signed_run_without_its_key_says_the_signature_was_not_checked(signed, tmp_path, monkeypatch, capsys):
    """Session 16's probe: without the key, the viewer said "sealed, verified" of a signed run, as
    if its HMAC had been checked. Every surface now says plainly that it was not, and why."""
    monkeypatch.delenv("AGENTBED_LOG_KEY", raising=False)
    monkeypatch.delenv("AGENTBED_LOG_KEY_FILE", raising=False)
    run = signed["run"]
    assert main(["verify", str(run)]) == 0  # every check it made held; what it did not make, it says
    out = capsys.readouterr().out
    assert "signature (HMAC) NOT checked" in out and "no key was given" in out, out
    assert "logs verified" not in out and "logs' hash chains verified" in out, out
    assert main(["verify", "--json", str(run)]) == 0
    assert json.loads(capsys.readouterr().out)["paths"][0]["signature"] == "not checked"
    assert main(["report", "--json", str(run), "--out", str(tmp_path / "report.html")]) == 0
    headline = json.loads(capsys.readouterr().out)["seal"]["headline"]
    assert headline.startswith("seal verified except its signature, which was NOT checked: no key was given")
    assert "NOT checked" in (tmp_path / "report.html").read_text()
    for client in serve(run.parent):
        _, listing = client.get("/api/runs")
        _, page = client.get(f"/api/run?run={run.name}")
    for seal in ({r["id"]: r for r in listing["runs"]}[run.name]["seal"], page["run"]["seal"]):
        assert "verified" in seal and "signature NOT checked: no key was given" in seal, seal
        assert not seal.startswith("sealed, verified"), seal
    monkeypatch.setenv("AGENTBED_LOG_KEY", KEY)  # with the key: checked, and said so
    for client in serve(run.parent):
        _, listing = client.get("/api/runs")
    assert {r["id"]: r for r in listing["runs"]}[run.name]["seal"] == "sealed, verified, HMAC checked"
