"""The process pool: workers pulling chunks over pipes. A worker that dies is a one-line error
(exit 75) that keeps what was recorded; stopping early leaves no worker behind; a chunk that
cannot be returned is an error in the parent, not a hang."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import time
from pathlib import Path

import pytest

from agentbed.executors import _process_pool
from agentbed.log import verify_log
from agentbed.runner import EpisodeSpec
from agentbed.store import read_index


def _children(pid: int) -> list[int]:
    path = Path(f"/proc/{pid}/task/{pid}/children")
    return [int(p) for p in path.read_text().split()] if path.exists() else []


def _alive(pid: int) -> bool:
    try:
        state = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[0]
    except (FileNotFoundError, IndexError):
        return False
    return state != "Z"


def test_a_killed_worker_is_a_one_line_error_and_resume_finishes_the_run(tmp_path, agentbed_cmd):
    out = tmp_path / "run"
    total = 3 * 400
    cmd = agentbed_cmd + ["run", "vault", "--task", "echo", "--agent", "oracle,naive,random", "--seeds", "400",
                          "--out", str(out), "-j", "2", "--quiet"]
    proc = subprocess.Popen(cmd, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True)
    index = out / "index.jsonl"
    deadline = time.monotonic() + 120
    while time.monotonic() < deadline and not (index.exists() and index.read_bytes().count(b"\n") >= 100):
        time.sleep(0.01)
    workers = _children(proc.pid)
    assert workers, "the run should have started its workers"
    os.kill(workers[0], signal.SIGKILL)
    _, stderr = proc.communicate(timeout=120)
    assert proc.returncode == 75, stderr
    lines = [ln for ln in stderr.splitlines() if ln.strip()]
    assert len(lines) == 1 and "worker process ended" in lines[0] and "--resume" in lines[0], stderr
    assert "Traceback" not in stderr
    before = read_index(index)
    assert 100 <= len(before) < total

    resumed = subprocess.run(agentbed_cmd + ["run", "vault", "--out", str(out), "--resume", "--quiet"],
                             capture_output=True, text=True, timeout=300)
    assert resumed.returncode == 0, resumed.stderr
    ids = [json.loads(ln)["episode_id"] for ln in index.read_text().splitlines() if ln.endswith("}")]
    assert len(ids) == len(set(ids)) == total, "an episode was lost or counted twice"
    digests = {r["log"]: r["digest"] for r in read_index(index)}
    for log in sorted((out / "episodes").glob("*.jsonl")):
        assert verify_log(log, digests[f"episodes/{log.name}"]).ok


def test_stopping_early_ends_every_worker(tmp_path):
    specs = [EpisodeSpec("vault", "echo", "oracle", s) for s in range(400)]
    others = set(_children(os.getpid()))  # processes earlier tests left running (a session's servers)
    records = _process_pool(specs, str(tmp_path), 2)
    first = next(records)
    workers = [pid for pid in _children(os.getpid()) if pid not in others]
    assert first.status == "ok" and len(workers) == 2
    records.close()  # what a run does when its budget or a stop check ends it
    assert not [w for w in workers if _alive(w)], "a worker outlived the pool"


def test_a_chunk_that_cannot_be_returned_is_an_error_not_a_hang(tmp_path, monkeypatch):
    import agentbed.executors as executors

    def unpicklable(specs, run_dir):
        return [lambda: None]  # a record the pipe cannot carry

    monkeypatch.setattr(executors, "run_chunk", unpicklable)  # the forked workers inherit it
    specs = [EpisodeSpec("vault", "echo", "oracle", s) for s in range(4)]
    with pytest.raises(RuntimeError, match="could not run or return a chunk"):
        list(_process_pool(specs, str(tmp_path), 2))
