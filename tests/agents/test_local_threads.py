"""How many threads a local model's server gets (unit test: no server starts)."""

import os

import pytest

from agentbed.agents.local.server import THREADS_ENV, ServerSettings, server_threads
from agentbed.errors import UsageError


def test_threads_come_from_the_settings_then_the_environment_then_the_cores(monkeypatch):
    monkeypatch.delenv(THREADS_ENV, raising=False)
    assert server_threads(ServerSettings()) == (os.cpu_count() or 1)
    monkeypatch.setenv(THREADS_ENV, "1")
    assert server_threads(ServerSettings()) == 1
    assert server_threads(ServerSettings(threads=3)) == 3  # an explicit size wins


@pytest.mark.parametrize("bad", ["0", "two", "-1", "1.5"])
def test_a_bad_thread_count_is_one_line_naming_the_variable(monkeypatch, bad):
    monkeypatch.setenv(THREADS_ENV, bad)
    with pytest.raises(UsageError, match=THREADS_ENV):
        server_threads(ServerSettings())
