"""Tool calls of a chat model's reply on the wire: the raw argument text (from the provider's
message or captured from the HTTP response), the action text built from it byte for byte, and
token usage. Provider-format details live here so :mod:`agentbed.agents.chat` holds only the
conversation.
"""

from __future__ import annotations

import json
import threading
from collections.abc import Mapping
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

import httpx
from langchain_core.messages import AIMessage, BaseMessage, messages_from_dict

from agentbed.agents.base import Usage

if TYPE_CHECKING:
    import httpx2  # what openai's DefaultHttpxClient builds on (requirements/constraints.txt pins it)


@dataclass(frozen=True)
class ModelToolCall:
    """One tool call of a reply, with its argument text and where that text came from:
    ``provider`` (kept by the LangChain integration), ``http_response`` (read from the wire),
    ``invalid_tool_call`` (text LangChain could not parse) or ``reserialised`` (no raw text)."""

    id: str | None
    name: str | None
    arguments: str
    source: str


def action_text(name: str | None, arguments: str) -> str:
    """The raw action for a tool call, the argument text embedded byte for byte.

    Text that is not one complete JSON value is embedded as a JSON string instead (the
    environment then rejects it as non-object arguments and the exact text stays recoverable):
    spliced in verbatim, ``{}, "tool": "other"`` would smuggle in a second tool name.
    An empty argument text means no arguments, as providers send it for parameterless tools.
    """
    if not arguments.strip():
        arguments = "{}"
    try:
        json.loads(arguments)
        embedded = arguments
    except (ValueError, RecursionError):
        embedded = json.dumps(arguments, ensure_ascii=False)
    return '{"tool": ' + json.dumps(name, ensure_ascii=False) + ', "arguments": ' + embedded + "}"


def no_tool_action(text: str) -> str:
    """The action for a reply without a tool call: the environment rejects it (no tool named)."""
    return json.dumps({"tool": None, "text": text}, ensure_ascii=False)


def action_of_tool_reply(reply: BaseMessage) -> str:
    """The action a reply stands for when actions travel as tool calls: its first call, or
    the no-tool action for its text (what ChatAgent.act returned for it)."""
    from agentbed.agents.confidence import content_text

    calls = tool_calls_of(reply) if isinstance(reply, AIMessage) else []
    if calls:
        return action_text(calls[0].name, calls[0].arguments)
    return no_tool_action(content_text(reply.content) if isinstance(reply, AIMessage) else "")


def openai_tool_arguments(body: Any) -> dict[str, str]:
    """Tool call id -> argument text in an OpenAI response body (chat completions or responses API)."""
    found: dict[str, str] = {}
    if not isinstance(body, dict):
        return found
    for choice in body.get("choices") or []:
        message = choice.get("message") if isinstance(choice, dict) else None
        calls = message.get("tool_calls") if isinstance(message, dict) else None
        for call in calls if isinstance(calls, list) else []:
            function = call.get("function") if isinstance(call, dict) else None
            if isinstance(function, dict) and isinstance(call.get("id"), str) and isinstance(function.get("arguments"), str):
                found[call["id"]] = function["arguments"]
    for item in body.get("output") or []:
        if (isinstance(item, dict) and item.get("type") == "function_call" and isinstance(item.get("call_id"), str)
                and isinstance(item.get("arguments"), str)):
            found[item["call_id"]] = item["arguments"]
    return found


# What a tool call's argument text that is valid JSON but no object is replaced with in the body
# the client parses (LangChain fails the whole reply on a list, and turns null or 0 into {}): text
# that is no JSON, so the call becomes an invalid one; the action is built from the captured text.
NOT_AN_OBJECT = "(agentbed: these arguments are JSON but not an object) "


def completion_problem(body: bytes) -> str | None:
    """What makes an HTTP 2xx body of a chat-completions call no completion (None if it is one):
    empty, not JSON (cut short?), not an object, or without a choice that has a message."""
    if not body.strip():
        return "an empty body"
    try:
        doc = json.loads(body)
    except (ValueError, RecursionError):
        return ("a body that is cut short or malformed JSON" if body.lstrip()[:1] in (b"{", b"[")
                else "a body that is not JSON")
    if not isinstance(doc, dict):
        return f"a JSON {type(doc).__name__} instead of a completion object"
    choices = doc.get("choices")
    if not isinstance(choices, list) or not choices:
        what = "an error object" if "error" in doc else f"'choices' {json.dumps(choices)[:40]}"
        return f"{what} and no choice"
    first = choices[0]
    if not isinstance(first, dict) or not isinstance(first.get("message"), dict):
        return "a choice without a message"
    return None


class ResponseCapture:
    """An httpx response hook on OpenAI-format responses: keeps the tool-call argument text, and
    notes a chat-completions body that is no completion (:func:`completion_problem`) so the agent
    can call that the provider's failure (:meth:`problem`).

    Pass :meth:`http_client` to the provider client. Captures are per thread (the sync client
    calls the hook in the calling thread), so forks of one agent may share the capture.
    """

    def __init__(self) -> None:
        self._local = threading.local()

    def _store(self) -> dict[str, str]:
        store = getattr(self._local, "store", None)
        if store is None:
            store = self._local.store = {}
        return store

    def on_response(self, response: httpx.Response) -> None:
        kind = response.headers.get("content-type", "")
        if "event-stream" in kind:
            return  # streams are left to the client
        completion = response.is_success and response.request.url.path.endswith("/chat/completions")
        if not completion and "json" not in kind:
            return  # error pages are left to the client
        response.read()
        if completion:
            self._local.problem = completion_problem(response.content)
        try:
            body = json.loads(response.content)
        except (ValueError, RecursionError):
            return
        found = openai_tool_arguments(body)
        self._store().update(found)
        if completion and _mark_non_objects(body):
            response._content = json.dumps(body).encode("utf-8")  # what the client parses; the text is in found

    def problem(self) -> str | None:
        """Why the last chat-completions response this thread received is no completion, or None."""
        return getattr(self._local, "problem", None)

    def clear(self) -> None:
        self._store().clear()
        self._local.problem = None

    def take(self) -> dict[str, str]:
        store = self._store()
        found = dict(store)
        store.clear()
        return found

    def http_client(self, **kwargs: Any) -> httpx.Client | httpx2.Client:
        client_class: type[httpx.Client] | type[httpx2.Client]
        try:
            from openai import DefaultHttpxClient as client_class  # the defaults the SDK would use
        except ImportError:  # pragma: no cover - openai comes with langchain-openai
            client_class = httpx.Client
        return client_class(event_hooks={"response": [self.on_response]}, **kwargs)


def _mark_non_objects(body: Any) -> bool:
    """Make each tool call's argument text that parses to no JSON object unparseable (see
    :data:`NOT_AN_OBJECT`); whether any was."""
    changed = False
    choices = body.get("choices") if isinstance(body, dict) else None
    for choice in choices if isinstance(choices, list) else []:
        message = choice.get("message") if isinstance(choice, dict) else None
        calls = message.get("tool_calls") if isinstance(message, dict) else None
        for call in calls if isinstance(calls, list) else []:
            function = call.get("function") if isinstance(call, dict) else None
            if not isinstance(function, dict):
                continue
            text = function.get("arguments")
            if not isinstance(text, str) or not text.strip():
                continue
            try:
                value = json.loads(text)
            except (ValueError, RecursionError):
                continue
            if not isinstance(value, dict):
                function["arguments"], changed = NOT_AN_OBJECT + text, True
    return changed


def tool_calls_of(message: AIMessage, captured: Mapping[str, str] | None = None) -> list[ModelToolCall]:
    """The reply's tool calls in the order the model wrote them, each with its raw argument text."""
    captured = captured or {}
    raw_list = message.additional_kwargs.get("tool_calls")
    provider_raw: dict[str, str] = {}
    for call in raw_list if isinstance(raw_list, list) else []:
        function = call.get("function") if isinstance(call, dict) else None
        if isinstance(function, dict) and isinstance(call.get("id"), str) and isinstance(function.get("arguments"), str):
            provider_raw[call["id"]] = function["arguments"]

    def raw_text(call_id: Any) -> tuple[str, str] | None:
        if isinstance(call_id, str):
            if call_id in provider_raw:
                return provider_raw[call_id], "provider"
            if call_id in captured:
                return captured[call_id], "http_response"
        return None

    calls = []
    for call in message.tool_calls:
        raw = raw_text(call.get("id")) or (json.dumps(call.get("args", {}), ensure_ascii=False), "reserialised")
        calls.append(ModelToolCall(call.get("id"), call.get("name"), *raw))
    for call in message.invalid_tool_calls:
        args = call.get("args")
        raw = raw_text(call.get("id")) or ((args, "invalid_tool_call") if isinstance(args, str) else ("", "reserialised"))
        calls.append(ModelToolCall(call.get("id"), call.get("name"), *raw))
    order = list(provider_raw) or list(captured)
    rank = {call_id: i for i, call_id in enumerate(order)}
    return sorted(calls, key=lambda c: rank.get(c.id, len(rank)) if isinstance(c.id, str) else len(rank))


# Finish reasons with which a provider says the reply failed on its side (OpenRouter's "error",
# Gemini's malformed function call), not that the model stopped.
FAILED_FINISH = frozenset({"error", "malformed_function_call"})


def finish_reason(message: AIMessage) -> str | None:
    """Why the provider says generation stopped, under the key its LangChain integration uses."""
    meta = message.response_metadata or {}
    for key in ("finish_reason", "stop_reason", "done_reason"):
        value = meta.get(key)
        if isinstance(value, str) and value:
            return value
    return None


def reply_problem(reply: Any) -> str | None:
    """What makes a chat model's reply (any LangChain provider) no answer a model gave, or None: not
    an AI message; a finish reason saying the provider failed; a tool call without a name, an
    invalid one without argument text; OpenAI-format tool calls in ``additional_kwargs`` that are
    not call objects, or whose argument text is no JSON while LangChain holds it as parsed; or
    nothing at all (no text, no tool call) without a finish reason, as a cut stream arrives. What
    the model wrote, however wrong (argument text that is no JSON, an empty answer it finished
    with), stays the model's: the environment's observation, not this."""
    if not isinstance(reply, AIMessage):
        return f"a {type(reply).__name__} instead of an AI message"
    finish = finish_reason(reply)
    if finish is not None and finish.lower() in FAILED_FINISH:
        return f"finish reason {finish!r}"
    if any(not isinstance(c.get("name"), str) or not c.get("name") for c in [*reply.tool_calls, *reply.invalid_tool_calls]):
        return "a tool call without a name"
    if any(not isinstance(c.get("args"), str) for c in reply.invalid_tool_calls):
        return "an invalid tool call without argument text"
    raw = reply.additional_kwargs.get("tool_calls")
    if raw is not None:
        if not isinstance(raw, list) or not all(isinstance(c, dict) and isinstance(c.get("function"), dict)
                                                and isinstance(c["function"].get("name"), str) for c in raw):
            return "tool calls in additional_kwargs that are not {function: {name, arguments}} objects"
        parsed = {c.get("id") for c in reply.tool_calls}
        for c in raw:
            text = c["function"].get("arguments")
            if c.get("id") in parsed and isinstance(text, str) and text.strip() and not _parses(text):
                return "a tool call whose argument text is no JSON but was parsed"
    blank = all(isinstance(b, str) and not b.strip() or isinstance(b, dict) and b.get("type") == "text"
                and not str(b.get("text") or "").strip() for b in reply.content) if isinstance(reply.content, list) \
        else not reply.content.strip()
    if blank and not reply.tool_calls and not reply.invalid_tool_calls and finish is None:
        return "an empty reply without a finish reason"
    return None


def _parses(text: str) -> bool:
    try:
        json.loads(text)
    except (ValueError, RecursionError):
        return False
    return True


def usage_of(message: AIMessage) -> Usage | None:
    meta = message.usage_metadata
    if not meta:
        return None
    return Usage(int(meta.get("input_tokens", 0)), int(meta.get("output_tokens", 0)), int(meta.get("total_tokens", 0)))


def message_from_model_output(model_output: Mapping[str, Any]) -> BaseMessage:
    """The model reply recorded in a step's ``model_output`` (for replay and branching)."""
    return messages_from_dict([model_output["message"]])[0]
