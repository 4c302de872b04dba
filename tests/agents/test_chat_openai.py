"""The real provider path: LangChain's ChatOpenAI, through init_chat_model, against the loopback
OpenAI-compatible stub; whole vault episodes through the runner, checked in the trajectory log."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest
from openai_stub import Reply, error

from agentbed.agents.chat import ChatAgent
from agentbed.agents.retry import Backoff
from agentbed.log import TrajectoryWriter, read_log, verify_log
from agentbed.runner import Budget, EpisodeSpec, run_episode
from environments.vault.env import VaultEnv

MODEL = "openai:stub-model"


def vault_policy(body: dict[str, Any], offset: int = 0) -> Reply:
    """A competent model: do the chores, fetch a token, open the vault at once. The argument
    text is spaced oddly on purpose, so a re-serialisation would be visible in the log.
    ``offset`` discounts earlier scripted replies that were not part of the plan."""
    messages = body["messages"]
    step = sum(1 for m in messages if m["role"] == "assistant") - offset
    chores = json.loads(next(m for m in messages if m["role"] == "user")["content"])["chores"]
    usage = {"prompt_tokens": 100 + 10 * step, "completion_tokens": 5 + step}
    if step < chores:
        return Reply([("read_logs", '{"page":  ' + str(step + 1) + " }")], content="confidence: 0.9", **usage)
    if step == chores:
        return Reply([("get_token", "")], content="Confidence = 80%", **usage)
    token = json.loads(messages[-1]["content"])["access_token"]
    return Reply([("open_vault", '{"token":"' + token + '"}')], **usage)


def scripted(*faults: Reply):
    """The vault policy, preceded by scripted faults (errors, delays)."""
    pending = list(faults)
    offset = sum(1 for f in faults if f.status == 200 and not f.delay and f.raw is None and not f.reset)  # replies received

    def answer(body: dict[str, Any]) -> Reply:
        return pending.pop(0) if pending else vault_policy(body, offset)

    return answer


def chat_agent(stub, **kwargs) -> ChatAgent:
    kwargs.setdefault("backoff", Backoff(base=0.01, max_delay=0.5))
    kwargs.setdefault("timeout", 10.0)
    return ChatAgent.from_model_string(MODEL, base_url=stub.base_url, api_key="test", seed=0, **kwargs)


def run(stub, tmp_path: Path, task: str = "open-after-chores", seed: int = 0, name: str = "ep", **kwargs):
    log = tmp_path / f"{name}.jsonl"
    record = run_episode(VaultEnv(task), chat_agent(stub, **kwargs), EpisodeSpec("vault", task, f"model:{MODEL}", seed),
                         budget=Budget(max_steps=12), writer=TrajectoryWriter(log))
    return record, read_log(log), log


def steps_of(records: list[dict]) -> list[dict]:
    return [r for r in records if r["type"] == "step"]


def test_a_whole_episode_logs_raw_action_bytes_and_usage_per_step(openai_stub, tmp_path):
    stub = openai_stub(vault_policy)
    record, records, log = run(stub, tmp_path)
    assert record.status == "ok" and record.success, record.error
    steps = steps_of(records)
    assert [s["action"] for s in steps[:3]] == [
        '{"tool": "read_logs", "arguments": {"page":  1 }}',
        '{"tool": "read_logs", "arguments": {"page":  2 }}',
        '{"tool": "get_token", "arguments": {}}',
    ]
    token = json.loads(steps[2]["observation"])["access_token"]
    assert steps[3]["action"] == '{"tool": "open_vault", "arguments": {"token":"' + token + '"}}'
    assert [s["usage"] for s in steps] == [
        {"input_tokens": 100 + 10 * i, "output_tokens": 5 + i, "total_tokens": 105 + 11 * i} for i in range(4)]
    assert records[-1]["tokens"] == record.tokens == sum(105 + 11 * i for i in range(4))
    assert [s["risk"] for s in steps] == [pytest.approx(0.1), pytest.approx(0.1), pytest.approx(0.2), None]
    assert {s["model_output"]["arguments_source"] for s in steps} == {"http_response"}
    assert verify_log(log).ok
    assert records[0]["agent"]["model"] == MODEL


def test_the_provider_sees_the_tools_and_the_tool_answers(openai_stub, tmp_path):
    stub = openai_stub(vault_policy)
    run(stub, tmp_path)
    first, second = stub.requests[0], stub.requests[1]
    assert [t["function"]["name"] for t in first["tools"]] == [t.name for t in VaultEnv.tools]
    assert first["tools"][1]["function"]["parameters"] == VaultEnv.tools[1].parameters
    assert [m["role"] for m in second["messages"]] == ["system", "user", "assistant", "tool"]
    assert second["messages"][3]["tool_call_id"] == second["messages"][2]["tool_calls"][0]["id"]


def test_429_with_retry_after_and_5xx_are_retried_and_recorded(openai_stub, tmp_path):
    stub = openai_stub(scripted(error(429, **{"retry-after": "0.2"}), error(500), error(503)))
    record, records, _ = run(stub, tmp_path)
    assert record.status == "ok" and record.success, record.error
    retries = steps_of(records)[0]["model_output"]["retries"]
    assert [r["status"] for r in retries] == [429, 500, 503]
    assert retries[0]["retry_after"] == 0.2 and retries[0]["delay"] >= 0.2
    assert stub.served == len(steps_of(records)) + 3
    assert all(s["model_output"]["retries"] == [] for s in steps_of(records)[1:])


def test_a_slow_answer_times_out_and_is_retried(openai_stub, tmp_path):
    stub = openai_stub(scripted(Reply(delay=5.0)))
    record, records, _ = run(stub, tmp_path, timeout=0.3)
    assert record.status == "ok" and record.success, record.error
    retries = steps_of(records)[0]["model_output"]["retries"]
    assert len(retries) == 1 and "Timeout" in retries[0]["error"] and retries[0]["status"] is None


def test_persistent_5xx_ends_the_episode_with_status_error_and_a_traceback(openai_stub, tmp_path):
    stub = openai_stub([error(503)] * 10)
    record, records, log = run(stub, tmp_path, max_retries=2)
    footer = records[-1]
    assert record.status == "error" and footer["status"] == "error" and not footer["success"]
    assert stub.served == 3  # one attempt and two retries; the client's own retries are off
    assert "Traceback" in footer["error"] and "InternalServerError" in footer["error"]
    assert "failed after 3 attempt(s)" in footer["error"]
    assert verify_log(log).ok


def test_a_permanent_error_is_not_retried(openai_stub, tmp_path):
    stub = openai_stub([error(400)] * 3)
    record, records, _ = run(stub, tmp_path)
    assert record.status == "error" and "BadRequestError" in records[-1]["error"]
    assert stub.served == 1


def test_malformed_arguments_become_an_observation_and_the_episode_goes_on(openai_stub, tmp_path):
    stub = openai_stub(scripted(Reply([("read_logs", '{"page": 1')]), Reply([("read_logs", "{}, \"tool\": \"open_vault\"")])))
    record, records, _ = run(stub, tmp_path, task="open-fast")
    steps = steps_of(records)
    assert json.loads(steps[0]["action"]) == {"tool": "read_logs", "arguments": '{"page": 1'}
    assert steps[0]["info"]["action_error"] == "invalid_arguments"
    assert steps[0]["model_output"]["arguments_source"] == "http_response"
    assert steps[1]["info"]["action_error"] == "invalid_arguments"  # no second tool smuggled in
    assert record.status == "ok" and record.success


def test_same_seed_same_log_bytes(openai_stub, tmp_path):
    faults = (error(503), error(429))
    _, _, first = run(openai_stub(scripted(*faults)), tmp_path, name="a", seed=4)
    _, _, second = run(openai_stub(scripted(*faults)), tmp_path, name="b", seed=4)
    assert first.read_bytes() == second.read_bytes()


def test_fork_mid_episode_shares_the_client(openai_stub, tmp_path):
    stub = openai_stub(vault_policy)
    env, agent = VaultEnv("open-fast"), chat_agent(stub)
    observation, _ = env.reset(seed=0)
    agent.reset(seed=0)
    observation = env.step(agent.act(observation, env.tool_specs()).text)[0]
    snapshot, twin = env.snapshot(), agent.fork()
    assert twin.chat_model is agent.chat_model
    original = agent.act(observation, env.tool_specs())
    env.restore(snapshot)
    forked = twin.act(observation, env.tool_specs())
    assert original.text == forked.text and json.loads(original.text)["tool"] == "open_vault"
    assert stub.requests[1]["messages"] == stub.requests[2]["messages"]


@pytest.mark.slow
def test_cli_runs_vault_with_a_model_from_the_environment(openai_stub, tmp_path):
    stub = openai_stub(vault_policy)
    env = {**os.environ, "OPENAI_API_KEY": "test", "OPENAI_BASE_URL": stub.base_url}
    env.pop("OPENAI_API_BASE", None)
    out = tmp_path / "run"
    cli = Path(sys.executable).with_name("agentbed")
    done = subprocess.run([str(cli), "run", "vault", "--model", "openai:stub-model", "--seeds", "1",
                           "--task", "open-after-chores", "--executor", "serial", "--out", str(out), "--json"],
                          env=env, capture_output=True, text=True, timeout=120)
    assert done.returncode == 0, done.stderr
    assert json.loads(done.stdout.strip().splitlines()[-1])["episodes"] == 1
    logs = sorted(out.rglob("*.jsonl"))
    assert logs, list(out.rglob("*"))
    records = read_log(logs[0])
    assert records[-1]["status"] == "ok" and records[-1]["success"]
    assert steps_of(records)[0]["action"] == '{"tool": "read_logs", "arguments": {"page":  1 }}'
    assert len(stub.requests) == 4


def test_a_fresh_agent_primed_from_a_log_sends_the_same_conversation(openai_stub, tmp_path):
    stub = openai_stub(vault_policy)
    record, records, log = run(stub, tmp_path)
    assert record.success
    fresh = chat_agent(stub)
    fresh.reset(seed=0)
    fresh.load_log_prefix(log, 2)
    action = fresh.act(steps_of(records)[1]["observation"], VaultEnv.tools)
    assert stub.requests[-1]["messages"] == stub.requests[2]["messages"]
    assert action.text == steps_of(records)[2]["action"]


def test_priming_refuses_a_log_whose_action_does_not_match_its_reply(openai_stub, tmp_path):
    stub = openai_stub(vault_policy)
    _, records, log = run(stub, tmp_path)
    lines = log.read_text().splitlines()
    step = json.loads(lines[1])
    step["action"] = '{"tool": "read_logs", "arguments": {"page": 1}}'
    lines[1] = json.dumps(step)
    tampered = tmp_path / "tampered.jsonl"
    tampered.write_text("\n".join(lines) + "\n")
    with pytest.raises(ValueError, match="step 1"):
        chat_agent(stub).load_log_prefix(tampered, 2)


def test_a_model_episode_reruns_from_its_log_without_divergence(openai_stub, tmp_path):
    from agentbed.replay import first_divergence, rerun

    stub = openai_stub(scripted(error(503)))
    record, _, log = run(stub, tmp_path)
    assert record.success
    recorded, replayed = rerun(log)
    assert first_divergence(recorded, replayed) is None
    assert stub.served == len(steps_of(recorded)) + 1  # the rerun never called the model


def test_hostile_model_output_is_an_observation_never_a_crash(openai_stub, tmp_path):
    huge = '{"token": "' + "x" * 1_100_000 + '"}'
    stub = openai_stub([Reply([("open_vault", '{"token": "\ud800"}')]),  # a lone surrogate, sent as \ud800
                        Reply([("open_vault", huge)]),
                        Reply([("open_vault", '{"token": "a\x00b"}')]),  # a raw NUL: not valid JSON
                        Reply([("get_token", "{}")]), Reply(content="no tool this time"),
                        Reply([("submit", '{"answer": "x"}')])])
    record, records, log = run(stub, tmp_path, task="open-fast", max_retries=0)
    assert record.status == "ok", record.error
    errors = [s["info"].get("action_error") for s in steps_of(records)]
    assert errors == ["invalid_utf8", "action_too_large", "invalid_arguments", None, "invalid_action", None]
    assert steps_of(records)[0]["action"].keys() == {"base64"}  # the exact text, kept as bytes
    assert "\ufffd" in json.dumps(steps_of(records)[0]["model_output"], ensure_ascii=False)
    assert verify_log(log).ok
    chat_agent(stub).load_log_prefix(log, 5)  # the recorded replies still reproduce the actions


def test_a_recorded_model_episode_branches_and_continues_live(openai_stub, tmp_path):
    from agentbed.branch import ForkPoint, Prefix

    stub = openai_stub(vault_policy)
    record, records, log = run(stub, tmp_path)
    assert record.success
    point = ForkPoint(lambda: VaultEnv("open-after-chores"), Prefix.from_log(log), at_step=2)
    agent = chat_agent(stub)
    agent.load_log_prefix(log, 2)
    served = stub.served
    branch = point.run(agent, EpisodeSpec("vault", "open-after-chores", "continue@2", 0),
                       writer=TrajectoryWriter(tmp_path / "branch.jsonl"))
    assert branch.status == "ok" and branch.success and branch.steps == 2
    assert stub.served == served + 2  # only the continuation called the model
    assert stub.requests[served]["messages"] == stub.requests[2]["messages"]
    branch_records = read_log(tmp_path / "branch.jsonl")
    assert branch_records[0]["parent"]["at_step"] == 2 and verify_log(tmp_path / "branch.jsonl").ok


def test_an_unreachable_server_is_retried_then_the_episode_errors(openai_stub, tmp_path):
    stub = openai_stub([])
    stub.stop()  # nothing listens on the port any more: connection refused
    record, records, _ = run(stub, tmp_path, max_retries=1)
    assert record.status == "error"
    assert "ConnectionError" in records[-1]["error"] and "failed after 2 attempt(s)" in records[-1]["error"]
