"""One writer per run directory, --resume that checks its arguments, order-free statistics."""

from __future__ import annotations

import json
import random
import subprocess
import sys
import time
from pathlib import Path

import pytest

from agentbed.errors import UsageError
from agentbed.results import suite_summary
from agentbed.store import RunStore, read_index
from agentbed.testing import cli_in_process

ROOT = Path(__file__).resolve().parents[2]
CLI = [sys.executable, "-m", "agentbed.cli"]


def cli(*args: str, timeout: float = 300) -> subprocess.CompletedProcess[str]:
    return subprocess.run([*CLI, *args], capture_output=True, text=True, timeout=timeout, cwd=ROOT)


def here(*args: str) -> subprocess.CompletedProcess[str]:
    """The command through ``agentbed.cli.main`` in this process, from the repository root: for the
    tests of what --resume checks and what a run writes, where no second process is the point."""
    return cli_in_process(*args, cwd=ROOT)


def one_line_error(result: subprocess.CompletedProcess[str], *names: str) -> None:
    lines = result.stderr.strip().splitlines()
    assert result.returncode == 2 and len(lines) == 1 and "Traceback" not in result.stderr, result.stderr
    for name in names:
        assert name in lines[0], lines[0]


def test_the_lock_refuses_a_second_writer_in_any_process(tmp_path):
    first = RunStore(tmp_path / "run")
    first.create({"suite": "vault", "tasks": ["open-fast"], "agents": ["oracle"], "seeds": [0], "options": {}})
    with pytest.raises(UsageError, match="another agentbed process"):
        RunStore(tmp_path / "run").open_existing()
    result = cli("run", "vault", "--out", str(tmp_path / "run"), "--resume", "--quiet")
    one_line_error(result, "another agentbed process", "is writing this run directory")
    first.unlock()
    assert cli("run", "vault", "--out", str(tmp_path / "run"), "--resume", "--quiet").returncode == 0


def test_two_resumes_at_once_leave_no_duplicate(tmp_path):
    out = tmp_path / "run"
    with RunStore(out) as store:  # a run recorded and killed before any episode finished: both would run all
        store.create({"suite": "vault", "tasks": ["open-fast", "open-after-chores"], "agents": ["oracle"],
                      "seeds": list(range(75)), "options": {}, "degrade": 0.0})
    procs = [subprocess.Popen([*CLI, "run", "vault", "--out", str(out), "--resume", "--quiet", "--executor",
                               "serial"], cwd=ROOT, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
             for _ in range(2)]
    results = [p.communicate(timeout=300) + (p.returncode,) for p in procs]
    codes = sorted(code for _, _, code in results)
    lines = (out / "index.jsonl").read_text().splitlines()
    ids = [json.loads(line)["episode_id"] for line in lines]
    assert len(ids) == len(set(ids)), "two writers interleaved the index"
    if codes == [0, 2]:  # the usual case: they overlapped
        loser = next(err for _, err, code in results if code == 2)
        assert "another agentbed process" in loser and len(loser.strip().splitlines()) == 1
    else:  # the first finished before the second started: the second had nothing to do
        assert codes == [0, 0]


def test_resume_refuses_arguments_that_contradict_run_json(tmp_path):
    out = tmp_path / "run"
    assert here("run", "vault", "--agent", "oracle", "--task", "open-fast", "--seeds", "2", "--out", str(out),
               "--quiet").returncode == 0
    before = (out / "index.jsonl").read_bytes()
    for args, field in ((["--task", "long-chores"], "'tasks'"), (["--agent", "naive"], "'agents'"),
                        (["--seeds", "5"], "'seeds' is seeds 0-1, not seeds 0-4"),
                        (["--seed-start", "3"], "'seeds' is seeds 0-1, not seeds 3-5"),
                        (["--degrade", "0.5"], "'degrade'"), (["--agent", "oracle,naive"], "'agents'")):
        one_line_error(here("run", "vault", "--out", str(out), "--resume", *args), field, "run.json")
    one_line_error(here("run", "contracts", "--out", str(out), "--resume"), "'suite'")
    assert (out / "index.jsonl").read_bytes() == before
    agreeing = here("run", "vault", "--out", str(out), "--resume", "--task", "open-fast", "--agent", "oracle",
                   "--seeds", "2", "-j", "1", "--quiet")
    assert agreeing.returncode == 0, agreeing.stderr


def test_a_run_json_that_names_a_string_of_agents_or_a_missing_task_is_refused(tmp_path):
    out = tmp_path / "run"
    assert here("run", "vault", "--agent", "oracle", "--seeds", "1", "--out", str(out), "--quiet").returncode == 0
    meta = json.loads((out / "run.json").read_text())
    for change, names in (({"agents": "oracle"}, ("'agents'", "array")),
                          ({"tasks": ["no-such-task"]}, ("'tasks'", "no-such-task")),
                          ({"agents": ["oracle", "oracle"]}, ("'agents'",)),
                          ({"seeds": [0, "1"]}, ("'seeds[1]'",))):
        (out / "run.json").write_text(json.dumps({**meta, **change}))
        one_line_error(here("run", "vault", "--out", str(out), "--resume"), "run.json", *names)


def test_summaries_and_results_do_not_depend_on_executor_or_completion_order(tmp_path):
    serial, pooled = tmp_path / "serial", tmp_path / "pooled"
    for out, executor in ((serial, ["--executor", "serial"]), (pooled, ["--executor", "process", "-j", "2"])):
        result = here("run", "contracts", "--seeds", "2", *executor, "--out", str(out), "--quiet")
        assert result.returncode == 0, result.stderr
    assert (serial / "contracts" / "summary.json").read_bytes() == (pooled / "contracts" / "summary.json").read_bytes()
    assert (serial / "results.json").read_bytes() == (pooled / "results.json").read_bytes()
    # the index of the pooled run lists episodes in completion order; shuffled, it reads the same
    lines = (pooled / "index.jsonl").read_text().splitlines(keepends=True)
    random.Random(7).shuffle(lines)
    (tmp_path / "shuffled.jsonl").write_text("".join(lines))
    shuffled = read_index(tmp_path / "shuffled.jsonl")
    assert shuffled == read_index(pooled / "index.jsonl")
    assert suite_summary("contracts", shuffled, "c") == suite_summary("contracts", read_index(serial / "index.jsonl"), "c")


def test_a_stale_lock_file_from_a_killed_run_does_not_block(tmp_path):
    out = tmp_path / "run"
    proc = subprocess.Popen([*CLI, "run", "vault", "--agent", "oracle,naive", "--seeds", "300", "--executor",
                             "serial", "--out", str(out), "--quiet"], cwd=ROOT, stderr=subprocess.DEVNULL)
    deadline = time.monotonic() + 120
    while time.monotonic() < deadline and not ((out / "index.jsonl").exists()
                                               and (out / "index.jsonl").stat().st_size > 0):
        time.sleep(0.05)
    proc.kill()
    proc.wait(timeout=30)
    assert (out / ".lock").exists()  # the file stays; the kernel dropped the lock with the process
    result = cli("run", "vault", "--out", str(out), "--resume", "--quiet")
    assert result.returncode == 0, result.stderr
