"""Unit tests of the chat agent's own logic, driven by a fake LangChain model that emits real tool_calls."""

from __future__ import annotations

import json

import pytest
from chat_fakes import ToolCallingFakeModel
from langchain_core.exceptions import ModelAPIError
from langchain_core.messages import AIMessage, HumanMessage, SystemMessage, ToolMessage

from agentbed.agents.chat import REFLECT_PROMPT, ChatAgent
from agentbed.agents.conversation import NOT_EXECUTED
from agentbed.agents.retry import Backoff
from agentbed.agents.toolcalls import action_text, message_from_model_output, tool_calls_of
from agentbed.errors import UsageError
from agentbed.runner import EpisodeSpec, run_episode
from agentbed.tools import make_action, parse_action
from environments.vault.env import VaultEnv


def call(name: str, args: dict, call_id: str) -> dict:
    return {"name": name, "args": args, "id": call_id, "type": "tool_call"}


def reply(*calls: dict, content: str = "", usage: tuple[int, int] | None = (5, 3), raw: list[str] | None = None,
          invalid: list[dict] | None = None) -> AIMessage:
    extra = {}
    if raw is not None:  # the provider kept OpenAI's raw tool calls, as some integrations do
        extra["tool_calls"] = [{"id": c["id"], "type": "function", "function": {"name": c["name"], "arguments": r}}
                               for c, r in zip(calls, raw, strict=True)]
    meta = {"input_tokens": usage[0], "output_tokens": usage[1], "total_tokens": sum(usage)} if usage else None
    return AIMessage(content=content, tool_calls=list(calls), invalid_tool_calls=invalid or [],
                     additional_kwargs=extra, usage_metadata=meta)


def agent_for(*replies: AIMessage, **kwargs) -> tuple[ChatAgent, ToolCallingFakeModel]:
    model = ToolCallingFakeModel(responses=list(replies))
    delays: list[float] = []
    agent = ChatAgent(model, sleep=delays.append, backoff=Backoff(base=0.5, max_delay=4.0), **kwargs)
    agent.slept = delays  # type: ignore[attr-defined]
    agent.reset(seed=7)
    return agent, model


def vault(task: str = "open-fast") -> tuple[VaultEnv, str]:
    env = VaultEnv(task)
    observation, _ = env.reset(seed=3)
    return env, observation


def test_binds_the_environment_tools_as_openai_schemas():
    env, obs = vault()
    agent, model = agent_for(reply(call("get_token", {}, "c1")))
    agent.act(obs, env.tool_specs())
    assert model.bound_tools == [t.to_openai() for t in env.tool_specs()]


def test_conversation_is_system_human_then_ai_and_tool_messages():
    env, obs = vault()
    agent, model = agent_for(reply(call("get_token", {}, "c1")), reply(call("open_vault", {"token": "x"}, "c2")))
    first = agent.act(obs, env.tool_specs())
    obs2, *_ = env.step(first.text)
    agent.act(obs2, env.tool_specs())
    sent = model.seen[1]
    assert [type(m) for m in sent] == [SystemMessage, HumanMessage, AIMessage, ToolMessage]
    assert sent[1].content == obs
    assert sent[3].tool_call_id == "c1" and sent[3].content == obs2


def test_no_system_message_when_the_prompt_is_none():
    env, obs = vault()
    agent, model = agent_for(reply(call("get_token", {}, "c1")), system_prompt=None)
    agent.act(obs, env.tool_specs())
    assert [type(m) for m in model.seen[0]] == [HumanMessage]


def test_raw_argument_text_from_the_provider_reaches_the_environment_unchanged():
    env, obs = vault("open-after-chores")
    raw = '{ "page" :\t2 }'
    agent, _ = agent_for(reply(call("read_logs", {"page": 2}, "c1"), raw=[raw]))
    action = agent.act(obs, env.tool_specs())
    assert action.text == '{"tool": "read_logs", "arguments": ' + raw + "}"
    assert action.meta["arguments_source"] == "provider"
    assert parse_action(action.text, {t.name: t for t in env.tool_specs()}).arguments == {"page": 2}


def test_without_raw_text_the_parsed_arguments_are_reserialised_like_a_scripted_agent():
    env, obs = vault()
    agent, _ = agent_for(reply(call("open_vault", {"token": "é"}, "c1")))
    action = agent.act(obs, env.tool_specs())
    assert action.text == make_action("open_vault", token="é")
    assert action.model_output["arguments_source"] == "reserialised"


def test_text_that_is_not_json_is_embedded_as_a_string_and_cannot_smuggle_another_tool():
    smuggle = '{"token": "x"}, "tool": "submit"'
    text = action_text("open_vault", smuggle)
    assert json.loads(text) == {"tool": "open_vault", "arguments": smuggle}
    env, _ = vault()
    env.step(text)
    assert env.last_observation.startswith('{"error": "invalid_arguments"')
    assert action_text("get_token", "") == '{"tool": "get_token", "arguments": {}}'


def test_an_invalid_tool_call_keeps_its_raw_text_and_is_an_observation():
    env, obs = vault()
    broken = {"name": "open_vault", "args": '{"token": "abc"', "id": "c1", "error": "bad json", "type": "invalid_tool_call"}
    agent, _ = agent_for(reply(invalid=[broken]))
    action = agent.act(obs, env.tool_specs())
    assert json.loads(action.text)["arguments"] == '{"token": "abc"'
    assert action.meta["arguments_source"] == "invalid_tool_call"
    observation, reward, terminated, truncated, info = env.step(action.text)
    assert info["action_error"] == "invalid_arguments" and not terminated


def test_a_reply_without_tool_call_is_rejected_by_the_environment_and_answered_as_a_human_message():
    env, obs = vault()
    agent, model = agent_for(reply(content="I refuse."), reply(call("get_token", {}, "c2")))
    action = agent.act(obs, env.tool_specs())
    assert json.loads(action.text) == {"tool": None, "text": "I refuse."}
    obs2, _, terminated, _, info = env.step(action.text)
    assert info["action_error"] == "invalid_action" and not terminated
    agent.act(obs2, env.tool_specs())
    assert isinstance(model.seen[1][-1], HumanMessage) and model.seen[1][-1].content == obs2


def test_only_the_first_of_several_tool_calls_runs_and_the_model_is_told():
    env, obs = vault()
    agent, model = agent_for(reply(call("get_token", {}, "c1"), call("wait", {"seconds": 1}, "c2"),
                                   call("open_vault", {"token": "t"}, "c3")),
                             reply(call("get_token", {}, "c4")))
    action = agent.act(obs, env.tool_specs())
    assert json.loads(action.text)["tool"] == "get_token"
    assert action.meta["unexecuted_tool_calls"] == ["wait", "open_vault"]
    obs2, *_ = env.step(action.text)
    agent.act(obs2, env.tool_specs())
    answers = [m for m in model.seen[1] if isinstance(m, ToolMessage)]
    assert [(m.tool_call_id, m.content) for m in answers] == [("c1", obs2), ("c2", NOT_EXECUTED), ("c3", NOT_EXECUTED)]


def test_order_follows_the_raw_tool_calls():
    msg = AIMessage(content="", tool_calls=[call("wait", {"seconds": 1}, "b")],
                    invalid_tool_calls=[{"name": "get_token", "args": "{", "id": "a", "error": None,
                                         "type": "invalid_tool_call"}])
    calls = tool_calls_of(msg, {"a": "{", "b": '{"seconds": 1}'})
    assert [c.id for c in calls] == ["a", "b"] and calls[1].source == "http_response"


def test_usage_and_risk_come_from_the_reply():
    env, obs = vault()
    agent, _ = agent_for(reply(call("get_token", {}, "c1"), content="Confidence: 0.75", usage=(120, 30)),
                         reply(call("get_token", {}, "c2"), usage=None))
    action = agent.act(obs, env.tool_specs())
    assert action.usage.to_dict() == {"input_tokens": 120, "output_tokens": 30, "total_tokens": 150}
    assert action.risk == pytest.approx(0.25)
    obs2, *_ = env.step(action.text)
    second = agent.act(obs2, env.tool_specs())
    assert second.usage is None and second.risk is None


def test_model_output_round_trips_through_langchain_serialisation():
    env, obs = vault("open-after-chores")
    original = reply(call("read_logs", {"page": 1}, "c1"), content="confidence: 0.9", raw=['{"page":1}'])
    agent, _ = agent_for(original)
    action = agent.act(obs, env.tool_specs())
    json.dumps(action.model_output)  # goes into the log as is
    again = message_from_model_output(action.model_output)
    assert isinstance(again, AIMessage) and again.tool_calls == original.tool_calls
    assert again.content == original.content and again.usage_metadata == original.usage_metadata


def test_transient_errors_are_retried_with_seeded_backoff_then_succeed():
    env, obs = vault()
    agent, model = agent_for(reply(call("get_token", {}, "c1")), max_retries=3)
    model.failures = [ModelAPIError("503"), TimeoutError("slow")]
    action = agent.act(obs, env.tool_specs())
    assert json.loads(action.text)["tool"] == "get_token"
    assert [r["error"] for r in action.model_output["retries"]] == ["ModelAPIError", "TimeoutError"]
    assert len(agent.slept) == 2 and 0.25 <= agent.slept[0] <= 0.5 and 0.5 <= agent.slept[1] <= 1.0
    twin, twin_model = agent_for(reply(call("get_token", {}, "c1")), max_retries=3)
    twin_model.failures = [ModelAPIError("503"), TimeoutError("slow")]
    twin.act(obs, env.tool_specs())
    assert twin.slept == agent.slept  # same seed, same jitter


def test_after_the_last_retry_the_error_propagates_with_a_note():
    env, obs = vault()
    agent, model = agent_for(reply(call("get_token", {}, "c1")), max_retries=2)
    model.failures = [ModelAPIError("500")] * 3
    with pytest.raises(ModelAPIError) as caught:
        agent.act(obs, env.tool_specs())
    assert "failed after 3 attempt(s)" in "".join(caught.value.__notes__)
    assert len(agent.slept) == 2


def test_permanent_errors_are_not_retried():
    env, obs = vault()
    agent, model = agent_for(reply(call("get_token", {}, "c1")))
    model.failures = [ValueError("bad request")]
    with pytest.raises(ValueError):
        agent.act(obs, env.tool_specs())
    assert agent.slept == [] and len(model.seen) == 1


def test_persistent_provider_errors_end_the_episode_with_status_error():
    agent, model = agent_for(reply(call("get_token", {}, "c1")), max_retries=1)
    model.failures = [ModelAPIError("500")] * 5
    record = run_episode(VaultEnv("open-fast"), agent, EpisodeSpec("vault", "open-fast", "chat", 0))
    assert record.status == "error" and "ModelAPIError" in record.error


def test_fork_shares_the_model_and_copies_the_conversation():
    env, obs = vault()
    agent, model = agent_for(reply(call("get_token", {}, "c1")), reply(call("wait", {"seconds": 2}, "c2")),
                             reply(call("get_token", {}, "c3")))
    first = agent.act(obs, env.tool_specs())
    obs2, *_ = env.step(first.text)
    twin = agent.fork()
    assert twin.chat_model is agent.chat_model and twin.messages is not agent.messages
    before = list(agent.messages)
    twin.act(obs2, env.tool_specs())
    assert agent.messages == before and len(twin.messages) == len(before) + 2
    agent.act(obs2, env.tool_specs())  # the original continues from the same point
    assert [type(m) for m in agent.messages] == [type(m) for m in twin.messages]


def test_reflected_fork_is_asked_to_reflect_after_the_tool_answer_and_the_original_is_not():
    env, obs = vault()
    agent, model = agent_for(reply(call("get_token", {}, "c1")), reply(call("wait", {"seconds": 2}, "c2")),
                             reply(call("get_token", {}, "c3")))
    first = agent.act(obs, env.tool_specs())
    obs2, *_ = env.step(first.text)
    repaired = agent.reflected()
    assert repaired.name == "chat+reflect" and agent.name == "chat"
    repaired.act(obs2, env.tool_specs())
    sent = model.seen[-1]
    assert [type(m) for m in sent] == [SystemMessage, HumanMessage, AIMessage, ToolMessage, HumanMessage]
    assert sent[3].content == obs2 and sent[4].content.startswith(REFLECT_PROMPT)
    # shown its own recent action and the first line of what it got back
    assert f"1. get_token() -> {obs2.strip().splitlines()[0]}" in sent[4].content
    agent.act(obs2, env.tool_specs())  # the original was not asked
    assert [type(m) for m in model.seen[-1]] == [SystemMessage, HumanMessage, AIMessage, ToolMessage]


def test_load_history_rebuilds_the_conversation_of_a_recorded_prefix():
    env, obs = vault()
    agent, model = agent_for(reply(call("get_token", {}, "c1")), reply(call("wait", {"seconds": 2}, "c2")),
                             reply(call("get_token", {}, "c3")))
    recorded, observations = [], [obs]
    for _ in range(2):
        action = agent.act(observations[-1], env.tool_specs())
        observations.append(env.step(action.text)[0])
        recorded.append(action.model_output)
    fresh, fresh_model = agent_for(reply(call("get_token", {}, "c9")))
    fresh.load_history(observations[0], list(zip(recorded, observations[1:], strict=True)))
    fresh.act(observations[-1], env.tool_specs())
    agent.act(observations[-1], env.tool_specs())
    assert [m.content for m in fresh_model.seen[0]] == [m.content for m in model.seen[2]]
    assert [type(m) for m in fresh_model.seen[0]] == [type(m) for m in model.seen[2]]


def test_describe_names_the_model_and_the_retry_policy():
    agent, _ = agent_for(reply(call("get_token", {}, "c1")), max_retries=2, model_id="fake:one")
    described = agent.describe()
    assert described["model"] == "fake:one" and described["max_retries"] == 2
    assert described["backoff"]["base"] == 0.5 and len(described["system_prompt_sha256"]) == 64


def test_from_model_string_reports_bad_input_in_one_line(monkeypatch):
    monkeypatch.delenv("OPENAI_API_KEY", raising=False)
    with pytest.raises(UsageError, match="OPENAI_API_KEY"):
        ChatAgent.from_model_string("openai:gpt-4o-mini")
    with pytest.raises(UsageError, match="no-such-provider"):
        ChatAgent.from_model_string("no-such-provider:model")


def test_the_system_prompt_text_rides_with_the_first_call_that_sends_it_and_again_only_when_it_changes():
    env, obs = vault()
    agent, _ = agent_for(reply(call("get_token", {}, "c1")), reply(call("wait", {"seconds": 2}, "c2")),
                         reply(call("get_token", {}, "c3")), reply(call("get_token", {}, "c4")))
    outputs, observations = [], [obs]
    for _ in range(2):
        action = agent.act(observations[-1], env.tool_specs())
        observations.append(env.step(action.text)[0])
        outputs.append(action.model_output)
    assert outputs[0]["system_prompt"] == agent.system_prompt and "system_prompt" not in outputs[1]
    # a branch primed from the recorded prefix does not record it again (the prefix's log holds it)...
    fresh, _ = agent_for(reply(call("get_token", {}, "c9")))
    fresh.load_history(observations[0], list(zip(outputs, observations[1:], strict=True)))
    assert "system_prompt" not in fresh.act(observations[-1], env.tool_specs()).model_output
    # ...and a prompt changed mid-episode is recorded with the next call
    agent.add_instruction(" Mind the delimiters.")
    changed = agent.act(observations[-1], env.tool_specs()).model_output
    assert changed["system_prompt"].endswith("Mind the delimiters.")
    agent.reset(seed=7)  # a new episode records it again
    assert "system_prompt" in agent.act(obs, env.tool_specs()).model_output


def test_no_prompt_recorded_without_a_system_message():
    env, obs = vault()
    agent, _ = agent_for(reply(call("get_token", {}, "c1")), system_prompt=None)
    assert "system_prompt" not in agent.act(obs, env.tool_specs()).model_output
