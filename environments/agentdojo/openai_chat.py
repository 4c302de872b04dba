"""A chat model reached as AgentDojo's OpenAI pipeline element reaches it (``OpenAILLM`` in
``agentdojo/agent_pipeline/llms/openai_llm.py``, read at 0.1.35), written for agentbed.

The request is the one AgentDojo's element sends: the system message as a ``developer`` message,
every text as a list of content parts, earlier tool calls echoed back with their arguments
re-serialised by ``json.dumps`` (after AgentDojo's executor coerced string lists), a tool
message's content its error text when the call failed, the tool's name on it, the functions as
tools with ``tool_choice: "auto"`` (neither when there are none), and no temperature: AgentDojo's
element passes ``temperature or NOT_GIVEN``, so its default 0.0 is never sent. Generation
settings given to the run (``--temperature``, ``-M``) are sent on top, a documented difference.

Unlike AgentDojo's element it keeps the provider's token usage, and a tool call whose argument
text is not JSON (AgentDojo's element raises ``JSONDecodeError`` and its script stops) is kept as
sent so the world can answer it with an error.
"""

from __future__ import annotations

import copy
import functools
import json
import os
from dataclasses import dataclass, field
from typing import Any

from agentbed.agents.base import Usage
from agentbed.errors import UsageError
from agentbed.memo import ProcessMemo

# generation settings the chat-completions endpoint takes, passed through when a run gives them
SETTINGS = frozenset({"temperature", "max_tokens", "top_p", "seed", "frequency_penalty", "presence_penalty", "stop"})
# the keys of a request body, in the order the SDK's ``chat.completions.create`` writes them
SDK_ORDER = ("model", "messages", "frequency_penalty", "max_tokens", "presence_penalty", "seed", "stop",
             "temperature", "tool_choice", "tools", "top_p")


@dataclass
class Call:
    """One tool call of a reply: AgentDojo's ``FunctionCall`` (its arguments parsed) and the
    argument text exactly as the provider sent it."""

    function: Any  # agentdojo.functions_runtime.FunctionCall
    raw_arguments: str


@dataclass
class Reply:
    """A reply as AgentDojo's conversation keeps it, with what agentbed records of it."""

    message: Any  # agentdojo.types.ChatAssistantMessage
    calls: list[Call] = field(default_factory=list)
    usage: Usage | None = None
    record: dict[str, Any] = field(default_factory=dict)


def _parts(message: Any) -> list[dict[str, str]] | None:
    if message["content"] is None:
        return None
    return [{"type": "text", "text": block["content"] or ""} for block in message["content"]]


def request_message(message: Any) -> dict[str, Any]:
    """One AgentDojo chat message in the request's format."""
    role = message["role"]
    if role == "system":
        return {"role": "developer", "content": _parts(message)}
    if role == "user":
        return {"role": "user", "content": _parts(message)}
    if role == "assistant":
        out: dict[str, Any] = {"role": "assistant", "content": _parts(message)}
        if message["tool_calls"]:
            out["tool_calls"] = [{"id": call.id, "type": "function",
                                  "function": {"name": call.function, "arguments": json.dumps(call.args)}}
                                 for call in message["tool_calls"]]
        return out
    if role == "tool":
        return {"content": message["error"] or _parts(message), "tool_call_id": message["tool_call_id"],
                "role": "tool", "name": message["tool_call"].function}
    raise ValueError(f"no request format for a {role!r} message")


@functools.cache
def _schema(parameters: Any) -> dict[str, Any]:
    # pydantic builds a function's JSON schema afresh on every call (about 5 ms), and every turn sends
    # every tool: one build per parameters class, a copy per request (the body is the caller's)
    return parameters.model_json_schema()


def tool_param(function: Any) -> dict[str, Any]:
    """An AgentDojo function as a chat-completions tool."""
    return {"type": "function", "function": {"name": function.name, "description": function.description,
                                             "parameters": copy.deepcopy(_schema(function.parameters))}}


def request(model: str, messages: list[Any], functions: list[Any], settings: dict[str, Any] | None = None
            ) -> dict[str, Any]:
    """The keyword arguments of ``chat.completions.create`` for this turn."""
    body: dict[str, Any] = {"model": model, "messages": [request_message(m) for m in messages]}
    if functions:
        body["tools"] = [tool_param(f) for f in functions]
        body["tool_choice"] = "auto"
    return {**body, **(settings or {})}


def filter_request(model: str, messages: list[Any], functions: list[Any], temperature: float | None
                   ) -> dict[str, Any]:
    """The keyword arguments AgentDojo's ``OpenAILLMToolFilter`` passes ``chat.completions.create``:
    its temperature (sent even when 0), ``tool_choice: "none"`` always, the tools only when there
    are some; no run setting (its element takes none)."""
    body: dict[str, Any] = {"model": model, "messages": [request_message(m) for m in messages]}
    if functions:
        body["tools"] = [tool_param(f) for f in functions]
    return {**body, "tool_choice": "none", "temperature": temperature}


def reply_of(completion: Any) -> Reply:
    """The first choice of a completion as AgentDojo's assistant message."""
    from agentdojo.functions_runtime import FunctionCall
    from agentdojo.types import ChatAssistantMessage, text_content_block_from_string

    choice = completion.choices[0].message
    calls = []
    for call in choice.tool_calls or []:
        try:
            args = json.loads(call.function.arguments)
        except json.JSONDecodeError:
            args = None
        parsed = FunctionCall(function=call.function.name, args=args if isinstance(args, dict) else {}, id=call.id)
        calls.append(Call(parsed, call.function.arguments))
    content = None if choice.content is None else [text_content_block_from_string(choice.content)]
    message = ChatAssistantMessage(role="assistant", content=content,
                                   tool_calls=None if choice.tool_calls is None else [c.function for c in calls])
    usage = None
    if completion.usage is not None:
        usage = Usage(completion.usage.prompt_tokens or 0, completion.usage.completion_tokens or 0,
                      completion.usage.total_tokens or 0)
    record = {"content": choice.content,
              "tool_calls": [{"id": c.function.id, "name": c.function.function, "arguments": c.raw_arguments}
                             for c in calls] if choice.tool_calls is not None else None}
    return Reply(message, calls, usage, record)


class OpenAIChat:
    """A model behind an OpenAI-compatible endpoint (``OPENAI_API_KEY``, ``OPENAI_BASE_URL``, as
    AgentDojo's script reads them). The client's own retries are off: the agent's are recorded."""

    def __init__(self, model: str, settings: dict[str, Any] | None = None, client: Any = None,
                 timeout: float = 120.0) -> None:
        unknown = sorted(set(settings or {}) - SETTINGS)
        if unknown:
            raise UsageError(f"--model openai:{model}: AgentDojo's protocol sends no setting {unknown[0]!r}"
                             f" (it takes {', '.join(sorted(SETTINGS))})")
        self.model, self.settings = model, dict(sorted((settings or {}).items()))
        self._client, self._timeout = client, timeout

    @property
    def client(self) -> Any:
        if self._client is None:
            import openai

            try:
                self._client = shared_client(self._timeout)
            except openai.OpenAIError as exc:
                raise UsageError(f"--model openai:{self.model}: {exc}") from exc
        return self._client

    def reply(self, messages: list[Any], functions: list[Any]) -> Reply:
        return reply_of(self.create(request(self.model, messages, functions, self.settings)))

    def filter_reply(self, messages: list[Any], functions: list[Any], temperature: float | None) -> Reply:
        """The tool filter's question (AgentDojo's ``OpenAILLMToolFilter``, which uses the same client)."""
        return reply_of(self.create(filter_request(self.model, messages, functions, temperature)))

    def create(self, body: dict[str, Any]) -> Any:
        """What ``chat.completions.create(**body)`` sends and returns, the same bytes (a test
        compares them), without the SDK's walk of the body against its parameter types
        (``maybe_transform``): a body of plain JSON in the wire format comes out of it unchanged,
        in the order of :data:`SDK_ORDER`, and the walk cost about 6 ms of CPU a request."""
        from openai.types.chat import ChatCompletion

        ordered = {key: body[key] for key in SDK_ORDER if key in body}
        if len(ordered) != len(body):  # a key this path does not know: the SDK's own way
            return self.client.chat.completions.create(**body)
        return self.client.post("/chat/completions", body=ordered, cast_to=ChatCompletion)

    def describe(self) -> dict[str, Any]:
        return {"element": "openai", "model": self.model, "settings": self.settings}


_CLIENTS: ProcessMemo[Any] = ProcessMemo()


def shared_client(timeout: float) -> Any:
    """One ``openai.OpenAI`` client per process, timeout and ``OPENAI_*`` environment, shared by
    the run's episodes (as AgentDojo's script shares one per suite): building one loads the CA
    bundle into a new SSL context, about 34 ms of CPU, once per episode before."""
    import openai

    key = (timeout, tuple(sorted((k, v) for k, v in os.environ.items() if k.startswith("OPENAI_"))))
    return _CLIENTS.get_or_build(key, lambda: openai.OpenAI(max_retries=0, timeout=timeout))
