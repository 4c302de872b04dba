"""A model's episode in the viewer: the real ChatOpenAI client against the loopback stub, run by
`agentbed run --model`; the transcript shows the model's reply, its tool call, tokens and cost."""

from __future__ import annotations

import hashlib
import json

from openai_stub import OpenAIStub
from test_chat_openai import vault_policy

from agentbed.agents.chat import DEFAULT_SYSTEM_PROMPT
from agentbed.cli import main
from agentbed.log import read_log, verify_log_file
from agentbed.testing import episode_bytes

from .conftest import serve


def test_a_model_episode_shows_replies_tokens_and_cost(tmp_path, monkeypatch):
    stub = OpenAIStub(vault_policy)
    stub.start()
    try:
        monkeypatch.setenv("OPENAI_API_KEY", "test")
        monkeypatch.setenv("OPENAI_BASE_URL", stub.base_url)
        monkeypatch.delenv("OPENAI_API_BASE", raising=False)
        runs = tmp_path / "runs"
        assert main(["run", "vault", "--model", "openai:gpt-4o-mini", "--seeds", "1", "--task", "open-after-chores",
                     "--executor", "serial", "--quiet", "--no-cache", "--out", str(runs / "model")]) == 0
    finally:
        stub.stop()
    for client in serve(runs):
        _, listing = client.get("/api/runs")
        (run,) = listing["runs"]
        assert run["cost"] is not None and run["cost"] > 0  # 4 calls at the shipped gpt-4o-mini price
        _, doc = client.get("/api/episodes?run=model")
        (row,) = doc["rows"]
        _, episode = client.get(f"/api/episode?run=model&episode={row['id']}")
    steps = episode["transcript"]["steps"]
    assert [s["tool_call"]["tool"] for s in steps] == ["read_logs", "read_logs", "get_token", "open_vault"]
    first = steps[0]
    assert first["usage"]["input_tokens"] == 100 and first["usage"]["output_tokens"] == 5
    assert first["cost"] is not None and first["cost"] > 0
    reply = next(m for m in first["messages"] if m["role"] == "assistant")
    assert "confidence: 0.9" in reply["content"] and reply["tool_calls"]
    assert episode["transcript"]["header"]["agent"]["system_prompt_sha256"]


def test_the_system_prompt_text_is_in_the_chain_the_transcript_and_replay(tmp_path, monkeypatch, capsys):
    """The log records the prompt's text once, in the first step's model output (inside the hash
    chain); the viewer's transcript and `replay` show it; `replay --rerun` is identical, and a
    second run with the same replies writes the same bytes."""
    runs = tmp_path / "runs"
    monkeypatch.setenv("OPENAI_API_KEY", "test")
    monkeypatch.delenv("OPENAI_API_BASE", raising=False)
    for name in ("model", "again"):  # a fresh stub each time: the same replies, the same response ids
        stub = OpenAIStub(vault_policy)
        stub.start()
        try:
            monkeypatch.setenv("OPENAI_BASE_URL", stub.base_url)
            assert main(["run", "vault", "--model", "openai:gpt-4o-mini", "--seeds", "1", "--task",
                         "open-after-chores", "--executor", "serial", "--quiet", "--no-cache",
                         "--out", str(runs / name)]) == 0
        finally:
            stub.stop()
    (log,) = (runs / "model" / "episodes").glob("*.jsonl")
    records = read_log(log)
    steps = [r for r in records if r["type"] == "step"]
    assert steps[0]["model_output"]["system_prompt"] == DEFAULT_SYSTEM_PROMPT
    assert all("system_prompt" not in s["model_output"] for s in steps[1:])  # once per episode
    sha = hashlib.sha256(DEFAULT_SYSTEM_PROMPT.encode()).hexdigest()
    assert records[0]["agent"]["system_prompt_sha256"] == sha
    assert verify_log_file(log).ok  # the chain covers it, and the schema accepts it
    assert episode_bytes(runs / "again" / "episodes" / log.name) == episode_bytes(log)
    for client in serve(runs):
        _, doc = client.get("/api/episodes?run=model")
        (row,) = doc["rows"]
        _, episode = client.get(f"/api/episode?run=model&episode={row['id']}")
    transcript = episode["transcript"]
    assert transcript["system_prompt"] == DEFAULT_SYSTEM_PROMPT
    assert transcript["steps"][0]["system_prompt"] == DEFAULT_SYSTEM_PROMPT
    capsys.readouterr()
    assert main(["replay", str(log)]) == 0
    shown = " ".join(capsys.readouterr().out.split())
    assert "system prompt (sent from step 1)" in shown and " ".join(DEFAULT_SYSTEM_PROMPT.split())[:60] in shown
    assert main(["replay", str(log), "--json"]) == 0
    assert json.loads(capsys.readouterr().out)["system_prompt"] == DEFAULT_SYSTEM_PROMPT
    assert main(["replay", str(log), "--rerun"]) == 0
    assert capsys.readouterr().out.strip() == "identical"
