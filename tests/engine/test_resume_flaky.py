"""A run whose 'provider' fails on a seeded mix of episodes, killed at any point (its index's last
line perhaps torn by the kill) and resumed, ends as the uninterrupted run did: the same logs byte
for byte, the same index records and exit status, the errored episodes counted apart and left out
of every rate, and verify clean. ``--retry-errors`` once the provider is back runs exactly those.
Hypothesis draws the mix, the kill and the tear (tests/engine/flaky_agent.py is the agent)."""

from __future__ import annotations

import io
import json
import tempfile
import types
import uuid
from contextlib import redirect_stderr, redirect_stdout
from pathlib import Path

from flaky_agent import VAR
from hypothesis import HealthCheck, Phase, given, settings
from hypothesis import strategies as st

import agentbed.store
from agentbed.cli import main
from agentbed.problems import is_errored
from tests.engine.test_resume_code import crash_after

AGENT = str(Path(__file__).with_name("flaky_agent.py")) + ":Flaky"
TASKS = ["open-fast", "open-after-chores"]
SEEDS = 4
PLAN = ["run", "vault", "--agent", AGENT, *[a for t in TASKS for a in ("--task", t)], "--seeds", str(SEEDS),
        "--executor", "serial", "--quiet"]


def cli(*argv: str) -> int:
    with redirect_stdout(io.StringIO()), redirect_stderr(io.StringIO()):
        return main(list(argv))


def logs(run: Path) -> dict[str, bytes]:
    return {p.name: p.read_bytes() for p in sorted((run / "episodes").glob("*.jsonl"))}


def records(run: Path) -> dict[str, dict]:
    lines = [json.loads(line) for line in (run / "index.jsonl").read_text().splitlines()]
    return {r["episode_id"]: {k: v for k, v in r.items() if k != "wall_seconds"} for r in lines}


@settings(max_examples=8, deadline=None, phases=[Phase.explicit, Phase.generate], suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(salt=st.integers(0, 10**6), rate=st.sampled_from([0.0, 0.3, 0.6, 1.0]), kill_after=st.integers(0, 8),
       tear=st.one_of(st.none(), st.integers(1, 400)))
def test_a_killed_run_with_failing_episodes_resumes_to_the_uninterrupted_run(monkeypatch, salt, rate, kill_after, tear):
    monkeypatch.setenv(VAR, f"{salt}:{rate}")
    monkeypatch.setattr(agentbed.store, "uuid", types.SimpleNamespace(uuid4=lambda: uuid.UUID(int=20)))
    with tempfile.TemporaryDirectory(prefix="fix20 flaky ") as scratch:
        whole, run = Path(scratch) / "whole", Path(scratch) / "run ü"
        status = cli(*PLAN, "--out", str(whole))
        failing = sum(map(is_errored, records(whole).values()))
        assert failing == {0.0: 0, 1.0: len(TASKS) * SEEDS}.get(rate, failing) and status == (4 if failing else 0)
        with monkeypatch.context() as m:
            crash_after(m, kill_after)
            assert cli(*PLAN, "--out", str(run)) == (130 if kill_after < len(TASKS) * SEEDS else status)
        index = run / "index.jsonl"
        data = index.read_bytes() if index.exists() else b""
        last = data[:-1].rfind(b"\n") + 1
        sealed = {eid for eid, _ in json.loads((run / "manifest.json").read_text())["episodes"]}
        if tear is not None and data and json.loads(data[last:])["episode_id"] not in sealed:
            # a kill during the line's write tore it (a line is sealed only once it is on disk)
            index.write_bytes(data[:last + min(tear, len(data) - last - 2)])
        assert cli(*PLAN, "--out", str(run), "--resume") == status
        assert logs(run) == logs(whole) and records(run) == records(whole)
        results = json.loads((run / "results.json").read_text())
        assert results["errored_episodes"] == failing
        assert results == json.loads((whole / "results.json").read_text())
        assert cli("verify", str(run)) == 0

        monkeypatch.setenv(VAR, f"{salt}:0")  # the provider is back
        assert cli(*PLAN, "--out", str(run), "--resume", "--retry-errors") == 0
        assert len(list((run / "retried").glob("*.retried"))) == failing if failing else not (run / "retried").exists()
        assert not any(is_errored(r) for r in records(run).values()) and cli("verify", str(run)) == 0
