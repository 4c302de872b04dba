"""A LangChain fake chat model that accepts ``bind_tools``, for unit tests of the chat agent."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from langchain_core.language_models.fake_chat_models import FakeMessagesListChatModel
from langchain_core.messages import BaseMessage
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
