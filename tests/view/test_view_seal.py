"""The viewer's seal column is ``agentbed verify``'s verdict, with the problem named: one check,
not a second reading of the manifest. Each corrupted copy of a real run is given to both, and
they must agree (the view says "sealed, verified" exactly when verify exits 0)."""

from __future__ import annotations

import io
import json
import shutil
from contextlib import redirect_stderr, redirect_stdout
from pathlib import Path

import pytest

from agentbed.cli import main

from .conftest import make_run, serve


def edit_a_log_by_hand(run: Path) -> None:
    log = sorted((run / "episodes").glob("*.jsonl"))[0]
    log.write_bytes(log.read_bytes().replace(b'"reward":0', b'"reward":1', 1))


def list_an_episode_twice(run: Path) -> None:
    first = (run / "index.jsonl").read_text().splitlines()[0]
    with open(run / "index.jsonl", "a") as fh:
        fh.write(first + "\n")


def results_disagree_with_the_footers(run: Path) -> None:
    doc = json.loads((run / "results.json").read_text())
    values = doc["metrics"][0]["values"]
    values[next(iter(values))] = 1.0 - values[next(iter(values))]
    (run / "results.json").write_text(json.dumps(doc))


def delete_the_manifest(run: Path) -> None:
    (run / "manifest.json").unlink()


def a_log_of_another_run(run: Path) -> None:
    other = make_run(run.parent / "other-run")
    log = sorted((run / "episodes").glob("*.jsonl"))[0]
    shutil.copy(other / "episodes" / log.name, log)
    lines = [json.loads(line) for line in (run / "index.jsonl").read_text().splitlines()]
    digests = {json.loads(line)["episode_id"]: json.loads(line)["digest"]
               for line in (other / "index.jsonl").read_text().splitlines()}
    for record in lines:  # the forger also fixes the index, as a resume would have
        if record["log"].endswith(log.name):
            record["digest"] = digests[record["episode_id"]]
    (run / "index.jsonl").write_text("".join(json.dumps(r) + "\n" for r in lines))
    shutil.rmtree(other)


CASES = [None, edit_a_log_by_hand, list_an_episode_twice, results_disagree_with_the_footers, delete_the_manifest,
         a_log_of_another_run]


@pytest.mark.parametrize("corrupt", CASES, ids=lambda c: c.__name__ if c else "intact")
def test_view_and_verify_give_the_same_verdict(runs_root, corrupt):
    run = runs_root / "vault-a"
    if corrupt is not None:
        corrupt(run)
    out = io.StringIO()
    with redirect_stdout(out), redirect_stderr(io.StringIO()):
        status = main(["verify", str(run)])
    said = out.getvalue().splitlines()
    for client in serve(runs_root):
        _, doc = client.get("/api/runs")
        seal = doc["runs"][0]
    assert (seal["seal_state"] == "verified") == (status == 0), (seal, said)
    if status != 0:
        assert seal["seal"] != "sealed, verified" and seal["seal_problems"][0] == said[0], (seal, said)
        assert corrupt is delete_the_manifest or seal["seal"].startswith("seal FAILED"), seal
