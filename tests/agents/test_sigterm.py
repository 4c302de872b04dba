"""SIGTERM (a scheduler's stop) ends a model run as Ctrl-C does: one line, workers stopped, exit
143, nothing recorded lost, and --resume finishes the run. A verb given --json answers bad input
with one JSON document too."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time

from openai_stub import OpenAIStub
from scripted_models import vault_three_calls


def test_sigterm_stops_a_model_run_like_ctrl_c_with_exit_143_and_resume_finishes_it(tmp_path):
    stub = OpenAIStub(lambda body: vault_three_calls(body, delay=0.3))
    stub.start()
    out = tmp_path / "run"
    env = {**os.environ, "OPENAI_BASE_URL": stub.base_url, "OPENAI_API_KEY": "test"}
    command = [sys.executable, "-m", "agentbed.cli", "run", "vault", "--task", "open-fast", "--model",
               "openai:slow", "--seeds", "6", "--no-cache", "-j", "2", "--max-connections", "2", "--out", str(out)]
    try:
        proc = subprocess.Popen(command, env=env, stderr=subprocess.PIPE, text=True, start_new_session=True)
        deadline = time.monotonic() + 120
        while stub.served < 4 and time.monotonic() < deadline:  # the run is under way, episodes in flight
            time.sleep(0.05)
        proc.send_signal(signal.SIGTERM)
        _, err = proc.communicate(timeout=120)
        assert proc.returncode == 143, err
        assert "terminated (SIGTERM)" in err and "Traceback" not in err
        finished = (out / "index.jsonl").read_text().splitlines() if (out / "index.jsonl").exists() else []
        assert len(finished) < 6
        done = subprocess.run([sys.executable, "-m", "agentbed.cli", "run", "vault", "--resume", "--out", str(out),
                               "--quiet"], env=env, capture_output=True, text=True, timeout=180)
        assert done.returncode == 0, done.stderr
        records = [json.loads(line) for line in (out / "index.jsonl").read_text().splitlines()]
        assert len(records) == 6 and all(r["status"] == "ok" for r in records)
        assert (out / "index.jsonl").read_text().splitlines()[:len(finished)] == finished  # nothing lost
    finally:
        stub.stop()


def test_a_verb_given_json_answers_bad_input_with_one_document(tmp_path):
    done = subprocess.run([sys.executable, "-m", "agentbed.cli", "gate", str(tmp_path / "nothing"), "--baseline",
                           str(tmp_path / "none.json"), "--json"], capture_output=True, text=True, timeout=60)
    assert done.returncode == 2
    doc = json.loads(done.stdout)
    assert doc["command"] == "gate" and doc["ok"] is False and doc["exit_status"] == 2 and "nothing" in doc["error"]
    assert done.stderr.count("\n") == 1
