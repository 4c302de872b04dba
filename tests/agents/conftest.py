"""Fixtures for the chat-model agent: the loopback OpenAI-compatible server, stopped when the
test ends. (Helpers live in modules with their own names, not here: every area has a conftest.)"""

from __future__ import annotations

import sys
from collections.abc import Callable, Iterator
from pathlib import Path

import pytest

sys.path.insert(0, str(Path(__file__).parent))

from openai_stub import OpenAIStub, Script  # noqa: E402 - needs the path above


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
