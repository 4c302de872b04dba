"""`agentbed run --model local:...` starts one llama.cpp server for the run and leaves none behind:
after a normal end, a SIGTERM, a Ctrl-C, or even a SIGKILL of agentbed itself (the server then
notices on its own). Real server, real CLI processes."""

from __future__ import annotations

import json
import os
import re
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

from agentbed.agents.local.server import LOG_NAME
from agentbed.log import read_log, verify_log

pytestmark = [pytest.mark.local_model, pytest.mark.timeout(1800)]  # a busy machine decodes slowly
CLI = [sys.executable, "-m", "agentbed.cli"]
# each reply cut at 8 tokens: these tests are about the server's life, not the model's play
CHEAP = "local:gemma-3-270m?max_tokens=8&window=1"
SERVING = re.compile(r"agentbed: serving (\{.*\})")


def server_pids(log: Path) -> list[int]:
    text = log.read_text(encoding="utf-8", errors="replace") if log.exists() else ""
    return [json.loads(m.group(1))["pid"] for m in SERVING.finditer(text)]


def gone(pid: int, within: float = 10.0) -> bool:
    deadline = time.monotonic() + within
    while time.monotonic() < deadline:
        try:
            state = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[0]
        except (FileNotFoundError, ProcessLookupError):
            return True
        if state == "Z":  # exited, waiting for whoever adopted it to reap it
            return True
        time.sleep(0.1)
    return False


def start_run(out: Path, *extra: str) -> subprocess.Popen:
    return subprocess.Popen([*CLI, "run", "vault", "--model", CHEAP, "--task", "open-after-chores",
                             "--seeds", "3", "--executor", "serial", "--out", str(out), "--quiet", *extra],
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)


def wait_serving(out: Path, run: subprocess.Popen, within: float = 120.0) -> int:
    deadline = time.monotonic() + within
    while time.monotonic() < deadline:
        pids = server_pids(out / LOG_NAME)
        if pids:
            return pids[0]
        assert run.poll() is None, run.communicate()
        time.sleep(0.2)
    raise AssertionError("the local model server did not start")


def wait_for_request(log: Path, within: float = 600.0) -> None:
    """Until a request has reached the server (its log names the slot chosen for it). Not until the
    slot logs "processing task": in between, a server's first constrained request sets up its
    grammar engine (about 3 s of CPU measured here, 10-15 s of wall on a busy machine; a plain first
    request does not pay it), and the run would be interrupted after that rather than during it."""
    deadline = time.monotonic() + within
    while time.monotonic() < deadline:
        if "selected slot by" in log.read_text(encoding="utf-8", errors="replace"):
            return
        time.sleep(0.1)
    raise AssertionError("no episode reached the local model server")


@pytest.fixture(autouse=True)
def _model_present(local_model_installed):
    """Only where the local model is installed (fails or skips otherwise); each test starts its
    own servers, so the session's is not started for them."""


def test_a_run_serves_one_server_to_its_workers_logs_it_in_the_run_directory_and_stops_it(tmp_path):
    out = tmp_path / "run"
    done = subprocess.run([*CLI, "run", "vault", "--model", CHEAP, "--task", "open-fast", "--seeds", "2",
                           "--executor", "process", "-j", "2", "--out", str(out), "--json"],
                          capture_output=True, text=True, timeout=1700)
    assert done.returncode == 0, done.stderr
    assert json.loads(done.stdout.strip().splitlines()[-1])["episodes"] == 2
    pids = server_pids(out / LOG_NAME)
    assert len(pids) == 1 and gone(pids[0], within=1.0)  # one server for both workers, gone at the end
    assert "127.0.0.1" in (out / LOG_NAME).read_text()
    logs = sorted((out / "episodes").glob("*.jsonl"))
    assert len(logs) == 2
    for log in logs:
        records = read_log(log)
        assert records[0]["agent"]["model"] == CHEAP and records[-1]["status"] != "error", records[-1]
        assert records[0]["agent"]["reply_format"]["max_tokens"] == 8
        assert all(r["usage"]["output_tokens"] <= 8 for r in records if r["type"] == "step")
        assert verify_log(log).ok


@pytest.mark.parametrize("signum, status", [(signal.SIGTERM, 128 + signal.SIGTERM), (signal.SIGINT, 130)])
def test_sigterm_or_ctrl_c_mid_run_stops_the_server(tmp_path, signum, status):
    out = tmp_path / "run"
    run = start_run(out)
    pid = wait_serving(out, run)
    wait_for_request(out / LOG_NAME)  # an episode is talking to the server
    run.send_signal(signum)
    run.communicate(timeout=60)
    assert run.returncode == status
    assert gone(pid)


def test_a_killed_run_leaves_no_server_behind(tmp_path):
    out = tmp_path / "run"
    run = start_run(out)
    pid = wait_serving(out, run)
    run.kill()  # no handler runs: the server must notice by itself
    run.communicate(timeout=60)
    assert gone(pid, within=10.0)


def test_a_missing_model_is_a_one_line_error_with_the_install_command(tmp_path):
    env = {**os.environ, "AGENTBED_MODELS_DIR": str(tmp_path / "empty")}
    done = subprocess.run([*CLI, "run", "vault", "--model", "local:gemma-3-270m", "--out", str(tmp_path / "run")],
                          capture_output=True, text=True, timeout=120, env=env)
    assert done.returncode == 2
    assert done.stderr.strip().count("\n") == 0 and "scripts/setup-local-model" in done.stderr
    missing = subprocess.run([*CLI, "run", "vault", "--model", f"local:{tmp_path / 'nope.gguf'}"],
                             capture_output=True, text=True, timeout=120)
    assert missing.returncode == 2 and "no such file" in missing.stderr


def test_a_server_start_is_one_line_on_stderr_that_ends_ready_or_failed(tmp_path, capfd):
    """A run is not silent while its model loads: one line says the server is starting and ends
    with the seconds it took, or that it failed (the one-line error follows; --quiet leaves only
    that). A path model, not the session server's name, so the two do not meet."""
    from agentbed.agents.local.server import serving
    from agentbed.agents.local.weights import DEFAULT_MODEL, resolve_weights
    from agentbed.errors import UsageError

    model = f"local:{resolve_weights(DEFAULT_MODEL)}"
    with serving([model], tmp_path / "good", exit_on_sigterm=False, announce=True):
        pass
    line = rf"agentbed: starting the local model server for {re.escape(model)} \.\.\. ready in \d+\.\d s\n"
    assert re.fullmatch(line, capfd.readouterr().err)

    bad = tmp_path / "bad.gguf"
    bad.write_bytes(b"GGUF" + bytes(60))  # a header and nothing else: the server cannot load it
    with pytest.raises(UsageError, match="bad.gguf"), serving([f"local:{bad}"], tmp_path / "bad",
                                                              exit_on_sigterm=False, announce=True):
        pass
    failed = rf"agentbed: starting the local model server for local:{re.escape(str(bad))} \.\.\. failed after \d+\.\d s\n"
    assert re.fullmatch(failed, capfd.readouterr().err)
    for quiet in ([], ["--quiet"]):
        done = subprocess.run([*CLI, "run", "vault", "--model", f"local:{bad}", "--out", str(tmp_path / "run"),
                               *quiet], capture_output=True, text=True, timeout=300)
        lines = done.stderr.strip().splitlines()
        assert done.returncode == 2 and len(lines) == 2 - len(quiet) and "bad.gguf" in lines[-1], done.stderr
        assert quiet or re.fullmatch(failed.removesuffix(r"\n"), lines[0])
