"""SIGTERM (a scheduler's stop) ends a model run as Ctrl-C does: one line, workers stopped, exit
143, nothing recorded lost, and --resume finishes the run; under --executor ray too. A verb given --json answers bad input
with one JSON document too."""

from __future__ import annotations

import importlib.util
import json
import os
import signal
import subprocess
import sys
import time

import pytest
from openai_stub import OpenAIStub
from scripted_models import vault_three_calls

from agentbed.log import verify_log
from agentbed.testing import require


@pytest.fixture
def stub():
    served = OpenAIStub(lambda body: vault_three_calls(body, delay=0.3))
    served.start()
    yield served
    served.stop()


def terminated_mid_run(stub, out, *extra: str, finished_first: bool = False) -> tuple[str, list[str], dict[str, str]]:
    """A model run of 6 episodes sent SIGTERM while episodes are in flight (``finished_first``:
    once one is in the index): its stderr, the index lines it left, and the environment that
    reaches the stub."""
    env = {**os.environ, "OPENAI_BASE_URL": stub.base_url, "OPENAI_API_KEY": "test"}
    command = [sys.executable, "-m", "agentbed.cli", "run", "vault", "--task", "open-fast", "--model",
               "openai:slow", "--seeds", "6", "--no-cache", "-j", "2", "--max-connections", "2", "--out", str(out),
               *extra]
    proc = subprocess.Popen(command, env=env, stderr=subprocess.PIPE, text=True, start_new_session=True)
    deadline = time.monotonic() + 120
    index = out / "index.jsonl"
    while (stub.served < 4 or finished_first and not (index.exists() and index.read_text().strip())) \
            and time.monotonic() < deadline:  # the run is under way, episodes in flight
        time.sleep(0.05)
    proc.send_signal(signal.SIGTERM)
    _, err = proc.communicate(timeout=120)
    assert proc.returncode == 143, err
    assert "terminated (SIGTERM)" in err and "Traceback" not in err and "SIGTERM received" not in err
    finished = (out / "index.jsonl").read_text().splitlines() if (out / "index.jsonl").exists() else []
    assert len(finished) < 6
    return err, finished, env


def test_sigterm_stops_a_model_run_like_ctrl_c_with_exit_143_and_resume_finishes_it(stub, tmp_path):
    out = tmp_path / "run"
    _, finished, env = terminated_mid_run(stub, out)
    done = subprocess.run([sys.executable, "-m", "agentbed.cli", "run", "vault", "--resume", "--out", str(out),
                           "--quiet"], env=env, capture_output=True, text=True, timeout=180)
    assert done.returncode == 0, done.stderr
    records = [json.loads(line) for line in (out / "index.jsonl").read_text().splitlines()]
    assert len(records) == 6 and all(r["status"] == "ok" for r in records)
    assert (out / "index.jsonl").read_text().splitlines()[:len(finished)] == finished  # nothing lost


@pytest.mark.exclusive("ray")
def test_sigterm_stops_a_ray_run_with_exit_143_keeping_what_finished(stub, tmp_path):
    """Ray's core installs its own SIGTERM handler in the driver (before: a C++ stack and SIGABRT,
    exit -6); the run's handler is put back, so Ray is shut down and what finished stays
    recorded, each log whole. (Resume is the same as after any run: tested above.)"""
    require(importlib.util.find_spec("ray") is not None, "Ray", "pip install 'agentbed[ray]' (make test does this)")
    out = tmp_path / "run"
    _, finished, _ = terminated_mid_run(stub, out, "--executor", "ray", finished_first=True)
    assert finished
    for line in finished:
        assert verify_log(out / json.loads(line)["log"]).ok


def test_a_verb_given_json_answers_bad_input_with_one_document(tmp_path):
    done = subprocess.run([sys.executable, "-m", "agentbed.cli", "gate", str(tmp_path / "nothing"), "--baseline",
                           str(tmp_path / "none.json"), "--json"], capture_output=True, text=True, timeout=60)
    assert done.returncode == 2
    doc = json.loads(done.stdout)
    assert doc["command"] == "gate" and doc["ok"] is False and doc["exit_status"] == 2 and "nothing" in doc["error"]
    assert done.stderr.count("\n") == 1
