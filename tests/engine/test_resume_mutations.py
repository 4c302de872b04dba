"""A crashed run whose files were then changed line by line: an honest ``--resume`` seals only
what an uninterrupted run of the same plan would have written, byte for byte, or refuses.

Session 18's probe: a run killed after five of twelve episodes, then one change to one of its
logs or its index (a line deleted, repeated, swapped with the next, taken from another log, or
appended from one; the file cut at any byte, or its last line torn or dropped; two logs' contents
swapped). Some changes leave a state a kill could have left (the log of an episode not yet
indexed, the index's torn last line): the resume re-runs those episodes and must then equal the
uninterrupted run. Every other change must be refused (exit 2, nothing sealed). 340 random
changes passed by hand; hypothesis keeps drawing them here.
"""

from __future__ import annotations

import io
import json
import shutil
import tempfile
import types
import uuid
from contextlib import redirect_stderr, redirect_stdout
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import agentbed.store
from agentbed.cli import main
from tests.engine.test_resume_code import crash_after

PLAN = ["run", "vault", "--agent", "oracle,naive", "--task", "open-fast", "--task", "open-after-chores",
        "--seeds", "3", "--executor", "serial", "--quiet"]
OPS = ("delete", "repeat", "swap", "from_another", "append_another", "cut", "tear_last", "drop_last", "swap_files")


def cli(*argv: str) -> int:
    with redirect_stdout(io.StringIO()), redirect_stderr(io.StringIO()):
        return main(list(argv))


@pytest.fixture(scope="module")
def runs(tmp_path_factory):
    """(uninterrupted, crashed after 5 episodes), both under one run id so their bytes compare."""
    root = tmp_path_factory.mktemp("resume-mutations")
    with pytest.MonkeyPatch.context() as m:
        m.setattr(agentbed.store, "uuid", types.SimpleNamespace(uuid4=lambda: uuid.UUID(int=18)))
        whole = root / "whole"
        assert cli(*PLAN, "--out", str(whole)) == 0
        crash_after(m, 5)
        crashed = root / "crashed"
        assert cli(*PLAN, "--out", str(crashed)) == 130
    return whole, crashed


def logs(run: Path) -> dict[str, bytes]:
    return {p.name: p.read_bytes() for p in sorted((run / "episodes").glob("*.jsonl"))}


def change(run: Path, data: st.DataObject) -> str:
    files = sorted((run / "episodes").glob("*.jsonl")) + [run / "index.jsonl"]
    path = data.draw(st.sampled_from(files), label="file")
    op = data.draw(st.sampled_from(OPS), label="op")
    content = path.read_bytes()
    lines = content.splitlines(keepends=True)
    others = [f for f in files[:-1] if f != path]
    at = data.draw(st.integers(0, len(lines) - 1), label="line")
    if op == "delete":
        del lines[at]
    elif op == "repeat":
        lines.insert(at, lines[at])
    elif op == "swap" and at + 1 < len(lines):
        lines[at], lines[at + 1] = lines[at + 1], lines[at]
    elif op in ("from_another", "append_another", "swap_files"):
        other = data.draw(st.sampled_from(others), label="other")
        theirs = other.read_bytes().splitlines(keepends=True)
        if op == "from_another":
            lines[min(at, len(lines) - 1)] = theirs[min(at, len(theirs) - 1)]
        elif op == "append_another":
            lines.append(theirs[min(at, len(theirs) - 1)])
        else:
            other.write_bytes(content)
            lines = theirs
    elif op == "cut":
        lines = [content[:data.draw(st.integers(0, len(content) - 1), label="byte")]]
    elif op == "tear_last":
        lines[-1] = lines[-1][:data.draw(st.integers(1, len(lines[-1]) - 1), label="byte")]
    elif op == "drop_last":
        lines.pop()
    path.write_bytes(b"".join(lines))
    return f"{op} {path.name}"


@settings(max_examples=30, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(data=st.data())
def test_a_resume_seals_only_what_an_uninterrupted_run_writes(runs, data, monkeypatch):
    whole, crashed = runs
    with tempfile.TemporaryDirectory() as scratch:
        run = Path(scratch) / "run"
        shutil.copytree(crashed, run)
        what = change(run, data)
        status = cli(*PLAN, "--out", str(run), "--resume")
        final = json.loads((run / "manifest.json").read_text())["final"]
        assert status in (0, 2), what
        if status == 2:
            assert not final, what  # refused: nothing sealed
        else:
            assert final and logs(run) == logs(whole), what  # sealed: the honest run's bytes
            assert cli("verify", str(run)) == 0, what
