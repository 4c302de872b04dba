"""What :class:`agentbed.agents.chat.ChatAgent` does to messages and clients beside its conversation:
shared clients, errors of a model that cannot be built, and the serialised form of a reply that
the log and the cache keep (no LangChain run ids, the raw argument text, sorted keys, UTF-8),
and the protocol of a reply format that carries the action other than as a tool call."""

from __future__ import annotations

import json
import os
import re
from collections.abc import Mapping, Sequence
from typing import TYPE_CHECKING, Any, Protocol, cast

from langchain_core.messages import AIMessage, BaseMessage, messages_from_dict

from agentbed.agents.base import Action
from agentbed.agents.generation import unaccepted_request_fields, undeclared
from agentbed.agents.retry import RetryRecord
from agentbed.agents.toolcalls import ModelToolCall, ResponseCapture
from agentbed.errors import UsageError
from agentbed.memo import ProcessMemo
from agentbed.tools import Tool

if TYPE_CHECKING:  # importing it imports LangChain's tracers and langsmith: a second or more
    from langchain_core.language_models import BaseChatModel

_SURROGATE = re.compile("[\ud800-\udfff]")


# Built models by (process, arguments, environment): building one costs ~25 ms, and a run builds an
# agent per episode. Clients are thread-safe and ResponseCapture keeps captures per thread.
_SHARED_MODELS: ProcessMemo[tuple[BaseChatModel, ResponseCapture | None]] = ProcessMemo()


def _memo_key(model: str, timeout: float | None, kwargs: Mapping[str, Any]) -> tuple[Any, ...] | None:
    if not all(isinstance(v, str | int | float | bool | type(None)) for v in kwargs.values()):
        return None  # a client or callback object passed in: build afresh
    return (model, timeout, tuple(sorted(kwargs.items())), hash(frozenset(os.environ.items())))


def _first_error_line(exc: BaseException) -> str:
    errors = getattr(exc, "errors", None)  # pydantic's ValidationError: name the field and the rule
    if callable(errors):
        try:
            return "; ".join(f"{'.'.join(str(p) for p in e.get('loc', ()))}: {e.get('msg')}" for e in errors())
        except Exception:  # noqa: BLE001 - fall back to the text
            pass
    text = str(exc).strip()
    return text.splitlines()[0] if text else type(exc).__name__


def _refuse_undeclared(model: str, chat_model: BaseChatModel, settings: Mapping[str, Any]) -> None:
    unknown = undeclared(chat_model, settings)
    if unknown:
        raise UsageError(f"--model {model!r}: {type(chat_model).__name__} has no generation setting "
                         f"{', '.join(repr(k) for k in unknown)} (-M KEY=VALUE takes the model class's own arguments)")
    refused = unaccepted_request_fields(chat_model, settings)
    if refused:
        raise UsageError(f"--model {model!r}: -M model_kwargs: the provider's client takes no request field "
                         f"{', '.join(repr(k) for k in refused)} (its chat.completions.create arguments)")


def _without_run_id(reply: AIMessage) -> AIMessage:
    """Drop the random id LangChain gives a reply without one: it is not model output, and
    would make identical runs write different bytes."""
    if isinstance(reply.id, str) and reply.id.startswith(("lc_run-", "run-")):
        return reply.model_copy(update={"id": None})
    return reply


def _with_raw_arguments(reply: AIMessage, calls: list[ModelToolCall]) -> AIMessage:
    """Keep the argument text read from the wire in the reply itself (OpenAI's raw form in
    ``additional_kwargs``), so the recorded message alone reproduces the action's bytes."""
    if not any(c.source == "http_response" for c in calls) or "tool_calls" in reply.additional_kwargs:
        return reply
    raw = [{"id": c.id, "type": "function", "function": {"name": c.name, "arguments": c.arguments}} for c in calls]
    return reply.model_copy(update={"additional_kwargs": {**reply.additional_kwargs, "tool_calls": raw}})


def _model_id(model: BaseChatModel) -> str:
    name = getattr(model, "model_name", None) or getattr(model, "model", None)
    return f"{model._llm_type}:{name}" if isinstance(name, str) else model._llm_type


def scrub_surrogates(text: str) -> str:
    """``text`` with lone surrogates (which a provider's ``\\udXXX`` escapes can produce, and which
    UTF-8 cannot encode) replaced by U+FFFD."""
    return _SURROGATE.sub("\ufffd", text)


def _utf8_safe(value: dict[str, Any]) -> dict[str, Any]:
    """A JSON copy of a serialised message that UTF-8 can encode, so the conversation can be sent
    again and logged. Only the action keeps lone surrogates (the log stores it as base64)."""
    text = json.dumps(value, ensure_ascii=False, default=str, sort_keys=True)  # sorted: a live reply and the
    return json.loads(scrub_surrogates(text))  # same reply read back from the cache log the same bytes


def _reply_from_dict(data: dict[str, Any]) -> AIMessage:
    """A model reply back from its serialised form (messages_from_dict is typed for any message;
    what is serialised here is always an AIMessage)."""
    return cast(AIMessage, messages_from_dict([data])[0])


class ReplyFormat(Protocol):
    """How a reply carries the action, when not as a tool call (the local profile's JSON
    content, :class:`agentbed.agents.local.profile.LocalProfile`): the prompt, the request
    and the reading of the reply. The conversation stays the agent's."""

    def system_prompt(self, base: str | None, tools: Sequence[Tool]) -> str: ...

    def bind(self, chat_model: BaseChatModel, tools: Sequence[Tool], seed: int) -> Any: ...

    def action(self, reply: AIMessage, serialised: dict[str, Any], retries: list[RetryRecord]) -> Action: ...

    def action_text(self, reply: BaseMessage) -> str: ...

    def describe(self) -> dict[str, Any]: ...
