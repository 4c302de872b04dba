"""The local profile's reply format (the action is the reply's text) through priming and replay,
driven through the real ChatOpenAI client against the loopback stub: a conversation primed from
a log is the one recorded, system prompt and tool menu included, and an edited action diverges
in ``step.action``. (The real llama.cpp server plays the same format in test_local_model.py.)"""

from __future__ import annotations

import json
from typing import Any

from bad_input_corpus import rechain
from openai_stub import Reply

from agentbed.agents.chat import ChatAgent
from agentbed.agents.local.profile import COMPACT_PROMPT
from agentbed.log import TrajectoryWriter, read_log
from agentbed.replay import first_divergence, rerun
from agentbed.runner import Budget, EpisodeSpec, run_episode
from environments.vault.env import VaultEnv

MODEL = "local:gemma-3-270m"
TASK = "open-after-chores"


def content_policy(body: dict[str, Any]) -> Reply:
    """The vault in the local format: the action as JSON text, oddly spaced so that any
    re-serialisation would show."""
    messages = body["messages"]
    step = sum(1 for m in messages if m["role"] == "assistant")
    first = next(m for m in messages if m["role"] == "user")["content"]
    chores = json.loads(first.split("\n\n")[0])["chores"]
    if step < chores:
        return Reply(content='{"tool": "read_logs",  "arguments": {"page": ' + str(step + 1) + "}}")
    if step == chores:
        return Reply(content='{"tool":"get_token","arguments":{}}')
    token = json.loads(messages[-1]["content"].split("\n\n")[-1])["access_token"]
    return Reply(content='{"tool": "open_vault", "arguments": {"token": "' + token + '"}}')


def local_agent(stub) -> ChatAgent:
    return ChatAgent.from_model_string(MODEL, base_url=stub.base_url, seed=0, timeout=10.0)


def recorded_episode(stub, tmp_path):
    log = tmp_path / "local.jsonl"
    record = run_episode(VaultEnv(TASK), local_agent(stub), EpisodeSpec("vault", TASK, f"model:{MODEL}", 0),
                         budget=Budget(max_steps=12), writer=TrajectoryWriter(log))
    assert record.status == "ok" and record.success, record.error
    return log, [r for r in read_log(log) if r["type"] == "step"]


def test_a_primed_local_agent_sends_the_recorded_conversation_with_its_system_prompt(openai_stub, tmp_path):
    stub = openai_stub(content_policy)
    log, steps = recorded_episode(stub, tmp_path)
    assert stub.requests[2]["messages"][0]["role"] == "system"
    assert stub.requests[2]["messages"][0]["content"].startswith(COMPACT_PROMPT)
    # the log holds the prompt as sent, tool menu included, with the first call only
    assert steps[0]["model_output"]["system_prompt"] == stub.requests[0]["messages"][0]["content"]
    assert "open_vault" in steps[0]["model_output"]["system_prompt"]
    assert all("system_prompt" not in s["model_output"] for s in steps[1:])
    fresh = local_agent(stub)
    fresh.load_log_prefix(log, 2)
    action = fresh.act(steps[1]["observation"], VaultEnv.tools)
    assert stub.requests[-1]["messages"] == stub.requests[2]["messages"]
    assert action.text == steps[2]["action"]


def test_a_local_agent_reused_after_an_episode_is_primed_with_the_new_episodes_prompt(openai_stub, tmp_path):
    stub = openai_stub(content_policy)
    log, steps = recorded_episode(stub, tmp_path)
    agent = local_agent(stub)
    run_episode(VaultEnv("open-fast"), agent, EpisodeSpec("vault", "open-fast", f"model:{MODEL}", 1),
                budget=Budget(max_steps=12))
    agent.load_log_prefix(log, 2)
    agent.act(steps[1]["observation"], VaultEnv.tools)
    assert stub.requests[-1]["messages"] == stub.requests[2]["messages"]


def test_an_edited_local_action_diverges_in_the_action(openai_stub, tmp_path):
    stub = openai_stub(content_policy)
    log, _ = recorded_episode(stub, tmp_path)
    assert first_divergence(*rerun(log)) is None
    records = [json.loads(line) for line in log.read_text().splitlines()]
    step = next(r for r in records if r.get("type") == "step" and r["i"] == 1)
    step["action"] = step["action"].replace('"tool": "read_logs",  ', '"tool": "read_logs", ')  # whitespace only
    log.write_bytes(rechain(records))
    served = stub.served
    divergence = first_divergence(*rerun(log))
    assert divergence is not None and divergence.step == 1 and divergence.field == "step.action", divergence
    assert stub.served == served  # the rerun never called the model


def test_reseeded_forks_send_their_own_seed_so_resamples_are_draws(openai_stub, tmp_path):
    """Defer-to-resample and branching fork a chat agent and reseed each fork: a reply format that
    sends the sampler's seed (llama.cpp) must send the fork's, or k resamples are one draw k times
    (the local model's dtr always deferred); the same reseed sends the same seed again."""
    from agentbed.agents.cache import ModelCallCache

    stub = openai_stub(content_policy)
    agent = local_agent(stub)
    agent.cache = ModelCallCache(tmp_path / "cache")
    env = VaultEnv(TASK)
    observation, _ = env.reset(seed=0)
    agent.reset(seed=0, task=TASK)
    agent.act(observation, list(env.tools))
    assert stub.requests[-1]["seed"] == 0
    sent = []
    for rollout in (7, 8, 7):
        fork = agent.fork()
        fork.reseed(rollout)
        fork.act(observation, list(env.tools))
        sent.append(stub.requests[-1]["seed"])
    assert 0 != sent[0] != sent[1] and len(stub.requests) == 3  # rollout 7 again: the cache's answer, same key
    agent.act(observation, list(env.tools))  # the original is untouched by its forks' reseeds
    assert stub.requests[-1]["seed"] == 0
