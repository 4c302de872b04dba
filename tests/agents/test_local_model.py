"""The local model end to end, against the real llama.cpp server (the session's ``local_model``):
the bytes the environment and its grader receive are the bytes the server sent, usage is the
server's count, the log verifies and reruns identically. Asserts on the pipeline, never on the
score (a 270M base model passes what it passes)."""

from __future__ import annotations

import json
from pathlib import Path

import httpx
import pytest

from agentbed.agents.chat import ChatAgent
from agentbed.agents.local.profile import LocalProfile
from agentbed.log import TrajectoryWriter, read_log, verify_log
from agentbed.replay import first_divergence, rerun
from agentbed.runner import Budget, EpisodeSpec, run_episode
from environments.vault.env import VaultEnv

pytestmark = pytest.mark.local_model


class Wire:
    """The chat-completion bodies exactly as the server sent them (an httpx response hook)."""

    def __init__(self) -> None:
        self.bodies: list[dict] = []

    def client(self) -> httpx.Client:
        def keep(response: httpx.Response) -> None:
            if response.request.url.path.endswith("/chat/completions"):
                response.read()
                self.bodies.append(json.loads(response.content))

        return httpx.Client(event_hooks={"response": [keep]})


def wired_agent(local_model, wire: Wire, seed: int = 0, **profile) -> ChatAgent:
    return local_model.agent(seed, model_kwargs={"http_client": wire.client()}, **profile)


def play(env, agent, tmp_path: Path, name: str, max_steps: int = 4, suite: str = "vault"):
    log = tmp_path / f"{name}.jsonl"
    spec = EpisodeSpec(suite, env.task.id, agent.name, 0)
    record = run_episode(env, agent, spec, budget=Budget(max_steps=max_steps), writer=TrajectoryWriter(log))
    return record, read_log(log), log


def steps_of(records: list[dict]) -> list[dict]:
    return [r for r in records if r["type"] == "step"]


def test_a_vault_episode_carries_the_servers_bytes_and_counts(local_model, tmp_path):
    wire = Wire()
    record, records, log = play(VaultEnv("open-fast"), wired_agent(local_model, wire), tmp_path, "vault")
    assert record.status == "ok", record.error
    steps = steps_of(records)
    assert steps and len(steps) == len(wire.bodies)
    for step, body in zip(steps, wire.bodies, strict=True):
        assert step["action"] == body["choices"][0]["message"]["content"]  # the env got the server's bytes
        usage = body["usage"]
        assert step["usage"] == {"input_tokens": usage["prompt_tokens"], "output_tokens": usage["completion_tokens"],
                                 "total_tokens": usage["total_tokens"]}
        assert step["model_output"]["arguments_source"] == "content"
        assert step["model_output"]["finish_reason"] == body["choices"][0]["finish_reason"]
    assert records[-1]["tokens"] == sum(b["usage"]["total_tokens"] for b in wire.bodies)
    assert records[0]["agent"]["model"] == local_model.model
    assert records[0]["agent"]["reply_format"]["max_tokens"] == LocalProfile().max_tokens
    assert verify_log(log).ok
    recorded, replayed = rerun(log)
    assert first_divergence(recorded, replayed) is None


def test_the_request_is_the_compact_profile(local_model, tmp_path):
    """What the server is asked: the token cap, the tool menu in the prompt, the grammar over it."""
    seen: list[dict] = []

    def keep(request: httpx.Request) -> None:
        seen.append(json.loads(request.content))

    agent = local_model.agent(model_kwargs={"http_client": httpx.Client(event_hooks={"request": [keep]})})
    env = VaultEnv("open-fast")
    observation, _ = env.reset(seed=0)
    agent.reset(seed=0)
    agent.act(observation, env.tool_specs())
    body = seen[0]
    assert "tools" not in body and body["max_completion_tokens"] == LocalProfile().max_tokens
    assert [m["role"] for m in body["messages"]] == ["system", "user"]
    assert all(f"- {t.name}(" in body["messages"][0]["content"] for t in env.tool_specs())
    options = body["response_format"]["json_schema"]["schema"]["anyOf"]
    assert [o["properties"]["tool"]["const"] for o in options] == [t.name for t in env.tool_specs()]
    assert options[3]["properties"]["arguments"] == env.tool_specs()[3].parameters
