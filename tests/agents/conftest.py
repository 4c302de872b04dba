"""Fixtures for the chat-model agent: a fake LangChain model that accepts ``bind_tools``, and
the loopback OpenAI-compatible server (stopped when the test ends)."""

from __future__ import annotations

import sys
from collections.abc import Callable, Iterator, Sequence
from pathlib import Path
from typing import Any

import pytest
from langchain_core.language_models.fake_chat_models import FakeMessagesListChatModel
from langchain_core.messages import BaseMessage
from langchain_core.outputs import ChatResult
from pydantic import Field

sys.path.insert(0, str(Path(__file__).parent))

from openai_stub import OpenAIStub, Script  # noqa: E402 - needs the path above


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


@pytest.fixture
def openai_stub() -> Iterator[Callable[[Script], OpenAIStub]]:
    """Start a stub with a script; every stub started in the test is stopped afterwards."""
    started: list[OpenAIStub] = []

    def start(script: Script) -> OpenAIStub:
        stub = OpenAIStub(script)
        stub.start()
        started.append(stub)
        return stub

    yield start
    for stub in started:
        stub.stop()
