"""LangChain's fake chat models made to accept ``bind_tools``, for unit tests of the chat agent."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from langchain_core.language_models.fake_chat_models import FakeMessagesListChatModel, GenericFakeChatModel
from langchain_core.messages import AIMessage, BaseMessage
from langchain_core.outputs import ChatResult
from pydantic import Field


class ToolCallingFakeModel(FakeMessagesListChatModel):
    """LangChain's fake list model, made to accept ``bind_tools`` (it raises NotImplementedError
    as shipped) and to raise scripted exceptions before answering, for retry tests."""

    bound_tools: list[Any] = Field(default_factory=list)
    seen: list[list[BaseMessage]] = Field(default_factory=list)
    failures: list[BaseException] = Field(default_factory=list)

    def bind_tools(self, tools: Sequence[Any], **kwargs: Any) -> ToolCallingFakeModel:
        self.bound_tools = list(tools)
        return self

    def _generate(self, messages: list[BaseMessage], stop: list[str] | None = None, run_manager: Any = None,
                  **kwargs: Any) -> ChatResult:
        self.seen.append(list(messages))
        if self.failures:
            raise self.failures.pop(0)
        return super()._generate(messages, stop, run_manager, **kwargs)


class ScriptedGenericFake(GenericFakeChatModel):
    """LangChain's GenericFakeChatModel, made to accept ``bind_tools``; ``messages`` may be a
    :class:`Turns`, whose exceptions are raised in their turn (a provider SDK's, say)."""

    def bind_tools(self, tools: Sequence[Any], **kwargs: Any) -> ScriptedGenericFake:
        return self


class Turns:
    """An iterator over replies that raises each exception among them when its turn comes."""

    def __init__(self, *items: AIMessage | BaseException) -> None:
        self.items = list(items)

    def __iter__(self) -> Turns:
        return self

    def __next__(self) -> AIMessage:
        if not self.items:
            raise StopIteration
        item = self.items.pop(0)
        if isinstance(item, BaseException):
            raise item
        return item
