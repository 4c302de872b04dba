"""`agentbed run` with the real local model (llama.cpp serving Gemma 3 270M, started by the run):
a cached rerun makes no request and writes byte-identical logs; a server that dies is restarted
once, and one that dies again stops the run (exit 4) naming the server's log."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

from agentbed.testing import episode_bytes

pytestmark = pytest.mark.local_model

MODEL = "local:gemma-3-270m"


@pytest.fixture(autouse=True)
def _weights(local_model_installed):
    """Only where the local model is installed; each test starts its own servers."""


def command(out: Path, cache: Path, *extra: str) -> list[str]:
    return [sys.executable, "-m", "agentbed.cli", "run", "vault", "--task", "open-fast", "--model", MODEL,
            "--cache-dir", str(cache), "--out", str(out), "--quiet", *extra]


def test_a_cached_rerun_of_a_local_model_run_makes_no_request_and_writes_the_same_bytes(tmp_path, monkeypatch):
    """The run's machinery (executor, runtime, store) in this process, on the real server, with
    vault's step budget cut to 3 so that the slow model fits a test."""
    import dataclasses

    from agentbed import suite as suites
    from agentbed.agents.cache import ModelCallCache
    from agentbed.agents.local.server import serving
    from agentbed.executors import execute
    from agentbed.inflight import ModelRuntime
    from agentbed.runner import Budget, EpisodeSpec

    suites.load_suites()
    monkeypatch.setitem(suites._SUITES, "vault", dataclasses.replace(suites.get_suite("vault"),
                                                                     budget=Budget(max_steps=3)))
    specs = [EpisodeSpec("vault", "open-fast", f"model:{MODEL}", seed) for seed in range(2)]
    usages = {}
    with serving([MODEL], tmp_path, exit_on_sigterm=False):
        for run in ("live", "again"):
            (tmp_path / run).mkdir()
            runtime = ModelRuntime.for_run([s.agent for s in specs], tmp_path / run,
                                           cache=ModelCallCache(tmp_path / "cache"))
            records = list(execute(specs, tmp_path / run, executor="process", jobs=1, runtime=runtime))
            assert all(r.status != "error" for r in records), [r.error for r in records]
            usages[run] = [r.usage for r in records]
    assert all(u["calls"] > u["cached_calls"] for u in usages["live"])
    assert all(u["calls"] == u["cached_calls"] > 0 for u in usages["again"]), "a cached rerun called the server"
    logs = sorted((tmp_path / "live" / "episodes").glob("*.jsonl"))
    assert len(logs) == 2
    for log in logs:
        assert episode_bytes(tmp_path / "again" / "episodes" / log.name) == episode_bytes(log)


def serving_server(out: Path, count: int, timeout: float = 300.0) -> int:
    """The pid of the run's ``count``-th server once it answers ``/health`` and the run has begun
    its episodes (its ``start`` event): killing it earlier would only fail the run's start-up."""
    import httpx

    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        log = out / "local-model-server.log"
        lines = [line for line in log.read_text().splitlines() if line.startswith("agentbed: serving ")] \
            if log.exists() else []
        if len(lines) >= count and (out / "events.jsonl").exists():
            ready = json.loads(lines[count - 1].removeprefix("agentbed: serving "))
            try:
                if httpx.get(ready["url"].rstrip("/") + "/health", timeout=2.0).status_code == 200:
                    return ready["pid"]
            except httpx.HTTPError:
                pass
        time.sleep(0.2)
    raise AssertionError(f"the run's local model server number {count} did not start")


def test_a_dead_server_is_restarted_once_and_a_second_death_stops_the_run_naming_its_log(tmp_path):
    out = tmp_path / "run"
    proc = subprocess.Popen(command(out, tmp_path / "cache", "--seeds", "8", "--no-cache", "--max-connections", "3"),
                            stderr=subprocess.PIPE, text=True)
    try:
        first = serving_server(out, 1)
        os.kill(first, signal.SIGKILL)
        second = serving_server(out, 2)  # restarted by the run, on the same port
        assert second != first
        os.kill(second, signal.SIGKILL)
        _, err = proc.communicate(timeout=300)
    finally:
        if proc.poll() is None:
            proc.kill()
    assert proc.returncode == 4, err
    assert "died again after 1 restart(s)" in err and str(out / "local-model-server.log") in err
    events = [json.loads(line) for line in (out / "events.jsonl").read_text().splitlines()]
    assert any(e.get("event") == "local_server" and e["restarts"] == {MODEL: 1} for e in events)
    server_log = (out / "local-model-server.log").read_text()
    assert "restarting it on port" in server_log
    assert " --slots 3 " in server_log, "the server's slots follow --max-connections"
