"""A model's episode in the viewer: the real ChatOpenAI client against the loopback stub, run by
`agentbed run --model`; the transcript shows the model's reply, its tool call, tokens and cost."""

from __future__ import annotations

from openai_stub import OpenAIStub
from test_chat_openai import vault_policy

from agentbed.cli import main

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
