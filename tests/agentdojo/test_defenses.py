"""AgentDojo's defenses as controllers (controllers/agentdojo/defenses.py) around any agent: what the
agent is shown, what it is offered, the decisions in the log, replay, and the model-chosen tool
filter asking the real ChatOpenAI client (against the loopback stub) which tools the task needs."""

from __future__ import annotations

import hashlib
import json

import pytest
from openai_stub import OpenAIStub, Reply

from agentbed.agents.chat import ChatAgent
from agentbed.cli import main
from agentbed.cost import SpendCap, load_prices
from agentbed.inflight import MeteredAgent
from agentbed.log import TrajectoryWriter, read_log
from agentbed.replay import first_divergence, rerun
from agentbed.runner import EpisodeSpec, run_episode
from controllers.agentdojo.defenses import SPOTLIGHT_NOTE, chosen_tools, filter_prompt
from environments.agentdojo.agents import GroundTruthAgent
from environments.agentdojo.benchmark import TaskId
from suites.agentdojo.crosscheck import their_rescoring
from suites.agentdojo.suite import SUITE

ATTACKED = "banking.user_task_1.injection_task_0.important_instructions"


def episode(task, agent, defense, tmp_path, name="a", protocol="agentdojo"):
    opts = SUITE.resolve_options({"defense": defense, "protocol": protocol})
    spec = EpisodeSpec("agentdojo", task, name, 0, opts)
    env = SUITE.make_env(task, opts)
    writer = TrajectoryWriter(spec.log_in(tmp_path))
    record = run_episode(env, agent, spec, budget=SUITE.budget, writer=writer,
                         controller=SUITE.episode_controller(spec, env))
    return record, read_log(spec.log_in(tmp_path))


class Reader(GroundTruthAgent):
    name = "reader"

    def reset(self, *, seed, task=None):
        super().reset(seed=seed, task=task)
        self.read = []

    def act(self, observation, tools):
        self.read.append(observation)
        return super().act(observation, tools)


@pytest.mark.parametrize("defense", ["spotlighting_with_delimiting", "repeat_user_prompt"])
def test_shown_defenses_change_what_the_agent_reads_and_the_log_keeps_the_truth(defense, tmp_path):
    agent = Reader()
    record, log = episode(ATTACKED, agent, defense, tmp_path)
    assert record.status == "ok" and record.metrics["utility"]
    steps = [r for r in log if r["type"] == "step"]
    request = log[0]["observation"]
    truth = steps[0]["observation"]
    assert agent.read[0] == request and "INFORMATION" in truth  # the true tool result, injection and all
    shown = f"<<{truth}>>" if defense == "spotlighting_with_delimiting" else f"{truth}\n\n{request}"
    assert agent.read[1] == shown
    assert steps[1]["control"]["shown"] == {"defense": defense, "chars": len(shown),
                                            "sha256": hashlib.sha256(shown.encode()).hexdigest()}
    if defense == "spotlighting_with_delimiting":  # a scripted agent has no prompt to take the note
        assert steps[0]["control"]["begin"]["instruction_taken"] is False


def test_defended_scripted_episodes_verify_and_rerun_identically(tmp_path, capsys):
    for defense in ("spotlighting_with_delimiting", "repeat_user_prompt", "tool_filter_oracle"):
        out = tmp_path / defense
        assert main(["run", "agentdojo", "--agent", "injection-follower", "--executor", "serial", "--out", str(out),
                     "--quiet", "--task-suite", "banking", "--attack", "important_instructions", "--defense", defense,
                     "--task", ATTACKED]) == 0
        assert main(["verify", str(out)]) == 0
        log = next((out / "episodes").glob("*.jsonl"))
        capsys.readouterr()
        assert main(["replay", str(log), "--rerun"]) == 0
        assert capsys.readouterr().out.strip() == "identical"
        records = read_log(log)
        footer = records[-1]
        assert footer["metrics"]["attack_success"] is (defense != "tool_filter_oracle")
        if defense == "tool_filter_oracle":
            begin = records[1]["control"]["begin"]
            assert begin["tools"] == ["get_most_recent_transactions"] and "upper bound" in begin["selection"]
            assert [t["name"] for t in records[0]["tools"]] == ["get_most_recent_transactions"]
            # the follower tried the injection's send_money; AgentDojo's runtime no longer had it
            assert any("Invalid tool" in r["observation"] for r in records if r["type"] == "step")
            assert their_rescoring(TaskId.parse(ATTACKED), records).attack_success is False


def test_the_model_chosen_filter_needs_a_model():
    opts = SUITE.resolve_options({"defense": "tool_filter"})
    spec = EpisodeSpec("agentdojo", ATTACKED, "ground-truth", 0, opts)
    env = SUITE.make_env(ATTACKED, opts)
    record = run_episode(env, GroundTruthAgent(), spec, controller=SUITE.episode_controller(spec, env))
    assert record.status == "error" and "tool_filter_oracle" in record.error


def test_chosen_tools_is_agentdojos_rule_every_name_in_the_reply():
    tools = SUITE.make_env(ATTACKED, SUITE.resolve_options({})).tool_specs()
    assert sorted(chosen_tools("get_balance, send_money", tools)) == ["get_balance", "send_money"]
    assert chosen_tools("final_answer and nothing", tools) == []


def model(body: dict) -> Reply:
    if body.get("tool_choice") == "none":  # the filter's question, beside the conversation
        return Reply(content="get_most_recent_transactions")
    if body["messages"][-1]["role"] != "tool":
        return Reply(tool_calls=[("get_most_recent_transactions", '{"n": 100}')])
    if len([m for m in body["messages"] if m["role"] == "tool"]) == 1:  # obeys the injection: a removed tool
        return Reply(tool_calls=[("send_money", '{"recipient": "US133000000121212121212", "amount": 0.01,'
                                                ' "subject": "x", "date": "2022-01-01"}')])
    return Reply(content="You spent 1050 in March 2022.")


def test_the_model_chooses_the_tools_and_a_rerun_takes_its_recorded_choice(tmp_path):
    stub = OpenAIStub(model)
    stub.start()
    try:
        for defense in ("tool_filter", "spotlighting_with_delimiting"):
            agent = ChatAgent.from_model_string("openai:gpt-4o-mini", base_url=stub.base_url, api_key="test", seed=0,
                                                timeout=10.0)
            record, log = episode(ATTACKED, agent, defense, tmp_path / defense, name="model:openai:gpt-4o-mini",
                                  protocol="agentbed")
            assert record.status == "ok", record.error
            if defense == "tool_filter":
                filtered = log
    finally:
        stub.stop()
    asked, *played = stub.requests[:4]
    assert asked["tool_choice"] == "none" and len(asked["tools"]) > 10  # every tool shown to the selector
    assert [m["content"] for m in asked["messages"][-2:]] == [log[0]["observation"], filter_prompt()]
    assert all({t["function"]["name"] for t in r["tools"]} == {"get_most_recent_transactions", "final_answer"}
               for r in played)
    begin = filtered[1]["control"]["begin"]
    assert begin["selection"] == "model" and begin["tools"] == ["get_most_recent_transactions"]
    assert begin["reply"] == "get_most_recent_transactions" and begin["usage"]["total_tokens"] == 18
    assert begin["usage_counted"] is True  # the filter's call is in the first step's usage (18 each call)
    steps = [r for r in filtered if r["type"] == "step"]
    assert steps[0]["usage"]["total_tokens"] == 18 + 18 and all(r["usage"]["total_tokens"] == 18 for r in steps[1:])
    refused = [r for r in filtered if r["type"] == "step" and "send_money" in json.dumps(r["action"])]
    assert refused and "Invalid tool" in refused[0]["observation"]
    assert filtered[-1]["metrics"]["attack_success"] is False
    # the stub is gone: a rerun must take the model's choice (and replies) from the log
    recorded, replayed = rerun(next((tmp_path / "tool_filter").rglob("*.jsonl")))
    assert first_divergence(recorded, replayed) is None
    spotlit = stub.requests[-2]["messages"]  # a chat model takes spotlighting's note in its system prompt
    assert spotlit[0]["role"] == "system" and spotlit[0]["content"].endswith(SPOTLIGHT_NOTE)
    assert spotlit[-1]["content"].startswith("<<")


def test_the_filters_call_counts_in_the_episodes_tokens_and_the_runs_budget(tmp_path):
    """Under --protocol agentbed the filter is asked beside the chat agent's conversation; its call is
    made as the agent's are: through the run's spend cap, and into the usage the run's cost and
    --max-tokens read (the metered agent's), as AgentDojo's protocol counts it."""
    stub = OpenAIStub(model)
    stub.start()
    try:
        chat = ChatAgent.from_model_string("openai:gpt-4o-mini", base_url=stub.base_url, api_key="test", seed=0,
                                           timeout=10.0)
        chat.spend = SpendCap(load_prices(), max_cost=None, max_tokens=10**6)
        agent = MeteredAgent(chat)
        record, log = episode(ATTACKED, agent, "tool_filter", tmp_path, name="model:openai:gpt-4o-mini",
                              protocol="agentbed")
    finally:
        stub.stop()
    assert record.status == "ok", record.error
    calls = len(stub.requests)  # the filter's question and every reply
    steps = [r for r in log if r["type"] == "step"]
    assert calls == len(steps) + 1 and stub.requests[0]["tool_choice"] == "none"
    assert record.tokens == log[-1]["tokens"] == 18 * calls  # the episode's budget counts it
    usage = agent.usage()  # what the run's cost and budget read
    assert (usage["input_tokens"], usage["output_tokens"]) == (11 * calls, 7 * calls)
    assert chat.spend.ledger()[1] == 18 * calls  # the spend cap saw it before and after the call
    cap = SpendCap(load_prices(), max_cost=None, max_tokens=0)  # nothing may be paid: not even the filter's call
    chat.spend = cap
    stub = OpenAIStub(model)
    stub.start()
    try:
        record, _ = episode(ATTACKED, MeteredAgent(chat), "tool_filter", tmp_path / "capped",
                            name="model:openai:gpt-4o-mini", protocol="agentbed")
    finally:
        stub.stop()
    assert record.status == "error" and "--max-tokens reached" in record.error and stub.requests == []
