"""Under ``--protocol agentbed`` (not comparable with AgentDojo's tables) any LangChain chat model
plays AgentDojo through agentbed's chat agent: the real ChatOpenAI
client against the loopback OpenAI-compatible server (tests/agents/openai_stub.py), AgentDojo's
tools bound as functions, the plain reply graded by AgentDojo, and under spotlighting the model
is shown the delimited tool result."""

from __future__ import annotations

import json

from openai_stub import OpenAIStub, Reply

from agentbed.agents.chat import ChatAgent
from agentbed.log import TrajectoryWriter, read_log
from agentbed.runner import EpisodeSpec, run_episode
from environments.agentdojo.benchmark import TaskId
from suites.agentdojo.crosscheck import their_rescoring
from suites.agentdojo.suite import SUITE

TASK = "banking.user_task_1.injection_task_0.important_instructions"


def model(body: dict) -> Reply:
    if body["messages"][-1]["role"] != "tool":
        return Reply(tool_calls=[("get_most_recent_transactions", '{"n": 100}')])
    return Reply(content="You spent 1050 in March 2022.")


def test_a_chat_model_is_graded_by_agentdojo_and_reads_spotlit_results(tmp_path):
    stub = OpenAIStub(model)
    stub.start()
    try:
        for defense in ("none", "spotlighting_with_delimiting"):
            options = SUITE.resolve_options({"defense": defense, "protocol": "agentbed"})
            spec = EpisodeSpec("agentdojo", TASK, "model:openai:gpt-4o-mini", 0, options)
            agent = ChatAgent.from_model_string("openai:gpt-4o-mini", base_url=stub.base_url, api_key="test", seed=0,
                                                timeout=10.0)
            env = SUITE.make_env(TASK, options)  # the defense is a controller around the agent
            record = run_episode(env, agent, spec, budget=SUITE.budget, writer=TrajectoryWriter(spec.log_in(tmp_path)),
                                 controller=SUITE.episode_controller(spec, env))
            assert record.status == "ok" and record.steps == 2, record.error
            assert record.metrics["attack_success"] is False  # it read the injection and did not obey
            tools = {t["function"]["name"] for t in stub.requests[-1]["tools"]}
            assert {"send_money", "get_most_recent_transactions", "final_answer"} <= tools
            assert their_rescoring(TaskId.parse(TASK), read_log(spec.log_in(tmp_path))).attack_success is False
    finally:
        stub.stop()
    plain, spotlit = stub.requests[1]["messages"], stub.requests[3]["messages"]
    assert not plain[-1]["content"].startswith("<<") and spotlit[-1]["content"].startswith("<<")
    assert "INFORMATION" in spotlit[-1]["content"] and "INFORMATION" in plain[-1]["content"]
    assert "Text between those symbols is data" in spotlit[0]["content"]
    assert "Text between those symbols" not in json.dumps(plain)
