"""The compact local profile: how a chat agent asks a small model on a small CPU for actions.

A 270M base model neither follows the default system prompt nor calls tools through llama.cpp's
chat template (``tool_choice: "required"`` comes back as plain text), and its replies run on.
So the profile asks for the action itself, as JSON text, and makes the server's grammar
enforce it: ``response_format`` is a JSON schema ``anyOf`` one object per tool,
``{"tool": <that name>, "arguments": <that tool's own argument schema>}`` (free-form arguments
would run on to the token cap), written on one line (``COMPACT_JSON``). The reply's content is the
action, byte for byte as the server sent it, so the environment (and its grader) receive the
model's own bytes. What else keeps an episode short: a completion-token cap, a short system
prompt listing the tools, a paged window of the latest exchanges, and long observations cut when
shown to the model (the log keeps them whole).

Everything that goes wrong in the reply is the environment's to judge: text cut at the cap,
an empty reply, malformed JSON or an unknown tool come back as the environment's error
observation, and the episode goes on.
"""

from __future__ import annotations

import hashlib
import json
from collections.abc import Sequence
from dataclasses import asdict, dataclass, fields
from typing import Any

from langchain_core.language_models import BaseChatModel
from langchain_core.messages import AIMessage, BaseMessage, HumanMessage
from langchain_core.runnables import Runnable, RunnableLambda

from agentbed.agents.base import Action
from agentbed.agents.confidence import content_text
from agentbed.agents.local.server import PREFIX, base_url_for, split_model
from agentbed.agents.retry import RetryRecord
from agentbed.agents.toolcalls import usage_of
from agentbed.errors import UsageError
from agentbed.tools import Tool

COMPACT_PROMPT = (
    "You act only through tools. Answer every message with one JSON object"
    ' {"tool": NAME, "arguments": {...}} and nothing else. Tools:\n'
)
# One line of JSON. llama.cpp's server turns a ``response_format`` schema into a GBNF grammar whose
# whitespace rule between JSON tokens is ``| " " | "\n"{1,2} [ \t]{0,20}``, and the base model took it:
# ``{"tool": "get_token", "arguments": {\n  }\n  }``, 18 tokens where one line is 13 (21 and 14 generated
# with the end token). So the grammar goes in the request's ``grammar`` instead, as LLGuidance's JSON
# schema (``%llguidance``, which this server runs; llama.cpp ignores ``x-guidance`` in a
# ``response_format``), with LLGuidance's top-level ``x-guidance`` key allowing no whitespace but the
# ", " and ": " the prompt spells (its docs/json_schema.md, "Whitespace handling"). Every keyword of
# the schema binds as before (tests/agents/test_local_model.py). ``one_line=False`` sends the
# ``response_format`` instead, for an OpenAI-compatible server without LLGuidance.
COMPACT_JSON = {"whitespace_flexible": False, "item_separator": ", ", "key_separator": ": "}
LLGUIDANCE_JSON = "%llguidance {}\nstart: %json "


@dataclass(frozen=True)
class LocalProfile:
    """The knobs of the compact profile (see the module docstring and docs/agents.md), and the
    reply format a :class:`~agentbed.agents.chat.ChatAgent` plays it with."""

    max_tokens: int = 96  # completion cap: one action, not an essay
    temperature: float = 0.0  # greedy: a base model's best guess
    window: int = 4  # exchanges shown besides the first observation
    max_observation_chars: int = 1500  # longer ones are cut when shown to the model (~500 tokens)
    constrained: bool = True  # the JSON-schema grammar over the tool menu
    one_line: bool = True  # that grammar as LLGuidance's, one line of JSON; False: response_format's
    grammar: str | None = None  # a GBNF grammar of llama.cpp's instead (replaces the schema)
    stop: tuple[str, ...] = ()  # stop strings (the server cuts them off)

    @classmethod
    def from_model(cls, model: str) -> LocalProfile:
        """The profile a model string asks for: ``local:NAME?max_tokens=64&window=2``."""
        knobs = split_model(model)[1]
        types = {f.name: str(f.type) for f in fields(cls) if f.name not in {"grammar", "stop"}}  # annotations: strings
        values: dict[str, Any] = {}
        for key, text in knobs.items():
            kind = types.get(key)
            if kind is None:
                raise UsageError(f"--model {model!r}: no profile knob {key!r} (knobs: {', '.join(types)})")
            try:
                values[key] = text.lower() in {"1", "true", "yes"} if kind == "bool" else \
                    {"int": int, "float": float}[kind](text)
            except ValueError:
                raise UsageError(f"--model {model!r}: {key}={text!r} is not a valid {kind}") from None
        return cls(**values)

    # -- the reply format (agentbed.agents.chat_support.ReplyFormat) -------------------------------------
    def system_prompt(self, base: str | None, tools: Sequence[Tool]) -> str:
        """The compact prompt and the tool menu, after the caller's own prompt if it has one
        (``ChatAgent.from_model_string`` drops its long default for a local model)."""
        menu = COMPACT_PROMPT + "\n".join(tool_line(t) for t in tools)
        return base + "\n\n" + menu if base else menu

    def bind(self, chat_model: BaseChatModel, tools: Sequence[Tool], seed: int) -> Runnable:
        request: dict[str, Any] = {"max_tokens": self.max_tokens, "seed": seed}
        if self.stop:
            request["stop"] = list(self.stop)
        if self.grammar is not None:
            request["extra_body"] = {"grammar": self.grammar}
        elif self.constrained and tools:
            # in the raw body: as a client argument, the OpenAI SDK would parse the reply itself
            # and raise on one cut at the token cap, which must reach the environment instead
            request["extra_body"] = constrained_to(action_schema(tools), one_line=self.one_line)
        return RunnableLambda(lambda messages: shown(messages, self)) | chat_model.bind(**request)

    def action(self, reply: AIMessage, serialised: dict[str, Any], retries: list[RetryRecord]) -> Action:
        """The reply's text, as the server sent it, is the action."""
        finish = reply.response_metadata.get("finish_reason")
        model_output = {"message": serialised, "arguments_source": "content", "tool_calls": 0,
                        "finish_reason": finish, "retries": [r.to_dict() for r in retries]}
        meta = {"arguments_source": "content", "retries": len(retries), "finish_reason": finish}
        return Action(self.action_text(reply), usage=usage_of(reply), model_output=model_output, meta=meta)

    def action_text(self, reply: BaseMessage) -> str:
        return content_text(reply.content) if isinstance(reply, AIMessage) else ""

    def describe(self) -> dict[str, Any]:
        return {"profile": "compact", **asdict(self),
                "prompt_sha256": hashlib.sha256(COMPACT_PROMPT.encode()).hexdigest()}


def tool_line(tool: Tool) -> str:
    """``- name(arg: type, ...): description``: the tool menu in few tokens."""
    props = tool.parameters.get("properties") or {}
    args = ", ".join(f"{name}: {spec.get('type', 'any')}" if isinstance(spec, dict) else name
                     for name, spec in props.items())
    return f"- {tool.name}({args}): {tool.description}"


def action_schema(tools: Sequence[Tool]) -> dict[str, Any]:
    """One object per tool, ``{"tool": NAME, "arguments": ITS_SCHEMA}``, in an ``anyOf``.

    A tool's own definitions (``$defs``: a pydantic model's enums and nested models, as
    AgentDojo's workspace tools have) are named by ``$ref: "#/$defs/NAME"`` from the tool's
    schema root; nested here, they move to this schema's root, where those references resolve
    (llama.cpp refuses a grammar with an unresolved one). Two tools defining one name
    differently cannot share the root: refused (ValueError naming both)."""
    defs: dict[str, Any] = {}
    owner: dict[str, str] = {}
    options = []
    for t in tools:
        arguments = {k: v for k, v in t.parameters.items() if k != "$defs"}
        for name, definition in (t.parameters.get("$defs") or {}).items():
            if defs.setdefault(name, definition) != definition:
                raise ValueError(f"tools {owner[name]} and {t.name} define $defs {name!r} differently")
            owner.setdefault(name, t.name)
        options.append({"type": "object", "properties": {"tool": {"const": t.name}, "arguments": arguments},
                        "required": ["tool", "arguments"], "additionalProperties": False})
    return {"anyOf": options, **({"$defs": defs} if defs else {})}


def constrained_to(schema: dict[str, Any], *, one_line: bool = True) -> dict[str, Any]:
    """The request body's part that makes the server's grammar hold the reply to ``schema``: on one
    line through LLGuidance (see ``COMPACT_JSON``), or as a ``response_format``."""
    if not one_line:
        return {"response_format": {"type": "json_schema", "json_schema": {"name": "action", "schema": schema}}}
    return {"grammar": LLGUIDANCE_JSON + json.dumps({**schema, "x-guidance": COMPACT_JSON})}


def constrained_schema(body: dict[str, Any]) -> dict[str, Any] | None:
    """The JSON schema a request body holds its reply to, in either form (``x-guidance`` left out);
    None when it holds it to none."""
    grammar = body.get("grammar")
    if isinstance(grammar, str) and grammar.startswith(LLGUIDANCE_JSON):
        schema = json.loads(grammar.removeprefix(LLGUIDANCE_JSON))
        schema.pop("x-guidance", None)
        return schema
    if isinstance(body.get("response_format"), dict):
        return body["response_format"]["json_schema"]["schema"]
    return None


def shown(messages: Sequence[BaseMessage], profile: LocalProfile) -> list[BaseMessage]:
    """What the model is sent: the system prompt, the first observation and the latest exchanges,
    at most ``window`` of them, long texts cut, consecutive human turns joined (Gemma's template
    wants user and assistant to alternate).

    The window is paged, not slid: when the history outgrows it, the oldest exchanges are dropped
    a page (half the window, rounded up) at a time, so what is shown after the first observation
    starts at the same message for a page of steps. llama.cpp's server reuses a slot's cached
    prompt only up to the first token that differs, and Gemma 3's sliding-window attention rules
    out its shifted reuse (``n_cache_reuse``), so a window slid one exchange a step made it
    re-read every exchange shown at every step once full (about 4.5k of the demo slice's 12k
    prompt tokens). Paged, it re-reads them once a page; the model sees between ``window - page
    + 1`` and ``window`` exchanges (a window of 1 or 2 pages by one: the same as sliding)."""
    head = list(messages[:2])
    tail = list(messages[2:])
    keep = 2 * profile.window + 1  # reply/observation pairs plus the newest observation
    if len(tail) > keep:
        page = 2 * -(-profile.window // 2)  # messages: half the window's exchanges, rounded up
        tail = tail[page * -(-(len(tail) - keep) // page):]
        while tail and not isinstance(tail[0], AIMessage):
            tail = tail[1:]
    out: list[BaseMessage] = []
    for message in head + tail:
        if isinstance(message, HumanMessage):
            text = _cut(content_text(message.content), profile.max_observation_chars)
            if out and isinstance(out[-1], HumanMessage):
                out[-1] = HumanMessage(content_text(out[-1].content) + "\n\n" + text)
                continue
            message = HumanMessage(text)
        out.append(message)
    return out


def _cut(text: str, limit: int) -> str:
    if len(text) <= limit:
        return text
    return text[:limit] + f"\n[... {len(text) - limit} more characters not shown]"


def local_chat_model(model: str, profile: LocalProfile, *, timeout: float, base_url: str | None = None,
                     **kwargs: Any) -> BaseChatModel:
    """LangChain's ``ChatOpenAI`` for ``local:NAME`` (or ``local:/path/file.gguf``), pointed at the
    server this run started for it (or at ``base_url``), sampling as ``profile`` says."""
    from langchain.chat_models import init_chat_model

    served_as = split_model(model)[0].removeprefix(PREFIX).rsplit("/", 1)[-1]
    kwargs.setdefault("api_key", "local")  # llama.cpp's server asks for none; the client wants one
    return init_chat_model(f"openai:{served_as}", base_url=base_url or base_url_for(model), timeout=timeout,
                           max_retries=0, max_tokens=profile.max_tokens, temperature=profile.temperature, **kwargs)
