"""A malformed reply of any LangChain chat model is the provider's failure, not the model's: the
call is retried like a 5xx and, if the reply stays malformed, the episode errors with kind
``bad_response`` and is left out of every rate. Driven by LangChain's own GenericFakeChatModel
(any provider's integration hands the agent such messages), and by the openai and anthropic SDKs'
exception for an answer they could not read. What the model wrote, however wrong, stays its own."""

from __future__ import annotations

import asyncio
import json

import httpx
import openai
import pytest
from chat_fakes import ScriptedGenericFake, Turns
from langchain_core.messages import AIMessage

from agentbed.agents.chat import ChatAgent
from agentbed.agents.retry import Backoff
from agentbed.problems import classify, is_errored
from agentbed.runner import Budget, EpisodeSpec, run_episode
from environments.vault.env import VaultEnv

CALLED = {"finish_reason": "tool_calls"}


def invalid(name, args) -> dict:
    return {"name": name, "args": args, "id": "c1", "error": "unparsed", "type": "invalid_tool_call"}


def raw_call(function) -> dict:
    return {"tool_calls": [{"id": "c1", "type": "function", "function": function}]}


MALFORMED = {
    "empty without a finish reason": AIMessage(content=""),
    "blank text blocks": AIMessage(content=[{"type": "text", "text": "  "}]),
    "finish reason error": AIMessage(content="", response_metadata={"finish_reason": "error"}),
    "a malformed function call": AIMessage(content="", response_metadata={"finish_reason": "MALFORMED_FUNCTION_CALL"}),
    "a call without a name": AIMessage(content="", invalid_tool_calls=[invalid(None, "{}")], response_metadata=CALLED),
    "an invalid call without text": AIMessage(content="", invalid_tool_calls=[invalid("get_token", None)],
                                              response_metadata=CALLED),
    "raw calls that are no objects": AIMessage(content="", additional_kwargs={"tool_calls": "get_token()"},
                                               response_metadata=CALLED),
    "a raw call without a function": AIMessage(content="", additional_kwargs={"tool_calls": [{"id": "c1"}]},
                                               response_metadata=CALLED),
    "raw text no JSON yet parsed": AIMessage(
        content="", tool_calls=[{"name": "get_token", "args": {}, "id": "c1", "type": "tool_call"}],
        additional_kwargs=raw_call({"name": "get_token", "arguments": '{"a": '}), response_metadata=CALLED),
}
def _anthropic():
    """The anthropic SDK, imported when its test runs (about 1.4 s of CPU beside openai's: an xdist
    worker that only collects this file need not pay it)."""
    import anthropic

    return anthropic


REQUEST = httpx.Request("POST", "http://127.0.0.1:9/v1/messages")
UNREADABLE = {
    "openai's response validation": lambda: openai.APIResponseValidationError(
        response=httpx.Response(200, request=REQUEST), body={"choices": "?"}),
    "anthropic's response validation": lambda: _anthropic().APIResponseValidationError(
        response=httpx.Response(200, request=REQUEST), body={"content": None}),
    "undecodable JSON": lambda: json.JSONDecodeError("Expecting value", "<html>", 0),
}
FAULTS = {**{k: lambda m=m: m for k, m in MALFORMED.items()}, **UNREADABLE}
GOOD = AIMessage(content="confidence: 0.9", tool_calls=[{"name": "get_token", "args": {}, "id": "c9", "type": "tool_call"}],
                 response_metadata=CALLED)


def agent(*turns) -> ChatAgent:
    chat = ChatAgent(ScriptedGenericFake(messages=Turns(*turns)), max_retries=2, sleep=lambda s: None,
                     backoff=Backoff(base=0.0), model_id="fake:generic")
    chat.reset(seed=0)
    return chat


@pytest.mark.parametrize("fault", FAULTS.values(), ids=FAULTS.keys())
def test_a_malformed_reply_is_retried_like_a_5xx(fault):
    env = VaultEnv("open-fast")
    observation, _ = env.reset(seed=0)
    action = agent(fault(), fault(), GOOD).act(observation, env.tool_specs())
    assert json.loads(action.text) == {"tool": "get_token", "arguments": {}}
    assert [r["error"] for r in action.model_output["retries"]] == ["BadResponse", "BadResponse"]


@pytest.mark.parametrize("fault", FAULTS.values(), ids=FAULTS.keys())
def test_a_reply_that_stays_malformed_errors_the_episode_and_is_never_scored(fault):
    record = run_episode(VaultEnv("open-fast"), agent(fault(), fault(), fault()),
                         EpisodeSpec("vault", "open-fast", "model:fake:generic", 0), budget=Budget(max_steps=4))
    assert record.status == "error" and "BadResponse: fake:generic: " in record.error
    assert classify(record.error).name == "bad_response" and is_errored(record)


OWN = {
    "an empty answer it finished": AIMessage(content="", response_metadata={"finish_reason": "stop"}),
    "argument text that is no JSON": AIMessage(content="", invalid_tool_calls=[invalid("open_vault", '{"token": ')],
                                               response_metadata=CALLED),
    "argument text that is no object": AIMessage(
        content="", invalid_tool_calls=[invalid("open_vault", "[1, 2]")],
        additional_kwargs=raw_call({"name": "open_vault", "arguments": "[1, 2]"}), response_metadata=CALLED),
}


@pytest.mark.parametrize("reply", OWN.values(), ids=OWN.keys())
def test_what_the_model_wrote_however_wrong_is_its_own_and_the_environment_answers_it(reply):
    env = VaultEnv("open-fast")
    observation, _ = env.reset(seed=0)
    action = agent(reply).act(observation, env.tool_specs())
    assert action.model_output["retries"] == []
    _, _, terminated, _, info = env.step(action.text)
    assert info["action_error"] in {"invalid_action", "invalid_arguments"} and not terminated


class _ProviderCancelled(BaseException):
    """An SDK's own cancellation, as trio's and anyio's are: a BaseException, not an Exception."""


def _notes_in_a_tuple() -> ConnectionError:
    exc = ConnectionError("upstream reset")
    exc.__notes__ = ("from the gateway",)  # type: ignore[assignment] - add_note then raises TypeError
    return exc


UNUSUAL = {
    "asyncio's CancelledError": (lambda: asyncio.CancelledError(), "provider"),
    "an SDK's own BaseException": (lambda: _ProviderCancelled("stream cancelled"), "provider"),
    "a SystemExit inside the client": (lambda: SystemExit(3), "provider"),
    "a ConnectionError whose notes are a tuple": (_notes_in_a_tuple, "connection"),
}


@pytest.mark.parametrize(("fault", "kind"), UNUSUAL.values(), ids=UNUSUAL.keys())
def test_an_unusual_exception_of_the_providers_client_is_its_failure_never_a_score(fault, kind):
    """Session 18's probe: a client raising a BaseException that is not an Exception (asyncio's
    CancelledError, an SDK's cancellation, a SystemExit) was recorded with kind ``other``, a failed
    attempt of the model, a score; a ConnectionError whose ``__notes__`` is a tuple was replaced in
    the log by agentbed's own TypeError (``add_note`` raised it)."""
    record = run_episode(VaultEnv("open-fast"), agent(fault(), fault(), fault()),
                         EpisodeSpec("vault", "open-fast", "model:fake:generic", 0), budget=Budget(max_steps=4))
    assert record.status == "error" and "TypeError" not in record.error
    assert classify(record.error).name == kind and is_errored(record)
