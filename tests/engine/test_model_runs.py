"""Model runs a researcher can trust, through the real LangChain OpenAI client and the loopback
OpenAI-compatible server: a failed provider is an error (never a score) with a problems block and
exit 4; many agents in one run with paired differences; generation settings reach the provider;
every model string and setting is checked before anything runs; progress on a pipe."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

sys.path.insert(0, str(Path(__file__).parents[1] / "agents"))

from openai_stub import error, stub_servers  # noqa: E402 - needs the path above
from scripted_models import vault_three_calls  # noqa: E402

from agentbed.cli import main  # noqa: E402
from agentbed.problems import classify, parse_allowance  # noqa: E402
from agentbed.testing import episode_bytes

MODEL = "openai:stub-model"


@pytest.fixture
def stub(monkeypatch):
    with stub_servers(monkeypatch, "test") as start:
        yield start


def run(*args: str) -> int:
    return main(["run", "vault", "--task", "open-fast", "--no-cache", *args])


def test_a_refused_key_is_an_error_never_a_score_with_a_problems_block_and_exit_4(stub, tmp_path, capsys):
    server = stub(lambda body: error(401))
    out = tmp_path / "run"
    assert run("--model", MODEL, "--seeds", "3", "--out", str(out)) == 4
    err = capsys.readouterr().err
    assert "problems: 3 of 3 episodes errored" in err
    assert err.count("authentication: 3 episodes") == 1 and "OPENAI_API_KEY" in err
    assert "--retry-errors" in err
    summary = json.loads((out / "vault" / "summary.json").read_text())
    assert summary["errors"]["episodes"] == 3 and summary["errors"]["problems"][0]["kind"] == "authentication"
    assert not [h for h in summary["headline"] if h["metric"] == "pass_rate"]  # no rate of 0.000 from errors
    results = json.loads((out / "results.json").read_text())
    assert results["errored_episodes"] == 3 and results["metrics"] == []
    assert server.served == 3  # a 401 is not retried
    assert main(["gate", str(out), "--baseline", "baselines/vault.json"]) == 1
    assert "3 of 3 episodes errored (authentication 3)" in capsys.readouterr().out
    from agentbed.report.rundir import load_run

    problems = [p.message for p in load_run(out).problems]
    assert any("3 episodes errored: authentication" in m and "OPENAI_API_KEY" in m for m in problems)


def test_allow_errors_accepts_a_count_or_a_share(stub, tmp_path, capsys):
    stub(lambda body: error(401))
    assert run("--model", MODEL, "--seeds", "2", "--out", str(tmp_path / "a"), "--allow-errors", "2") == 0
    assert run("--model", MODEL, "--seeds", "2", "--out", str(tmp_path / "b"), "--allow-errors", "50%") == 4
    assert "authentication" in capsys.readouterr().err
    assert parse_allowance("0.05") == 0.05 and parse_allowance("3") == 3


def test_server_errors_after_the_retries_and_a_dead_endpoint_are_named(stub, tmp_path, capsys, monkeypatch):
    stub(lambda body: error(503))
    from agentbed.agents.retry import Backoff

    monkeypatch.setattr(Backoff, "delay", lambda self, attempt, rng, retry_after=None: 0.0)  # retries at once
    assert run("--model", MODEL, "--seeds", "1", "--out", str(tmp_path / "a"), "--quiet") == 4
    assert "server_error: 1 episodes" in capsys.readouterr().err
    monkeypatch.setenv("OPENAI_BASE_URL", "http://127.0.0.1:9/v1")  # nothing listens on the discard port
    assert run("--model", MODEL, "--seeds", "1", "--out", str(tmp_path / "b"), "--quiet") == 4
    assert "connection: 1 episodes" in capsys.readouterr().err


def test_scripted_agents_and_several_models_share_one_run_with_paired_differences(stub, tmp_path, capsys):
    server = stub(vault_three_calls)
    out = tmp_path / "run"
    assert run("--agent", "oracle,naive", "--model", MODEL, "--model", "openai:stub-b", "--seeds", "2",
               "--out", str(out), "--reference", "naive", "--json") == 0
    doc = json.loads(capsys.readouterr().out)
    assert doc["format"] == "agentbed.cli/1" and doc["command"] == "run" and doc["errored_episodes"] == 0
    meta = json.loads((out / "run.json").read_text())
    assert meta["agents"] == ["oracle", "naive", f"model:{MODEL}", "model:openai:stub-b"]
    assert meta["reference"] == "naive"
    summary = json.loads((out / "vault" / "summary.json").read_text())
    diffs = {h["agent"]: h for h in summary["headline"] if h["metric"] == "success_minus_reference"}
    assert set(diffs) == {"oracle", f"model:{MODEL}", "model:openai:stub-b"}
    assert all(h["reference"] == "naive" and h["n"] == 2 for h in diffs.values())
    assert {r["model"] for r in server.requests} == {"stub-model", "stub-b"}


@pytest.mark.parametrize("args, message", [
    (["--model", "openai:x?temperature=0.7"], "is for local: models only"),
    (["--model", "nosuchprovider:x"], "unknown provider 'nosuchprovider'"),
    (["--model", f"{MODEL},"], "an empty name"),
    (["--model", MODEL, "--model", MODEL], "is given twice"),
    (["--model", MODEL, "--reference", "ghost"], "--reference 'ghost': not an agent"),
    (["--model", MODEL, "-M", "no_such_setting=1"], "has no generation setting 'no_such_setting'"),
    (["--model", MODEL, "--temperature", "-1"], "--temperature must be between 0 and 1000000000, not -1.0"),
    (["--model", MODEL, "-M", "temperature=hot"], "temperature"),
    (["--model", MODEL, "--max-tokens-per-call", "0"], "--max-tokens-per-call 0"),
    (["--agent", "oracle", "--temperature", "0.5"], "give --model"),
    (["--model", MODEL, "--allow-errors", "lots"], "--allow-errors 'lots'"),
    (["--model", MODEL, "--limit", "0"], "--limit must be at least 1"),
    (["--model", MODEL, "--timeout", "0"], "--timeout must be a number of seconds above 0"),
    (["--model", MODEL, "--timeout", "nan"], "--timeout must be a finite number"),
])
def test_every_model_string_and_setting_is_checked_before_anything_runs(stub, tmp_path, capsys, args, message):
    server = stub(vault_three_calls)
    out = tmp_path / "run"
    assert run(*args, "--out", str(out)) == 2
    err = capsys.readouterr().err
    assert message in err and err.count("\n") == 1, err
    assert server.served == 0 and not (out / "index.jsonl").exists()


def test_generation_settings_reach_the_provider_and_are_recorded(stub, tmp_path, capsys):
    server = stub(vault_three_calls)
    out = tmp_path / "run"
    assert run("--model", MODEL, "--seeds", "1", "--temperature", "0.3", "--max-tokens-per-call", "50",
               "-M", "top_p=0.9", "--out", str(out), "--quiet") == 0
    assert all(r["temperature"] == 0.3 and r["top_p"] == 0.9 and r.get("max_tokens", r.get("max_completion_tokens"))
               == 50 for r in server.requests)
    meta = json.loads((out / "run.json").read_text())
    assert meta["generation"] == {"max_tokens": 50, "temperature": 0.3, "top_p": 0.9}
    header = json.loads((next((out / "episodes").glob("*.jsonl"))).read_text().splitlines()[0])
    assert header["agent"]["generation"] == meta["generation"]
    assert run("--resume", "--out", str(out), "--temperature", "0.4") == 2
    assert "field 'generation'" in capsys.readouterr().err


def test_limit_runs_the_first_planned_episodes_and_resume_finishes_the_rest(tmp_path):
    out = tmp_path / "run"
    assert main(["run", "vault", "--agent", "oracle", "--seeds", "3", "--limit", "2", "--out", str(out),
                 "--quiet"]) == 0
    assert len((out / "index.jsonl").read_text().splitlines()) == 2
    assert main(["run", "vault", "--out", str(out), "--resume", "--quiet"]) == 0
    assert len((out / "index.jsonl").read_text().splitlines()) == 3 * len(json.loads((out / "run.json")
                                                                                     .read_text())["tasks"])


def test_progress_on_a_pipe_prints_done_total_errors_tokens_cost_and_eta(stub, tmp_path):
    server = stub(vault_three_calls)
    cmd = [sys.executable, "-m", "agentbed.cli", "run", "vault", "--task", "open-fast", "--model", MODEL,
           "--seeds", "2", "--no-cache", "--out", str(tmp_path / "run")]
    env = {**__import__("os").environ, "OPENAI_BASE_URL": server.base_url, "OPENAI_API_KEY": "test"}
    done = subprocess.run(cmd, capture_output=True, text=True, timeout=120, env=env)
    assert done.returncode == 0, done.stderr
    lines = [line for line in done.stderr.splitlines() if line.startswith("agentbed: episodes")]
    assert lines[0].startswith("agentbed: episodes 0/2, 0 errored"), "a first line once the plan is known"
    last = lines[-1]
    assert "2/2" in last and "0 errored" in last and "tokens" in last and "$" in last and "done" in last


def test_classify_reads_the_kinds_of_provider_failure():
    assert classify("openai.AuthenticationError: Error code: 401 - {...}").name == "authentication"
    assert classify("openai.RateLimitError: Error code: 429").name == "rate_limit"
    assert classify("openai.BadRequestError: ... context_length_exceeded ...").name == "context_overflow"
    assert classify("openai.APIConnectionError: Connection error.").name == "connection"
    assert classify("ValueError: the world broke").name == "other"
    assert classify("TaskError: task 'tinydb': repository not fetched; run scripts/fetch-repos tinydb").name == "setup"
    assert classify("Traceback (most recent call last):\n  File x\nKeyError: 'scripts/x'").name == "other"


def test_two_concurrent_runs_sharing_a_cache_rerun_byte_identical_with_no_call(stub, tmp_path):
    """A model that answers the same request differently each time (a counter in its text): two runs
    at once on one cache directory race for the same keys; each run's logs must still be what its
    cached rerun writes, with no call to the provider."""
    import itertools
    import os

    draws = itertools.count()

    def varying(body):
        reply = vault_three_calls(body)
        reply.content = f"confidence: 0.{next(draws) % 9 + 1}"
        reply.ident = None
        return reply

    server = stub(varying)
    env = {**os.environ, "OPENAI_BASE_URL": server.base_url, "OPENAI_API_KEY": "test"}
    cache = tmp_path / "cache"

    def start(out: Path) -> subprocess.Popen:
        return subprocess.Popen([sys.executable, "-m", "agentbed.cli", "run", "vault", "--task", "open-fast",
                                 "--model", MODEL, "--seeds", "2", "--cache-dir", str(cache), "--out", str(out),
                                 "--quiet"], env=env, stderr=subprocess.PIPE, text=True)

    first = [start(tmp_path / "a"), start(tmp_path / "b")]
    for proc in first:
        assert proc.wait(timeout=120) == 0, proc.stderr.read()
    served = server.served
    for name in ("a", "b"):
        assert main(["run", "vault", "--task", "open-fast", "--model", MODEL, "--seeds", "2", "--cache-dir",
                     str(cache), "--out", str(tmp_path / f"{name}-again"), "--quiet"]) == 0
        for log in sorted((tmp_path / name / "episodes").glob("*.jsonl")):
            assert episode_bytes(tmp_path / f"{name}-again" / "episodes" / log.name) == episode_bytes(log)
        usage = [json.loads(line)["usage"] for line in (tmp_path / f"{name}-again" / "index.jsonl").read_text()
                 .splitlines()]
        assert all(u["calls"] == u["cached_calls"] > 0 for u in usage)
    assert server.served == served, "a cached rerun called the provider"


def test_resume_retry_errors_reruns_exactly_the_errored_episodes_and_keeps_their_logs(stub, tmp_path, capsys):
    failing = {"on": True}
    server = stub(lambda body: error(401) if failing["on"] else vault_three_calls(body))
    out = tmp_path / "run"
    assert run("--agent", "oracle", "--model", MODEL, "--seeds", "2", "--out", str(out), "--quiet") == 4
    oracle_lines = [line for line in (out / "index.jsonl").read_text().splitlines() if '"oracle"' in line]
    failing["on"] = False
    assert run("--resume", "--retry-errors", "--out", str(out), "--quiet") == 0
    assert "2 errored episodes set aside" in capsys.readouterr().err
    records = [json.loads(line) for line in (out / "index.jsonl").read_text().splitlines()]
    assert len(records) == 4 and all(r["status"] == "ok" for r in records)
    assert [line for line in (out / "index.jsonl").read_text().splitlines() if '"oracle"' in line] == oracle_lines
    assert len(list((out / "retried").glob("*.jsonl.retried"))) == 2 and server.served == 2 + 6
    assert main(["verify", str(out)]) == 0
    assert run("--out", str(out), "--retry-errors") == 2  # needs --resume
