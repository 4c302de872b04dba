"""Group commit of index lines: one fsync a batch, and nothing reported done before it is durable."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import time

import pytest

from agentbed.groupcommit import GroupCommit
from agentbed.store import INDEX, RunStore, read_index


def _line(n: int) -> bytes:
    return json.dumps({"n": n}).encode() + b"\n"


def test_a_batch_is_one_write_and_one_fsync(tmp_path, monkeypatch):
    fsyncs = []
    real = os.fsync
    monkeypatch.setattr(os, "fsync", lambda fd: (fsyncs.append(fd), real(fd)))
    done: list[int] = []
    index = GroupCommit(tmp_path / "index.jsonl", max_lines=4, max_seconds=60)
    for n in range(10):
        index.add(_line(n), lambda n=n: done.append(n))
    assert done == list(range(8)) and len(fsyncs) == 2 and index.pending == 2  # two full batches so far
    index.flush()
    assert done == list(range(10)) and len(fsyncs) == 3
    assert (tmp_path / "index.jsonl").read_bytes() == b"".join(_line(n) for n in range(10))


def test_an_open_batch_commits_within_its_time_bound(tmp_path):
    done: list[int] = []
    index = GroupCommit(tmp_path / "index.jsonl", max_lines=64, max_seconds=0.01)
    index.add(_line(1), lambda: done.append(1))
    deadline = time.monotonic() + 30
    while not done and time.monotonic() < deadline:
        time.sleep(0.01)
    assert done == [1] and (tmp_path / "index.jsonl").read_bytes() == _line(1)


def test_a_failed_commit_reports_nothing_done_and_leaves_no_half_batch(tmp_path, monkeypatch):
    path = tmp_path / "index.jsonl"
    index = GroupCommit(path, max_lines=64, max_seconds=60)
    index.add(_line(0))
    index.flush()
    done: list[int] = []
    index.add(_line(1), lambda: done.append(1))

    def full(fd: int) -> None:
        raise OSError(28, "No space left on device")

    monkeypatch.setattr(os, "fsync", full)
    with pytest.raises(OSError, match="No space"):
        index.flush()
    assert done == [] and path.read_bytes() == _line(0) and index.pending == 1
    monkeypatch.undo()
    index.flush()  # the batch is retried whole
    assert done == [1] and path.read_bytes() == _line(0) + _line(1)


def test_the_committer_woken_while_a_failing_flush_holds_the_batch_does_not_retry_it_early(tmp_path, monkeypatch):
    """A committer woken while a caller's flush has taken the batch (found under pytest-xdist: the
    wake was the caller's own add) used to flush right after that flush failed, with the disk
    still full, and its failure then came out of the caller's next, good flush. The batch is not
    due for 60 s, so the committer must go back to waiting."""
    index = GroupCommit(tmp_path / "index.jsonl", max_lines=64, max_seconds=60)
    index.add(_line(0))
    time.sleep(0.2)  # the committer is waiting for line 0's batch to be due
    index.flush()
    index.add(_line(1))

    def full(fd: int) -> None:
        with index._lock:  # wake the committer while this flush holds the batch
            index._opened.notify()
        time.sleep(0.2)  # and let it run: it re-checks, finds no lines, and must not commit
        raise OSError(28, "No space left on device")

    monkeypatch.setattr(os, "fsync", full)
    with pytest.raises(OSError, match="No space"):
        index.flush()
    time.sleep(0.2)  # a committer that went on to flush would fail now, with fsync still full
    monkeypatch.undo()
    index.flush()
    assert index.pending == 0 and index.path.read_bytes() == _line(0) + _line(1)


def test_a_timers_failure_is_raised_in_the_callers_thread(tmp_path, monkeypatch):
    index = GroupCommit(tmp_path / "index.jsonl", max_lines=64, max_seconds=0.01)
    monkeypatch.setattr(os, "fsync", lambda fd: (_ for _ in ()).throw(OSError(28, "No space left on device")))
    index.add(_line(1))
    deadline = time.monotonic() + 30
    while index._failed is None and time.monotonic() < deadline:
        time.sleep(0.01)
    with pytest.raises(OSError, match="No space"):
        index.add(_line(2))


def test_the_store_reports_an_episode_finished_only_once_durable(tmp_path):
    store = RunStore(tmp_path / "run")
    store.create({"suite": "vault", "tasks": ["t"], "agents": ["a"], "seeds": [0], "options": {},
                  "command": "test", "executor": "serial"})
    finished: list[str] = []
    store.on_finished = lambda record: finished.append(record["episode_id"])
    store.group_commit(max_lines=64, max_seconds=60)  # only an explicit flush commits here
    record = {"episode_id": "e1", "suite": "vault", "task": "t", "agent": "a", "seed": 0, "status": "ok",
              "success": True}
    store.append(record)
    assert finished == [] and read_index(store.root / INDEX) == []
    assert [r["episode_id"] for r in store.records()] == ["e1"] and finished == ["e1"]
    store.unlock()


def test_outside_a_run_loop_each_line_is_committed_at_once(tmp_path):
    store = RunStore(tmp_path / "run")
    store.create({"suite": "vault"})
    store.append({"episode_id": "e1", "suite": "vault", "task": "t", "agent": "a", "seed": 0, "status": "ok",
                  "success": True})
    assert [r["episode_id"] for r in read_index(store.root / INDEX)] == ["e1"]


def test_a_kill_loses_only_the_open_batch(tmp_path):
    """SIGKILL with a batch open: the committed lines are whole on disk, the open batch is gone
    (its episodes are re-run on resume), and the child reported only the committed ones."""
    path = tmp_path / "index.jsonl"
    child = (
        "import json, os, signal, sys\n"
        "from agentbed.groupcommit import GroupCommit\n"
        f"from pathlib import Path; index = GroupCommit(Path({str(path)!r}), max_lines=3, max_seconds=600)\n"
        "for n in range(5):\n"
        "    index.add(json.dumps({'n': n}).encode() + b'\\n', lambda n=n: print(n, flush=True))\n"
        "os.kill(os.getpid(), signal.SIGKILL)\n")
    env = {**os.environ, "PYTHONPATH": os.pathsep.join(p for p in sys.path if p)}
    result = subprocess.run([sys.executable, "-c", child], capture_output=True, text=True, env=env, timeout=120)
    assert result.returncode == -9
    assert result.stdout.split() == ["0", "1", "2"]
    assert [json.loads(x)["n"] for x in path.read_text().splitlines()] == [0, 1, 2]


def test_the_file_system_is_flushed_before_a_batch_names_its_logs(tmp_path, monkeypatch):
    """With sync_first (the run store's), the logs a batch's lines name are flushed (syncfs)
    before the batch is written: a machine crash cannot keep a line whose log it lost."""
    import agentbed.groupcommit as groupcommit

    events: list[str] = []
    real_write = os.write
    monkeypatch.setattr(groupcommit, "sync_file_system", lambda fd: events.append("syncfs"))
    monkeypatch.setattr(os, "write", lambda fd, data: (events.append("write"), real_write(fd, data))[1])
    index = GroupCommit(tmp_path / "index.jsonl", max_lines=2, max_seconds=60, sync_first=True)
    index.add(_line(0))
    index.add(_line(1))
    assert events == ["syncfs", "write"]
    plain = GroupCommit(tmp_path / "other.jsonl", max_lines=1, max_seconds=60)
    events.clear()
    plain.add(_line(2))
    assert events == ["write"]


def test_lines_added_while_a_commit_waits_on_the_disk_join_the_next_batch(tmp_path, monkeypatch):
    """The adding thread never waits for the timer thread's fsync: it queues the next batch."""
    import threading

    release, syncing = threading.Event(), threading.Event()
    real = os.fsync

    def slow_fsync(fd: int) -> None:
        syncing.set()
        release.wait(30)
        real(fd)

    monkeypatch.setattr(os, "fsync", slow_fsync)
    done: list[int] = []
    index = GroupCommit(tmp_path / "index.jsonl", max_lines=64, max_seconds=0.01)
    index.add(_line(0), lambda: done.append(0))
    assert syncing.wait(30)
    index.add(_line(1), lambda: done.append(1))  # returns while the first batch is still syncing
    assert index.pending == 1 and done == []
    release.set()
    index.flush()
    assert done == [0, 1]
    assert [json.loads(x)["n"] for x in (tmp_path / "index.jsonl").read_text().splitlines()] == [0, 1]
