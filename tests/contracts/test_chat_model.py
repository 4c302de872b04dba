"""A task run by the LangChain chat agent through the real OpenAI client (``--model``), against the
loopback OpenAI-compatible stub from tests/agents: the raw argument text the model produced is
what gets graded, byte for byte."""

from __future__ import annotations

import json
import sys
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).parents[1] / "agents"))

from openai_stub import OpenAIStub, Reply  # noqa: E402 - the shared stub lives beside the chat tests

from agentbed.agents.chat import ChatAgent  # noqa: E402
from agentbed.runner import Budget, EpisodeSpec, run_episode  # noqa: E402
from environments.contracts.env import ContractEnv  # noqa: E402

MODEL = "openai:stub-model"


def s3_policy(corrupt: bool):
    def answer(body: dict[str, Any]) -> Reply:
        messages = body["messages"]
        if not any(m["role"] == "tool" for m in messages):
            return Reply([("presign_get", "{}")])
        answer = json.loads(messages[-1]["content"])["body"]
        if "url" not in answer:  # the download was refused: give up
            return Reply([("end_task", '{"reason": "download refused"}')])
        url = answer["url"]
        if corrupt:  # the model "wraps" the URL: an escaped newline inside the JSON string
            url = url[:70] + "\\n" + url[70:]
        return Reply([("download", '{"url": "' + url + '"}')])

    return answer


def run_with_stub(corrupt: bool) -> Any:
    stub = OpenAIStub(s3_policy(corrupt))
    stub.start()
    try:
        agent = ChatAgent.from_model_string(MODEL, base_url=stub.base_url, api_key="test", seed=0, timeout=10.0)
        spec = EpisodeSpec("contracts", "s3-get-basic", f"model:{MODEL}", 0)
        return run_episode(ContractEnv("s3-get-basic"), agent, spec, budget=Budget(max_steps=6)), stub
    finally:
        stub.stop()


def test_chat_agent_passes_with_exact_bytes_and_sees_the_tool_schemas():
    record, stub = run_with_stub(corrupt=False)
    assert record.status == "ok" and record.success, (record.labels, record.error)
    names = {t["function"]["name"] for t in stub.requests[0]["tools"]}
    assert {"presign_get", "download", "read_logs", "run_job", "wait", "end_task"} <= names


def test_chat_agent_newline_in_the_raw_arguments_is_graded_whitespace_and_curl_refuses_it():
    record, _ = run_with_stub(corrupt=True)
    assert record.status == "ok" and not record.success, record.error
    assert record.labels == ["GOAL_NOT_MET", "WHITESPACE"] and not record.metrics["integrity_issuer"]


def test_chat_agent_runs_every_task_with_the_tools_bound():
    from environments.contracts.env import ContractEnv as Env

    stub = OpenAIStub(lambda body: Reply([("end_task", '{"reason": "stub"}')]))
    stub.start()
    try:
        agent = ChatAgent.from_model_string(MODEL, base_url=stub.base_url, api_key="test", seed=0, timeout=10.0)
        for spec in Env.task_list():
            env = Env(spec.id)
            record = run_episode(env, agent, EpisodeSpec("contracts", spec.id, f"model:{MODEL}", 0),
                                 budget=Budget(max_steps=3))
            assert record.status == "ok" and record.labels == ["GOAL_NOT_MET"], (spec.id, record.error)
            bound = {t["function"]["name"] for t in stub.requests[-1]["tools"]}
            assert bound == {t.name for t in env.tools}, spec.id
    finally:
        stub.stop()
