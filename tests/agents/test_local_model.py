"""The local model end to end, against the real llama.cpp server (the session's ``local_model``):
the bytes the environment and its grader receive are the bytes the server sent, usage is the
server's count, the log verifies and reruns identically (a vault episode; contracts has its own in
tests/contracts/test_local_model.py). Asserts on the pipeline, never on the score."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import httpx
import pytest

from agentbed.agents.chat import ChatAgent
from agentbed.agents.local.profile import LocalProfile
from agentbed.log import TrajectoryWriter, read_log, verify_log
from agentbed.replay import first_divergence, rerun
from agentbed.runner import Budget, EpisodeSpec, run_episode
from environments.vault.env import VaultEnv

# a busy 2-core machine decodes at a few tokens per second: no test here is about speed
pytestmark = [pytest.mark.local_model, pytest.mark.timeout(1800)]
# enough for vault's and TOTP's short actions; the tests check the pipeline, not the play
CAP = 32


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


def grader_inputs(env) -> list[str]:
    """The raw action text of every tool call the environment executed (what its grader reads)."""
    seen: list[str] = []
    execute = env.call_tool

    def recording(call):
        seen.append(call.raw)
        return execute(call)

    env.call_tool = recording
    return seen


def play(env, agent, tmp_path: Path, name: str, suite: str, max_steps: int = 3):
    log = tmp_path / f"{name}.jsonl"
    spec = EpisodeSpec(suite, env.task.id, agent.name, 0)
    record = run_episode(env, agent, spec, budget=Budget(max_steps=max_steps), writer=TrajectoryWriter(log))
    return record, read_log(log), log


def steps_of(records: list[dict]) -> list[dict]:
    return [r for r in records if r["type"] == "step"]


def check_pipeline(records: list[dict], log: Path, wire: Wire, executed: list[str], model: str) -> None:
    """The log holds the server's bytes and counts, the grader saw those bytes, the log verifies
    and reruns identically (through the CLI, as a user would)."""
    steps = steps_of(records)
    assert steps and len(steps) == len(wire.bodies)
    sent = [body["choices"][0]["message"]["content"] for body in wire.bodies]
    for step, body, text in zip(steps, wire.bodies, sent, strict=True):
        assert step["action"] == text  # the environment got the server's bytes
        usage = body["usage"]
        assert step["usage"] == {"input_tokens": usage["prompt_tokens"], "output_tokens": usage["completion_tokens"],
                                 "total_tokens": usage["total_tokens"]}
        assert step["model_output"]["arguments_source"] == "content"
        assert step["model_output"]["finish_reason"] == body["choices"][0]["finish_reason"]
    assert executed == [t for t, s in zip(sent, steps, strict=True) if not s["info"].get("action_error")]
    assert records[-1]["tokens"] == sum(b["usage"]["total_tokens"] for b in wire.bodies)
    assert records[0]["agent"]["model"] == model
    assert verify_log(log).ok
    recorded, replayed = rerun(log)
    assert first_divergence(recorded, replayed) is None
    done = subprocess.run([sys.executable, "-m", "agentbed.cli", "replay", str(log), "--rerun"],
                          capture_output=True, text=True, timeout=300)
    assert done.returncode == 0 and done.stdout.strip() == "identical", done.stdout + done.stderr


def test_a_vault_episode_carries_the_servers_bytes_and_counts(local_model, tmp_path):
    wire, env = Wire(), VaultEnv("open-fast")
    executed = grader_inputs(env)
    record, records, log = play(env, wired_agent(local_model, wire, max_tokens=CAP), tmp_path, "vault", "vault")
    assert record.status != "error", record.error
    check_pipeline(records, log, wire, executed, local_model.model)
    assert records[0]["agent"]["reply_format"]["max_tokens"] == CAP


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
