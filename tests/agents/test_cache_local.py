"""The model-call cache in front of the real local model (llama.cpp on loopback, the session's
``local_model``): a second run of the same episode is answered from the cache with no request."""

from __future__ import annotations

from pathlib import Path

import httpx
import pytest

from agentbed.agents.cache import ModelCallCache
from agentbed.log import TrajectoryWriter, read_log
from agentbed.runner import Budget, EpisodeSpec, run_episode
from environments.vault.env import VaultEnv

pytestmark = [pytest.mark.local_model, pytest.mark.one_worker("local-model")]


def play(local_model, cache: ModelCallCache, log: Path) -> tuple[list[dict], int]:
    calls: list[str] = []
    client = httpx.Client(event_hooks={"request": [lambda request: calls.append(str(request.url))]})
    agent = local_model.agent(0, model_kwargs={"http_client": client})
    agent.cache = cache
    run_episode(VaultEnv("open-fast"), agent, EpisodeSpec("vault", "open-fast", agent.name, 0),
                budget=Budget(max_steps=1), writer=TrajectoryWriter(log))
    return read_log(log), len(calls)


def test_a_rerun_of_a_local_model_episode_makes_no_request(local_model, tmp_path):
    live, live_calls = play(local_model, ModelCallCache(tmp_path / "cache"), tmp_path / "live.jsonl")
    assert live_calls >= 1  # one step (the local model is slow on a shared machine); a retry adds one
    again, calls = play(local_model, ModelCallCache(tmp_path / "cache"), tmp_path / "again.jsonl")
    assert calls == 0
    assert [r for r in again if r["type"] == "step"] and again == live  # the same records, byte for byte
    assert (tmp_path / "again.jsonl").read_bytes() == (tmp_path / "live.jsonl").read_bytes()
